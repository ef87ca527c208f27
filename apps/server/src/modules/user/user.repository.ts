import { and, desc, eq, gt, gte, isNull, ne, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { loginThrottle, sessions, smsCodes, users } from '../../db/schema/user.ts';
import { createWalletRepository } from '../wallet/wallet.repository.ts';
import type { SmsPurpose } from '@suanli/contract/user';

export type UserRow = typeof users.$inferSelect;
export type SessionRow = typeof sessions.$inferSelect;

export function createUserRepository(db: DbOrTx) {
  return {
    /**
     * Locks a user's row (inside a transaction): serialises one user's capped creations — data
     * copies, private images, chat conversations — so a count checked under it can't be passed by
     * two requests at once.
     */
    async lockRow(userId: number): Promise<void> {
      await db.select({ id: users.id }).from(users).where(eq(users.id, userId)).for('update');
    },
    async findByPhone(tenantId: number, phone: string): Promise<UserRow | undefined> {
      const rows = await db.select().from(users).where(and(eq(users.tenantId, tenantId), eq(users.phone, phone))).limit(1);
      return rows[0];
    },
    async findById(tenantId: number, id: number): Promise<UserRow | undefined> {
      const rows = await db.select().from(users).where(and(eq(users.tenantId, tenantId), eq(users.id, id))).limit(1);
      return rows[0];
    },
    /** Inserts the user and its zero balance row; returns undefined when the phone is taken. */
    async insert(values: { tenantId: number; phone: string; userName: string; passwordHash: string; role?: 'user' | 'operator' }) {
      const [row] = await db.insert(users).values(values).onConflictDoNothing().returning();
      if (row) await createWalletRepository(db).open(row.id, row.tenantId);
      return row;
    },
    async updatePassword(userId: number, passwordHash: string): Promise<void> {
      await db.update(users).set({ passwordHash, updatedAt: new Date() }).where(eq(users.id, userId));
    },
    /** False when another user of the tenant has the phone already. */
    async updatePhone(user: UserRow, phone: string): Promise<boolean> {
      const rows = await db
        .update(users)
        .set({ phone, updatedAt: new Date() })
        .where(
          and(
            eq(users.id, user.id),
            sql`not exists (select 1 from ${users} u2 where u2.tenant_id = ${user.tenantId} and u2.phone = ${phone} and u2.id <> ${user.id})`,
          ),
        )
        .returning({ id: users.id })
        .catch((err: unknown) => {
          if (isUniqueViolation(err)) return [];
          throw err;
        });
      return rows.length === 1;
    },

    // sessions
    async insertSession(values: typeof sessions.$inferInsert): Promise<SessionRow> {
      const [row] = await db.insert(sessions).values(values).returning();
      if (!row) throw new Error('session insert returned nothing');
      return row;
    },
    async findLiveSession(tokenHash: string, now: Date): Promise<SessionRow | undefined> {
      const rows = await db
        .select()
        .from(sessions)
        .where(and(eq(sessions.tokenHash, tokenHash), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))
        .limit(1);
      return rows[0];
    },
    async touchSession(id: string, now: Date, expiresAt: Date): Promise<void> {
      await db.update(sessions).set({ lastSeenAt: now, expiresAt }).where(eq(sessions.id, id));
    },
    async listLiveSessions(userId: number, now: Date): Promise<SessionRow[]> {
      return db
        .select()
        .from(sessions)
        .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))
        .orderBy(desc(sessions.lastSeenAt));
    },
    async revokeSession(userId: number, id: string, now: Date): Promise<boolean> {
      const rows = await db
        .update(sessions)
        .set({ revokedAt: now })
        .where(and(eq(sessions.id, id), eq(sessions.userId, userId), isNull(sessions.revokedAt)))
        .returning({ id: sessions.id });
      return rows.length > 0;
    },
    /** Revokes every live session of the user but `keepId` (all of them without one). */
    async revokeSessionsExcept(userId: number, keepId: string | undefined, now: Date): Promise<number> {
      const rows = await db
        .update(sessions)
        .set({ revokedAt: now })
        .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt), keepId ? ne(sessions.id, keepId) : undefined))
        .returning({ id: sessions.id });
      return rows.length;
    },

    // SMS codes
    /** Serialises code sends and checks of one phone across connections and replicas. */
    async lockPhone(tenantId: number, phone: string): Promise<void> {
      await db.execute(sql`select pg_advisory_xact_lock(${tenantId}, hashtext(${phone}))`);
    },
    async countCodesSince(tenantId: number, phone: string, since: Date): Promise<{ count: number; last: Date | null }> {
      const rows = await db
        .select({ count: sql<number>`count(*)::int`, last: sql<string | null>`max(${smsCodes.createdAt})` })
        .from(smsCodes)
        .where(and(eq(smsCodes.tenantId, tenantId), eq(smsCodes.phone, phone), gte(smsCodes.createdAt, since)));
      const r = rows[0];
      return { count: r?.count ?? 0, last: r?.last ? new Date(r.last) : null };
    },
    async insertCode(values: typeof smsCodes.$inferInsert): Promise<void> {
      await db.insert(smsCodes).values(values);
    },
    async latestOpenCode(tenantId: number, phone: string, purpose: SmsPurpose, now: Date) {
      const rows = await db
        .select()
        .from(smsCodes)
        .where(
          and(
            eq(smsCodes.tenantId, tenantId),
            eq(smsCodes.phone, phone),
            eq(smsCodes.purpose, purpose),
            isNull(smsCodes.consumedAt),
            gt(smsCodes.expiresAt, now),
          ),
        )
        .orderBy(desc(smsCodes.createdAt))
        .limit(1);
      return rows[0];
    },
    /** Spends a code once: false when a concurrent request spent it first. */
    async consumeCode(id: number, now: Date): Promise<boolean> {
      const rows = await db
        .update(smsCodes)
        .set({ consumedAt: now })
        .where(and(eq(smsCodes.id, id), isNull(smsCodes.consumedAt)))
        .returning({ id: smsCodes.id });
      return rows.length === 1;
    },
    async failCodeAttempt(id: number, maxAttempts: number, now: Date): Promise<void> {
      await db
        .update(smsCodes)
        .set({
          attempts: sql`${smsCodes.attempts} + 1`,
          consumedAt: sql`case when ${smsCodes.attempts} + 1 >= ${maxAttempts} then ${now.toISOString()}::timestamptz else null end`,
        })
        .where(eq(smsCodes.id, id));
    },

    // sign-in throttle
    async throttleOf(tenantId: number, phone: string) {
      const rows = await db
        .select()
        .from(loginThrottle)
        .where(and(eq(loginThrottle.tenantId, tenantId), eq(loginThrottle.phone, phone)))
        .limit(1);
      return rows[0];
    },
    /**
     * Reserves one password check before the password is verified: one statement increments the
     * count (starting afresh once a lock has run out), so concurrent sign-ins can't all read the
     * same count. No reservation (undefined) while the phone is locked, once `lockAfter` checks
     * are reserved, or past `captchaAfter` without a solved captcha. The returned count includes
     * this check; a success clears it, a failure keeps it.
     */
    async reserveAttempt(tenantId: number, phone: string, opts: { captchaAfter: number; lockAfter: number; solvedCaptcha: boolean; now: Date }) {
      const now = sql`${opts.now.toISOString()}::timestamptz`;
      const expired = sql`(${loginThrottle.lockedUntil} is not null and ${loginThrottle.lockedUntil} <= ${now})`;
      const [row] = await db
        .insert(loginThrottle)
        .values({ tenantId, phone, failures: 1, updatedAt: opts.now })
        .onConflictDoUpdate({
          target: [loginThrottle.tenantId, loginThrottle.phone],
          set: {
            failures: sql`case when ${expired} then 1 else ${loginThrottle.failures} + 1 end`,
            lockedUntil: sql`case when ${expired} then null else ${loginThrottle.lockedUntil} end`,
            updatedAt: opts.now,
          },
          setWhere: sql`${expired} or (${loginThrottle.lockedUntil} is null and ${loginThrottle.failures} < ${opts.lockAfter} and (${loginThrottle.failures} < ${opts.captchaAfter} or ${sql.raw(opts.solvedCaptcha ? 'true' : 'false')}))`,
        })
        .returning({ failures: loginThrottle.failures });
      return row?.failures;
    },
    /** After a failed check: locks the phone once `lockAfter` checks have failed. */
    async lockIfExhausted(tenantId: number, phone: string, lockAfter: number, lockUntil: Date): Promise<boolean> {
      const rows = await db
        .update(loginThrottle)
        .set({ lockedUntil: lockUntil })
        .where(and(eq(loginThrottle.tenantId, tenantId), eq(loginThrottle.phone, phone), gte(loginThrottle.failures, lockAfter), isNull(loginThrottle.lockedUntil)))
        .returning({ phone: loginThrottle.phone });
      return rows.length > 0;
    },
    /**
     * After a right password: clears the count unless the phone got locked meanwhile (by checks
     * that failed while this one ran). Takes the row lock, so call it in the transaction that
     * issues the session. True when the sign-in may go ahead.
     */
    async releaseUnlessLocked(tenantId: number, phone: string, now: Date): Promise<boolean> {
      const rows = await db
        .select({ lockedUntil: loginThrottle.lockedUntil })
        .from(loginThrottle)
        .where(and(eq(loginThrottle.tenantId, tenantId), eq(loginThrottle.phone, phone)))
        .for('update');
      const lockedUntil = rows[0]?.lockedUntil;
      if (lockedUntil && lockedUntil > now) return false;
      await db.delete(loginThrottle).where(and(eq(loginThrottle.tenantId, tenantId), eq(loginThrottle.phone, phone)));
      return true;
    },
    async clearThrottle(tenantId: number, phone: string): Promise<void> {
      await db.delete(loginThrottle).where(and(eq(loginThrottle.tenantId, tenantId), eq(loginThrottle.phone, phone)));
    },

    // old-password checks of signed-in users (password and phone changes)
    /** Reserves one old-password check, like reserveAttempt; undefined while locked or exhausted. */
    async reservePasswordCheck(userId: number, lockAfter: number, now: Date): Promise<number | undefined> {
      const at = sql`${now.toISOString()}::timestamptz`;
      const expired = sql`(${users.passwordLockedUntil} is not null and ${users.passwordLockedUntil} <= ${at})`;
      const [row] = await db
        .update(users)
        .set({
          passwordFailures: sql`case when ${expired} then 1 else ${users.passwordFailures} + 1 end`,
          passwordLockedUntil: sql`case when ${expired} then null else ${users.passwordLockedUntil} end`,
        })
        .where(and(eq(users.id, userId), sql`(${expired} or (${users.passwordLockedUntil} is null and ${users.passwordFailures} < ${lockAfter}))`))
        .returning({ failures: users.passwordFailures });
      return row?.failures;
    },
    async passwordLockOf(userId: number): Promise<Date | null> {
      const rows = await db.select({ until: users.passwordLockedUntil }).from(users).where(eq(users.id, userId)).limit(1);
      return rows[0]?.until ?? null;
    },
    async lockPasswordChecksIfExhausted(userId: number, lockAfter: number, lockUntil: Date): Promise<boolean> {
      const rows = await db
        .update(users)
        .set({ passwordLockedUntil: lockUntil })
        .where(and(eq(users.id, userId), gte(users.passwordFailures, lockAfter), isNull(users.passwordLockedUntil)))
        .returning({ id: users.id });
      return rows.length > 0;
    },
    async clearPasswordChecks(userId: number): Promise<void> {
      await db.update(users).set({ passwordFailures: 0, passwordLockedUntil: null }).where(eq(users.id, userId));
    },
  };
}
export type UserRepository = ReturnType<typeof createUserRepository>;

export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } };
  return e?.code === '23505' || e?.cause?.code === '23505';
}
