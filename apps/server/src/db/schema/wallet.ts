import { sql } from 'drizzle-orm';
import { paymentMethods, paymentStatuses } from '@suanli/contract/payment';
import { ledgerKinds } from '@suanli/contract/wallet';

export type { LedgerKind } from '@suanli/contract/wallet';
import { bigint, boolean, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './user.ts';


/** A user's balance: the sum of their ledger entries, changed only together with one (ledger.repository.ts). */
export const wallets = pgTable('wallets', {
  userId: bigint('user_id', { mode: 'number' })
    .primaryKey()
    .references(() => users.id),
  tenantId: integer('tenant_id').notNull(),
  balance: bigint('balance', { mode: 'number' }).notNull().default(0),
  /**
   * Money held by large-model calls in flight (llm_holds, issue #9): part of the balance that is
   * spoken for. A debit that may not overdraw must leave balance − held ≥ 0.
   */
  held: bigint('held', { mode: 'number' }).notNull().default(0),
  /** Hash of the user's last ledger entry (null before the first): the next posting chains off it in the same statement. */
  lastHash: text('last_hash'),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * The append-only ledger: every change of a balance is one row here, written in the same
 * transaction that changes `wallets.balance`. Sum of a user's amounts = their balance.
 */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    tenantId: integer('tenant_id').notNull(),
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => users.id),
    kind: text('kind', { enum: ledgerKinds }).notNull(),
    /** Signed, in units of 0.0001 yuan: income positive, expense negative. */
    amount: bigint('amount', { mode: 'number' }).notNull(),
    balanceAfter: bigint('balance_after', { mode: 'number' }).notNull(),
    /** The business reference it belongs to (`payment:<id>`, `order:<id>`…); one entry per kind and ref. */
    ref: text('ref').notNull(),
    memo: text('memo').notNull().default(''),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /**
     * Hex SHA-256 chained over the same user's previous entry: hash(previous hash, kind, amount,
     * ref, balance_after, created_at), computed in SQL by the posting statement (ledger.repository.ts
     * `entryHash`). An edited, deleted or inserted row breaks the chain; `ledger:check` names it.
     */
    hash: text('hash').notNull(),
  },
  (t) => [uniqueIndex('ledger_user_kind_ref').on(t.userId, t.kind, t.ref), index('ledger_user_time').on(t.userId, t.createdAt)],
);

/** A recharge payment at a gateway; its id is the out_trade_no the gateway knows it by. */
export const payments = pgTable(
  'payments',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    tenantId: integer('tenant_id').notNull(),
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => users.id),
    method: text('method', { enum: paymentMethods }).notNull(),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    status: text('status', { enum: paymentStatuses }).notNull().default('pending'),
    payUrl: text('pay_url'),
    qrCode: text('qr_code'),
    gatewayTradeNo: text('gateway_trade_no'),
    /** Paid after it had expired: credited (the money was taken) and flagged for the operator. */
    flagged: boolean('flagged').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    paidAt: timestamp('paid_at', { withTimezone: true }),
    closedAt: timestamp('closed_at', { withTimezone: true }),
  },
  (t) => [index('payments_user_time').on(t.userId, t.createdAt), index('payments_open').on(t.status, t.expiresAt), index('payments_flagged').on(t.tenantId, t.paidAt).where(sql`${t.flagged}`)],
);

/** Every notification a gateway sent, verified or not: the audit trail of money arriving. */
export const paymentNotifications = pgTable(
  'payment_notifications',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    method: text('method', { enum: paymentMethods }).notNull(),
    paymentId: uuid('payment_id'),
    verified: boolean('verified').notNull(),
    outcome: text('outcome').notNull(),
    headers: jsonb('headers').$type<Record<string, string | undefined>>().notNull(),
    /** The body as received; for an unverified one only its first NOTIFY_KEPT_BYTES (anyone can post here). */
    body: text('body').notNull(),
    /** sha256 (hex) of the whole body as received, and its size in bytes: what a truncated body still proves. */
    bodySha256: text('body_sha256'),
    bodyBytes: integer('body_bytes'),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('payment_notifications_payment').on(t.paymentId)],
);
