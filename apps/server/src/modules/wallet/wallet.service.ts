import type { Db } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { createWalletRepository } from './wallet.repository.ts';

/** How stale a displayed balance may be on another replica (this one forgets it on every change). */
const BALANCE_CACHE_MS = 1_000;
const MAX_CACHED = 20_000;

/**
 * Balance reads for display (user detail, the balance card). A short per-process cache keeps the
 * dropdown's polling cheap; whatever changes a balance calls `forgetBalance` once, after its
 * transaction commits (see ledger.service's post and payment.service's afterCommit), so a reader
 * can't cache the value from before the commit.
 */
export function createWalletService(deps: { db: Db; clock: Clock }) {
  const repo = createWalletRepository(deps.db);
  const balances = new Map<number, { balance: number; until: number }>();
  return {
    async balanceOf(userId: number): Promise<number> {
      const now = deps.clock().getTime();
      const hit = balances.get(userId);
      if (hit && hit.until > now) return hit.balance;
      const balance = await repo.balanceOf(userId);
      if (balances.size > MAX_CACHED) balances.clear();
      balances.set(userId, { balance, until: now + BALANCE_CACHE_MS });
      return balance;
    },
    forgetBalance(userId: number): void {
      balances.delete(userId);
    },
  };
}
export type WalletService = ReturnType<typeof createWalletService>;
