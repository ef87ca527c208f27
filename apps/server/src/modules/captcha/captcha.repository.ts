import { and, eq, gt, isNull } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { captchaChallenges } from '../../db/schema/captcha.ts';

export type CaptchaRow = typeof captchaChallenges.$inferSelect;

export function createCaptchaRepository(db: DbOrTx) {
  return {
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
