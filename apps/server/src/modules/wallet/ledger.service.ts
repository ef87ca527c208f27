import { ErrorReason } from '@suanli/contract/errors';
import type { TransactionsPage } from '@suanli/contract/wallet';
import { formatMoney } from '@suanli/domain/format';
import type { Db, DbOrTx, Tx } from '../../db/client.ts';
import type { LedgerKind } from '@suanli/contract/wallet';
import type { Clock } from '../../lib/clock.ts';
import { conflict, notFound } from '../../lib/errors.ts';
import { isUniqueViolation } from '../user/user.repository.ts';
import { createLedgerRepository, type LedgerFilter, type LedgerRow } from './ledger.repository.ts';

export type Posting = {
  tenantId: number;
  userId: number;
  kind: LedgerKind;
  /** Signed units of 0.0001 yuan. */
  amount: number;
  /** The business reference; posting the same (kind, ref) again changes nothing. */
  ref: string;
  memo?: string;
  /** Metering may take a balance below zero (arrears); a user's own action never does. */
  allowNegative?: boolean;
};

/** `entryId`: the first entry of the user's ledger that doesn't hold (a 'chain' problem), else null. */
export type LedgerMismatch = { userId: number; problem: 'balance' | 'chain'; entryId: number | null; detail: string };

/**
 * The one way money moves: the balance row changes (locked by the update) and the ledger entry is
 * appended atomically, or neither. Idempotent on (user, kind, ref), so a retried notification or
 * job can't post twice.
 */
