import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { chargeTypes } from '@suanli/contract/order';
import { users } from './user.ts';
import { instances } from './compute.ts';

/**
 * One row per settled charge: a pay-as-you-go minute's settlement or a prepaid order. Written in
 * the same transaction as its ledger entry. No foreign keys: a settlement writes up to one row per
 * running instance each minute (10,000 in one statement), and two key checks per row were a third
 * of the tick; the rows come from instance_meters (whose keys hold) or the order payment, and
 * users and instances are never deleted.
 */
export const bills = pgTable(
  'bills',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    tenantId: integer('tenant_id').notNull(),
    userId: bigint('user_id', { mode: 'number' }).notNull(),
    instanceId: text('instance_id').notNull(),
    chargeType: text('charge_type', { enum: chargeTypes }).notNull(),
    orderId: text('order_id'),
    periodStart: timestamp('period_start', { withTimezone: true }).notNull(),
    periodEnd: timestamp('period_end', { withTimezone: true }).notNull(),
    seconds: integer('seconds').notNull().default(0),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /**
     * Issue #10, prepaid bills: what was refunded of this bill when the instance turned
     * pay-as-you-go (the unused part of its period, pro rata to the second), and when. A bill is
     * refunded at most once (refunded_at set in the refunding transaction).
     */
    refundedAmount: bigint('refunded_amount', { mode: 'number' }).notNull().default(0),
    refundedAt: timestamp('refunded_at', { withTimezone: true }),
  },
  (t) => [index('bills_user_time').on(t.userId, t.periodStart), uniqueIndex('bills_instance_period').on(t.instanceId, t.periodStart)],
);

/**
 * The meter of one pay-as-you-go instance (docs/metering.md). Running time accrues in
 * milliseconds; what is owed is always computed from the cumulative total,
 * owed(ms) = floor(ms × hourly / 3,600,000), and a settlement posts owed(new total) − owed(billed
 * total), so the sum charged never depends on how the time was split into ticks.
 * - `accrued_ms`: running time counted so far (finished runs, plus the settled part of the current run).
 * - `billed_ms`: the part of it already settled into the ledger and a bill row.
 * - `running_since`: start of the current run (null while not running).
 * - `settled_until`: end of the last settled period; the next bill starts there (unique per instance).
 * A rate change (spec change) settles what is pending at the old rate first and starts the counters afresh.
 */
export const instanceMeters = pgTable(
  'instance_meters',
  {
    instanceId: text('instance_id')
      .primaryKey()
      .references(() => instances.id),
    tenantId: integer('tenant_id').notNull(),
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => users.id),
    /** Units of 0.0001 yuan per hour. */
    hourly: bigint('hourly', { mode: 'number' }).notNull(),
    runningSince: timestamp('running_since', { withTimezone: true }),
    lastStoppedAt: timestamp('last_stopped_at', { withTimezone: true }),
    settledUntil: timestamp('settled_until', { withTimezone: true }).notNull(),
    accruedMs: bigint('accrued_ms', { mode: 'number' }).notNull().default(0),
    billedMs: bigint('billed_ms', { mode: 'number' }).notNull().default(0),
    /** Everything this meter has charged, over all rates (units). */
    chargedTotal: bigint('charged_total', { mode: 'number' }).notNull().default(0),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  // No index on settled_until: it changes at every tick, and an index on it would make every
  // meter update a non-HOT one; the settlement reads all meters in one pass anyway.
  (t) => [
    index('instance_meters_user').on(t.userId),
    check('instance_meters_ms', sql`${t.billedMs} >= 0 and ${t.billedMs} <= ${t.accruedMs}`),
  ],
);
