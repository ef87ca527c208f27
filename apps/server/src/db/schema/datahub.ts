import { bigint, index, integer, pgTable, smallint, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { tenants } from './tenant.ts';
import { users } from './user.ts';

export const datacenters = pgTable(
  'datacenters',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    tenantId: integer('tenant_id')
      .notNull()
      .references(() => tenants.id),
    name: text('name').notNull(),
    region: text('region').notNull().default(''),
    sort: integer('sort').notNull().default(0),
  },
  (t) => [index('datacenters_tenant').on(t.tenantId)],
);

export const datahubs = pgTable(
  'datahubs',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    tenantId: integer('tenant_id').notNull(),
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => users.id),
    datacenterId: integer('datacenter_id')
      .notNull()
      .references(() => datacenters.id),
    name: text('name').notNull(),
    status: smallint('status').notNull().default(0),
    storagePath: text('storage_path'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    activatedAt: timestamp('activated_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('datahubs_user_dc').on(t.userId, t.datacenterId)],
);
