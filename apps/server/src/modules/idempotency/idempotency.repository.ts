import crypto from 'node:crypto';
import { and, eq, lt } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { idempotencyKeys } from '../../db/schema/idempotency.ts';

export type IdempotencyRow = typeof idempotencyKeys.$inferSelect;

/** What identifies one use of a key: a key of user A never answers for user B or another tenant. */
export type IdempotencyScope = { tenantId: number; scope: string; method: string; route: string; keyHash: string };

export type Reservation = { id: number; owner: string };

export type ReserveResult = { reserved: Reservation } | { existing: IdempotencyRow };

export type StoredAnswer = { statusCode: number; contentType: string | null; response: string };

const ATTEMPTS = 3;

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } };
  return e?.code === '23505' || e?.cause?.code === '23505';
}

export function createIdempotencyRepository(db: DbOrTx) {
  const whereScope = (s: IdempotencyScope) =>
    and(
      eq(idempotencyKeys.tenantId, s.tenantId),
      eq(idempotencyKeys.scope, s.scope),
      eq(idempotencyKeys.method, s.method),
      eq(idempotencyKeys.route, s.route),
      eq(idempotencyKeys.keyHash, s.keyHash),
    );

  /** INSERT ... ON CONFLICT DO NOTHING: of concurrent inserts of one scope exactly one gets the row. */
  async function insert(s: IdempotencyScope, fingerprint: string, now: Date, expiresAt: Date, leaseUntil: Date): Promise<Reservation | undefined> {
    const owner = crypto.randomUUID();
    try {
      const [row] = await db
        .insert(idempotencyKeys)
        .values({ ...s, fingerprint, owner, status: 'in_progress', createdAt: now, leaseUntil, expiresAt })
        .onConflictDoNothing({ target: [idempotencyKeys.tenantId, idempotencyKeys.scope, idempotencyKeys.method, idempotencyKeys.route, idempotencyKeys.keyHash] })
        .returning({ id: idempotencyKeys.id });
      return row ? { id: row.id, owner } : undefined;
    } catch (err) {
      if (isUniqueViolation(err)) return undefined;
      throw err;
    }
  }

  /** Compare-and-swap on the owner token: of concurrent takeovers of a dead row exactly one wins. */
  async function takeOver(row: IdempotencyRow, fingerprint: string, now: Date, expiresAt: Date, leaseUntil: Date): Promise<Reservation | undefined> {
    const owner = crypto.randomUUID();
    const [won] = await db
      .update(idempotencyKeys)
      .set({ fingerprint, owner, status: 'in_progress', statusCode: null, contentType: null, response: null, createdAt: now, leaseUntil, completedAt: null, expiresAt })
      .where(and(eq(idempotencyKeys.id, row.id), eq(idempotencyKeys.owner, row.owner)))
      .returning({ id: idempotencyKeys.id });
    return won ? { id: won.id, owner } : undefined;
  }

  return {
    /**
     * Reserves the key for this request (leased until `leaseUntil`), or returns the row that holds
     * it. A row past its expiry, or left 'in_progress' past its lease (its process died
     * mid-request; rows without a lease: created before `staleBefore`), is taken over.
     */
    async reserve(
      s: IdempotencyScope,
      fingerprint: string,
      opts: { now: Date; expiresAt: Date; leaseUntil: Date; staleBefore: Date },
    ): Promise<ReserveResult | undefined> {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const reserved = await insert(s, fingerprint, opts.now, opts.expiresAt, opts.leaseUntil);
        if (reserved) return { reserved };
        const [row] = await db.select().from(idempotencyKeys).where(whereScope(s)).limit(1);
        if (!row) continue; // released between our insert and our read: try again
        const lapsed = row.leaseUntil ? row.leaseUntil < opts.now : row.createdAt < opts.staleBefore;
        const dead = row.expiresAt <= opts.now || (row.status === 'in_progress' && lapsed);
        if (!dead) return { existing: row };
        const taken = await takeOver(row, fingerprint, opts.now, opts.expiresAt, opts.leaseUntil);
        if (taken) return { reserved: taken };
      }
      return undefined; // lost every race: the caller answers "in progress"
    },

    /** Extends the lease of a reservation still ours and in progress; false when it is not. */
    async renew(r: Reservation, leaseUntil: Date): Promise<boolean> {
      const rows = await db
        .update(idempotencyKeys)
        .set({ leaseUntil })
        .where(and(eq(idempotencyKeys.id, r.id), eq(idempotencyKeys.owner, r.owner), eq(idempotencyKeys.status, 'in_progress')))
        .returning({ id: idempotencyKeys.id });
      return rows.length > 0;
    },

    /** Stores the answer; does nothing if the reservation is no longer ours. */
    async complete(r: Reservation, answer: StoredAnswer, now: Date): Promise<boolean> {
      const rows = await db
        .update(idempotencyKeys)
        .set({ status: 'completed', statusCode: answer.statusCode, contentType: answer.contentType, response: answer.response, completedAt: now })
        .where(and(eq(idempotencyKeys.id, r.id), eq(idempotencyKeys.owner, r.owner), eq(idempotencyKeys.status, 'in_progress')))
        .returning({ id: idempotencyKeys.id });
      return rows.length > 0;
    },

    /** Frees the key (a 5xx or a crash) so the client may try again with it. */
    async release(r: Reservation): Promise<void> {
      await db
        .delete(idempotencyKeys)
        .where(and(eq(idempotencyKeys.id, r.id), eq(idempotencyKeys.owner, r.owner), eq(idempotencyKeys.status, 'in_progress')));
    },

    /** Deletes rows past their expiry; returns how many. */
    async deleteExpired(now: Date): Promise<number> {
      const rows = await db.delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, now)).returning({ id: idempotencyKeys.id });
      return rows.length;
    },
  };
}
export type IdempotencyRepository = ReturnType<typeof createIdempotencyRepository>;
