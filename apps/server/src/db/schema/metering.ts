import { bigint, index, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { chargeTypes } from '@suanli/contract/order';
import { users } from './user.ts';
import { instances } from './compute.ts';

/**
 * One row per settled charge: a pay-as-you-go minute's settlement or a prepaid order. Written in
 * the same transaction as its ledger entry.
 */
export const bills = pgTable(
  'bills',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    tenantId: integer('tenant_id').notNull(),
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => users.id),
    instanceId: text('instance_id')
      .notNull()
      .references(() => instances.id),
    chargeType: text('charge_type', { enum: chargeTypes }).notNull(),
    orderId: text('order_id'),
    periodStart: timestamp('period_start', { withTimezone: true }).notNull(),
    periodEnd: timestamp('period_end', { withTimezone: true }).notNull(),
    seconds: integer('seconds').notNull().default(0),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('bills_user_time').on(t.userId, t.periodStart), uniqueIndex('bills_instance_period').on(t.instanceId, t.periodStart)],
);
