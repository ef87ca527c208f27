import { and, asc, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { sshKeys } from '../../db/schema/ssh-key.ts';
import { isUniqueViolation } from '../user/user.repository.ts';

export type SshKeyRow = typeof sshKeys.$inferSelect;
export type NewSshKey = typeof sshKeys.$inferInsert;

export function createSshKeyRepository(db: DbOrTx) {
  return {
    /** Serialises key changes of one user inside the caller's transaction (the per-user cap). */
    async lockUser(userId: number): Promise<void> {
      await db.execute(sql`select pg_advisory_xact_lock(hashtext('ssh_keys:user'), ${userId}::int)`);
    },
    async listByUser(tenantId: number, userId: number): Promise<SshKeyRow[]> {
      return db
        .select()
        .from(sshKeys)
        .where(and(eq(sshKeys.tenantId, tenantId), eq(sshKeys.userId, userId)))
        .orderBy(asc(sshKeys.createdAt), asc(sshKeys.id));
    },
    async countByUser(userId: number): Promise<number> {
      const rows = await db.select({ n: sql<number>`count(*)::int` }).from(sshKeys).where(eq(sshKeys.userId, userId));
      return rows[0]?.n ?? 0;
    },
    async findByFingerprint(userId: number, fingerprint: string): Promise<SshKeyRow | undefined> {
      const rows = await db
        .select()
        .from(sshKeys)
        .where(and(eq(sshKeys.userId, userId), eq(sshKeys.fingerprint, fingerprint)))
        .limit(1);
      return rows[0];
    },
    /** The new row, or null when the user already has a key with this fingerprint. */
    async insert(values: NewSshKey): Promise<SshKeyRow | null> {
      try {
        const [row] = await db.insert(sshKeys).values(values).returning();
        return row ?? null;
      } catch (err) {
        if (isUniqueViolation(err)) return null;
        throw err;
      }
    },
    /** Deletes the user's own key; false when there is no such key of theirs. */
    async deleteOwn(tenantId: number, userId: number, id: number): Promise<boolean> {
      const rows = await db
        .delete(sshKeys)
        .where(and(eq(sshKeys.id, id), eq(sshKeys.tenantId, tenantId), eq(sshKeys.userId, userId)))
        .returning({ id: sshKeys.id });
      return rows.length > 0;
    },
  };
}
export type SshKeyRepository = ReturnType<typeof createSshKeyRepository>;
