import { bigint, index, integer, pgTable, smallint, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/**
 * DESIGN §4 Idempotency-Key reservations and the answers they replay for 24 h.
 *
 * Neither the key nor the answer is kept in clear: `key_hash` is sha256(key), the fingerprint is
 * an HMAC keyed by the key, and `response` is sealed with a key derived from it (answers carry
 * session tokens, which the sessions table itself only keeps hashed).
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    tenantId: integer('tenant_id').notNull(),
    /** `user:<id>` when the route authenticated the request, else `anonymous`. */
    scope: text('scope').notNull(),
    method: text('method').notNull(),
    /** The route's URL pattern, e.g. `/api/v1/orders/:id/pay`. */
    route: text('route').notNull(),
    keyHash: text('key_hash').notNull(),
    /** HMAC-SHA256(key, canonical JSON of params, query and parsed body). */
    fingerprint: text('fingerprint').notNull(),
    status: text('status', { enum: ['in_progress', 'completed'] }).notNull().default('in_progress'),
    /** Token of the request holding the reservation: completion and release are conditional on it. */
    owner: uuid('owner').notNull(),
    statusCode: smallint('status_code'),
    contentType: text('content_type'),
    /** The plain (not SPEC §5-encrypted) answer, sealed with AES-256-GCM. */
    response: text('response'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    /**
     * While 'in_progress': the holder's lease, renewed every few seconds by the live request. A
     * reservation past it belongs to a process that died and is taken over (null on rows written
     * before leases: those fall back to created_at + 5 minutes).
     */
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [uniqueIndex('idempotency_keys_scope').on(t.tenantId, t.scope, t.method, t.route, t.keyHash), index('idempotency_keys_expires').on(t.expiresAt)],
);
