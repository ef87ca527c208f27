import { eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { wallets } from '../../db/schema/wallet.ts';

/** The wallets table: one balance row per user, changed only by the ledger (ledger.repository.ts). */
export function createWalletRepository(db: DbOrTx) {
  return {
    /** The zero balance row of a new user, in the caller's transaction when given one. */
    async open(userId: number, tenantId: number): Promise<void> {
      await db.insert(wallets).values({ userId, tenantId });
    },
    async balanceOf(userId: number): Promise<number> {
      const rows = await db.select({ balance: wallets.balance }).from(wallets).where(eq(wallets.userId, userId)).limit(1);
      return rows[0]?.balance ?? 0;
    },
  };
}
export type WalletRepository = ReturnType<typeof createWalletRepository>;
