import { index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { captchaTypes } from '@suanli/contract/tenant';
import { sql } from 'drizzle-orm';

/** A captcha challenge; the answer never leaves the server. */
export const captchaChallenges = pgTable(
  'captcha_challenges',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    tenantId: integer('tenant_id').notNull(),
    type: text('type', { enum: captchaTypes }).notNull(),
    answer: jsonb('answer').$type<unknown>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    /** Set on the first check, right or wrong: one check per challenge. */
    checkedAt: timestamp('checked_at', { withTimezone: true }),
    /** Hash of the ticket handed out on a right answer; spent once. */
    ticketHash: text('ticket_hash').unique(),
    ticketUsedAt: timestamp('ticket_used_at', { withTimezone: true }),
  },
  (t) => [index('captcha_expires').on(t.expiresAt)],
);
