import { bigint, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';

export const questions = pgTable('questions', {
  id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
  tenantId: integer('tenant_id').notNull(),
  userId: bigint('user_id', { mode: 'number' }),
  name: text('name').notNull(),
  phone: text('phone').notNull(),
  company: text('company'),
  email: text('email'),
  gpuType: text('gpu_type'),
  gpuCount: integer('gpu_count'),
  content: text('content').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});
