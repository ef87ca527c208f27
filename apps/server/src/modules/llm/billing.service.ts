import { LIMIT_WINDOW_MS, llmCost, type LimitRule } from '@suanli/contract/llm';
import type { Db } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import type { LedgerService } from '../wallet/ledger.service.ts';
import { LlmErrors, type LlmError } from './errors.ts';
import { createBillingRepository } from './billing.repository.ts';
import type { Hold, HoldRequest, LlmBilling } from './types.ts';

/** A crashed process's holds are released after this long (container: scheduled task 'llm.sweep'). */
export const HOLD_STALE_MS = 30 * 60_000;
export const SWEEP_EVERY_MS = 60_000;
export const LLM_SWEEP_TASK = 'llm.sweep';

type Logger = { warn: (o: object, m?: string) => void };

/**
 * The most completion tokens `budget` units pay for after the prompt: the largest c with
 * ceil((p·in + c·out) / 1e6) ≤ budget, i.e. p·in + c·out ≤ budget·1e6 (exact, in bigint).
 * −1 when not even the prompt fits; Infinity when output is free and the prompt fits.
 */
export function completionTokensFor(budget: number, promptTokens: number, inputPrice: number, outputPrice: number): number {
  if (budget < 0) return -1;
  const room = BigInt(budget) * 1_000_000n - BigInt(promptTokens) * BigInt(inputPrice);
  if (room < 0n) return -1;
  if (outputPrice === 0) return Infinity;
  const c = room / BigInt(outputPrice);
  return c > BigInt(Number.MAX_SAFE_INTEGER) ? Infinity : Number(c);
}

/**
 * Holds, settlements and the sweep of llm calls (docs/llm.md "Gateway and billing").
 *
 * hold: one transaction: the key's row locked (a key's holds are decided one at a time, so its
 * quota and rolling windows can't be overrun by concurrent calls), the wallet's row locked, then
 * the most completion tokens every bound allows is worked out exactly; the hold row is written and
 * wallets.held / api_keys.held raised by its amount.
 * settle: one transaction: the hold row deleted (a second settle finds none and changes nothing),
 * the held money released, the exact charge (never more than the hold) posted to the ledger, the
 * key's used raised and one llm_usage row written.
 */
