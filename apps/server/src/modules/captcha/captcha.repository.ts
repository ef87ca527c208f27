import { and, eq, gt, isNull, lt } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { captchaChallenges } from '../../db/schema/captcha.ts';
import type { CaptchaType } from '@suanli/contract/tenant';

export type CaptchaRow = typeof captchaChallenges.$inferSelect;

export function createCaptchaRepository(db: DbOrTx) {
  return {
    async insert(row: { tenantId: number; type: CaptchaType; answer: unknown; createdAt: Date; expiresAt: Date }): Promise<string> {
      const [inserted] = await db.insert(captchaChallenges).values(row).returning({ id: captchaChallenges.id });
      if (!inserted) throw new Error('captcha insert returned no row');
      return inserted.id;
    },

    /**
     * Marks the challenge checked and returns it, once: a second call for the same id, or a call
     * from another tenant, finds nothing. The UPDATE is the lock, so two racing checks can't both win.
     */
    async claimForCheck(tenantId: number, id: string, now: Date): Promise<Pick<CaptchaRow, 'id' | 'type' | 'answer' | 'createdAt' | 'expiresAt'> | undefined> {
      const [row] = await db
        .update(captchaChallenges)
        .set({ checkedAt: now })
        .where(and(eq(captchaChallenges.id, id), eq(captchaChallenges.tenantId, tenantId), isNull(captchaChallenges.checkedAt)))
        .returning({ id: captchaChallenges.id, type: captchaChallenges.type, answer: captchaChallenges.answer, createdAt: captchaChallenges.createdAt, expiresAt: captchaChallenges.expiresAt });
      return row;
    },

    /** Stores the hash of the ticket for a solved challenge; from now on expiresAt bounds the ticket. */
    async grantTicket(id: string, ticketHash: string, expiresAt: Date): Promise<void> {
      await db.update(captchaChallenges).set({ ticketHash, expiresAt }).where(eq(captchaChallenges.id, id));
    },

    /** Removes challenges (and their tickets) that expired before `cutoff`. */
    async deleteExpiredBefore(cutoff: Date): Promise<number> {
      const rows = await db.delete(captchaChallenges).where(lt(captchaChallenges.expiresAt, cutoff)).returning({ id: captchaChallenges.id });
      return rows.length;
    },

    /** Spends a ticket once; false when unknown, foreign, expired or spent. */
    async spendTicket(tenantId: number, ticketHash: string, now: Date): Promise<boolean> {
      const rows = await db
        .update(captchaChallenges)
        .set({ ticketUsedAt: now })
        .where(
          and(
            eq(captchaChallenges.ticketHash, ticketHash),
            eq(captchaChallenges.tenantId, tenantId),
            isNull(captchaChallenges.ticketUsedAt),
            gt(captchaChallenges.expiresAt, now),
          ),
        )
        .returning({ id: captchaChallenges.id });
      return rows.length === 1;
    },
  };
}
export type CaptchaRepository = ReturnType<typeof createCaptchaRepository>;