export function createLedgerService(deps: {
  db: Db;
  clock: Clock;
  onBalanceChanged?: (userId: number) => void;
  /** Metrics (GET /metrics): called with each new entry's kind (not for replays). */
  onPosted?: (kind: LedgerKind, count: number) => void;
}) {
  const { db, clock } = deps;

  async function replayOf(tx: DbOrTx, p: Posting) {
    const existing = await createLedgerRepository(tx).findByRef(p.userId, p.kind, p.ref);
    if (!existing) return undefined;
    if (existing.amount !== p.amount) throw new Error(`ledger: ${p.kind} ${p.ref} was posted with ${existing.amount}, not ${p.amount}`);
    return { entry: existing, replayed: true };
  }

  async function postIn(tx: DbOrTx, p: Posting, outer: Tx | undefined): Promise<{ entry: LedgerRow; replayed: boolean }> {
    if (!Number.isSafeInteger(p.amount) || p.amount === 0) throw new Error(`ledger: amount must be a non-zero safe integer, got ${p.amount}`);
    const repo = createLedgerRepository(tx);
    const posting = { ...p, memo: p.memo ?? '', allowNegative: Boolean(p.allowNegative), at: clock() };
    let entry: LedgerRow | undefined;
    try {
      // Alone, the statement is atomic by itself. Inside a caller's transaction it runs under a
      // savepoint, so a replay's unique violation doesn't abort the caller's other writes.
      entry = outer ? await outer.transaction((sp) => createLedgerRepository(sp).postAtomically(posting)) : await repo.postAtomically(posting);
    } catch (err) {
      // The same (user, kind, ref) again: the statement changed nothing; answer with the first posting.
      if (isUniqueViolation(err)) {
        const replay = await replayOf(tx, p);
        if (replay) return replay;
      }
      throw err;
    }
    if (entry) return { entry, replayed: false };
    // Nothing posted: a replay of a posting that can't be repeated now, a missing wallet, or a debit
    // that would overdraw. A credit is always welcome, even if arrears remain after it.
    const replay = await replayOf(tx, p);
    if (replay) return replay;
    const wallet = await repo.walletOf(p.userId);
    if (!wallet || wallet.tenantId !== p.tenantId) throw notFound();
    throw conflict(`余额不足，还差 ${formatMoney(-(wallet.balance - wallet.held + p.amount))}，请先充值`, ErrorReason.InsufficientBalance);
  }

  return {
    /** Posts inside the caller's transaction (the caller's other writes commit with it), or in a new one. */
    async post(p: Posting, tx?: Tx): Promise<{ entry: LedgerRow; replayed: boolean }> {
      const result = await postIn(tx ?? db, p, tx);
      // Only once committed: inside a caller's transaction a reader could still cache the old
      // balance, so there the caller invalidates after its commit (payment.service's afterCommit).
      if (!tx) deps.onBalanceChanged?.(p.userId);
      if (!result.replayed) deps.onPosted?.(p.kind, 1);
      return result;
    },

    /**
     * Many postings of one kind at one instant, at most one per user, inside the caller's
     * transaction, in two statements (ledger.repository's postBulk): metering's settlement posts a
     * whole tick this way. The same hash chain as `post`; refs must be new (a repeated (user, kind,
     * ref) fails the whole statement, and with it the caller's transaction). Returns the postings
     * that stood with their new balances; without allowNegative, debits that would overdraw are left out.
     */
    async postBulk(tx: Tx, kind: LedgerKind, postings: Omit<Posting, 'kind'>[], opts: { allowNegative?: boolean } = {}): Promise<{ userId: number; balanceAfter: number }[]> {
      const seen = new Set<number>();
      for (const p of postings) {
        if (!Number.isSafeInteger(p.amount) || p.amount === 0) throw new Error(`ledger: amount must be a non-zero safe integer, got ${p.amount}`);
        if (seen.has(p.userId)) throw new Error(`ledger: postBulk takes one posting per user (user ${p.userId} twice)`);
        seen.add(p.userId);
      }
      const posted = await createLedgerRepository(tx).postBulk({
        kind,
        allowNegative: Boolean(opts.allowNegative),
        at: clock(),
        postings: postings.map((p) => ({ tenantId: p.tenantId, userId: p.userId, amount: p.amount, ref: p.ref, memo: p.memo ?? '' })),
      });
      if (posted.length > 0) deps.onPosted?.(kind, posted.length);
      return posted;
    },

    /** Balances may be cached: forget those of users whose balance changed in a transaction that has now committed. */
    balancesChanged(userIds: Iterable<number>): void {
      for (const id of userIds) deps.onBalanceChanged?.(id);
    },

    async list(userId: number, filter: LedgerFilter, page: number, pageSize: number): Promise<TransactionsPage> {
      const r = await createLedgerRepository(db).page(userId, filter, page, pageSize);
      return {
        list: r.list.map((e) => ({
          id: String(e.id),
          kind: e.kind,
          amount: e.amount,
          balanceAfter: e.balanceAfter,
          ref: e.ref,
          memo: e.memo,
          createdAt: e.createdAt.toISOString(),
        })),
        total: r.total,
        totals: { income: r.income, expense: r.expense },
      };
    },

    /**
     * For every user: the ledger sums to the balance, each entry's hash chains from the one before
     * and each balance_after is the previous one plus the amount; the first entry that breaks the
     * chain is named. Empty when everything holds. One tenant's, or everyone's.
     */
    async check(tenantId?: number): Promise<LedgerMismatch[]> {
      const { balances, chains, tails } = await createLedgerRepository(db).findMismatches(tenantId);
      const brokenChain = new Set(chains.map((c) => c.userId));
      return [
        ...balances.map((r) => ({ userId: r.userId, problem: 'balance' as const, entryId: null, detail: `balance ${r.balance} but ledger sums to ${r.ledger}` })),
        ...chains.map((r) => ({
          userId: r.userId,
          problem: 'chain' as const,
          entryId: r.entryId,
          detail: r.hashOk
            ? `entry ${r.entryId}: balance_after ${r.balanceAfter}, running sum ${r.running}`
            : `entry ${r.entryId}: hash does not follow from the entry before it (this entry was edited, or one before it was deleted or inserted)`,
        })),
        // The newest entries removed (or the wallet's hash edited): the chain itself still verifies.
        ...tails
          .filter((r) => !brokenChain.has(r.userId))
          .map((r) => ({
            userId: r.userId,
            problem: 'chain' as const,
            entryId: r.lastEntryId,
            detail:
              r.lastEntryId === null
                ? 'the wallet records ledger entries but none are left (deleted)'
                : `entry ${r.lastEntryId} is the newest entry but not the one the wallet last posted: entries after it were deleted, or the wallet row was edited`,
          })),
      ];
    },
  };
}
export type LedgerService = ReturnType<typeof createLedgerService>;