export function createLlmBilling(deps: { db: Db; clock: Clock; ledger: LedgerService; onBalanceChanged?: (userId: number) => void; log?: Logger }): LlmBilling {
  const { db, clock, ledger } = deps;
  const changed = (userId: number) => deps.onBalanceChanged?.(userId);

  async function hold(req: HoldRequest): Promise<Hold> {
    const { caller, model, promptTokens } = req;
    const want = req.maxCompletionTokens;
    const now = clock();
    const result = await db.transaction(async (tx) => {
      const repo = createBillingRepository(tx);
      // A hold moves no money: it need not wait for its commit record to reach the disk (the
      // gateway's latency). Lost in a database crash, it is simply not there; the settlement that
      // moves money finds no hold and charges nothing — that call goes unbilled, nothing is wrong.
      await repo.relaxCommit();
      // Each bound: the most completion tokens it allows, and the error that names it.
      const bounds: { tokens: number; error: () => LlmError }[] = [];

      if (caller.keyId) {
        const key = await repo.lockKey(caller.keyId);
        if (!key) throw LlmErrors.invalidKey();
        if (key.quota !== null) {
          bounds.push({ tokens: completionTokensFor(key.quota - key.used - key.held, promptTokens, model.inputPrice, model.outputPrice), error: LlmErrors.quotaExceeded });
        }
        const limits: LimitRule[] = caller.limits;
        if (limits.length > 0) {
          const windows = [...new Set(limits.map((l) => l.window))];
          const usage = await repo.windowUsage(
            caller.keyId,
            windows.map((w) => new Date(now.getTime() - LIMIT_WINDOW_MS[w])),
          );
          for (const rule of limits) {
            const u = usage[windows.indexOf(rule.window)] ?? { tokens: 0, money: 0 };
            const tokens =
              rule.unit === 'tokens'
                ? rule.limit - u.tokens - promptTokens
                : completionTokensFor(rule.limit - u.money, promptTokens, model.inputPrice, model.outputPrice);
            bounds.push({ tokens: tokens < 0 ? -1 : tokens, error: () => LlmErrors.windowExceeded(rule.window) });
          }
        }
      }
      const wallet = await repo.lockWallet(caller.userId, caller.tenantId);
      if (!wallet) throw LlmErrors.insufficientBalance();
      bounds.push({ tokens: completionTokensFor(wallet.balance - wallet.held, promptTokens, model.inputPrice, model.outputPrice), error: LlmErrors.insufficientBalance });

      let completion = want;
      let binding: (() => LlmError) | undefined;
      for (const b of bounds) {
        if (b.tokens < completion) {
          completion = b.tokens;
          binding = b.error;
        }
      }
      // exact: the client asked for max_tokens and gets all of them or a refusal; otherwise at least one token.
      if (binding && (req.exact || completion < 1)) throw binding();

      const amount = llmCost(promptTokens, completion, model.inputPrice, model.outputPrice);
      const id = await repo.insertHold({ tenantId: caller.tenantId, userId: caller.userId, keyId: caller.keyId, amount, tokens: promptTokens + completion, at: now });
      return { id, amount, promptTokens, completionTokens: completion };
    });
    changed(caller.userId);
    return result;
  }

  const settle: LlmBilling['settle'] = async (h, caller, model, s) => {
    const now = clock();
    let cost = llmCost(s.promptTokens, s.completionTokens, model.inputPrice, model.outputPrice);
    if (cost > h.amount) {
      // The upstream reported more than the hold covers (it ignored max_tokens, or counted the
      // prompt higher than our bound): the user was promised at most the hold.
      deps.log?.warn({ hold: h.id, cost, held: h.amount, promptTokens: s.promptTokens, completionTokens: s.completionTokens }, 'llm charge clamped to its hold');
      cost = h.amount;
    }
    const out = await db.transaction(async (tx) => {
      const repo = createBillingRepository(tx);
      const taken = await repo.takeHold(h.id);
      if (!taken) return undefined; // settled before (or swept): nothing changes
      if (taken.keyId) await repo.settleKey(taken.keyId, { held: taken.amount, cost, at: now });
      // Released before posting: the ledger checks balance − held, and this hold is what pays.
      await repo.releaseWallet(taken.userId, taken.amount);
      let balanceAfter: number;
      if (cost > 0) {
        const { entry } = await ledger.post(
          {
            tenantId: taken.tenantId,
            userId: taken.userId,
            kind: 'llm_usage',
            amount: -cost,
            ref: `llm:${taken.id}`,
            memo: `大模型 ${model.modelId}：输入 ${s.promptTokens} / 输出 ${s.completionTokens} tokens`,
            // The charge is at most what was held for it, so with holds alone it always fits; only
            // arrears metering (which may go negative) could have eaten into held money, and the
            // tokens were delivered all the same.
            allowNegative: true,
          },
          tx,
        );
        balanceAfter = entry.balanceAfter;
      } else {
        balanceAfter = await repo.balanceOf(taken.userId);
      }
      await repo.insertUsage({
        tenantId: taken.tenantId,
        userId: taken.userId,
        keyId: taken.keyId,
        source: caller.source,
        model: model.modelId,
        promptTokens: s.promptTokens,
        completionTokens: s.completionTokens,
        cost,
        latencyMs: Math.max(0, Math.round(s.latencyMs)),
        ttftMs: s.ttftMs === null ? null : Math.max(0, Math.round(s.ttftMs)),
        status: s.status,
        errorCode: s.errorCode,
        stream: s.stream,
        createdAt: now,
      });
      return { cost, balanceAfter };
    });
    if (!out) {
      deps.log?.warn({ hold: h.id }, 'llm settle: hold already settled or swept');
      return { cost: 0, balanceAfter: await createBillingRepository(db).balanceOf(caller.userId) };
    }
    changed(caller.userId);
    return out;
  };

  async function sweep(olderThanMs: number): Promise<number> {
    const before = new Date(clock().getTime() - olderThanMs);
    let released = 0;
    for (;;) {
      const ids = await createBillingRepository(db).staleHolds(before, 100);
      if (ids.length === 0) break;
      for (const id of ids) {
        const userId = await db.transaction(async (tx) => {
          const repo = createBillingRepository(tx);
          const taken = await repo.takeHold(id);
          if (!taken) return undefined;
          if (taken.keyId) await repo.settleKey(taken.keyId, { held: taken.amount, cost: 0, at: null });
          await repo.releaseWallet(taken.userId, taken.amount);
          return taken.userId;
        });
        if (userId !== undefined) {
          released++;
          changed(userId);
        }
      }
      if (ids.length < 100) break;
    }
    if (released > 0) deps.log?.warn({ released }, 'llm sweep released stale holds');
    return released;
  }

  return { hold, settle, sweep };
}
