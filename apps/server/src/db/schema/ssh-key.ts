import { bigint, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { users } from './user.ts';

/** A user's SSH public keys: any of them logs in to any of the user's running instances. */
export const sshKeys = pgTable(
  'ssh_keys',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    tenantId: integer('tenant_id').notNull(),
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    type: text('type').notNull(),
    /** The key line as normalised: "<type> <base64>" (no comment). */
    publicKey: text('public_key').notNull(),
    /** "SHA256:<base64 without padding>" */
    fingerprint: text('fingerprint').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('ssh_keys_user_fingerprint').on(t.userId, t.fingerprint)],
);
