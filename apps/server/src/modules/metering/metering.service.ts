import type { BillListQuery, BillPage, DailyBillPage } from '@suanli/contract/bill';
import type { Db, Tx } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import type { LedgerService } from '../wallet/ledger.service.ts';
import type { MeterHooks, MeteredInstance, PlatformActions } from './meter-hooks.ts';
import { createMeteringRepository, owed, type BillFilter, type MeterRow } from './metering.repository.ts';
import { presentBill } from './bill.presenter.ts';

/** How often the leader settles (container.ts scheduledTasks). */
export const SETTLE_EVERY_MS = 60_000;
/** Meters settled per transaction; a tick runs as many transactions as it needs. */
const SETTLE_BATCH = 20_000;
/** Platform actions (stops, releases) asked per kind and tick; the rest come next tick. */
const ACTIONS_PER_TICK = 500;

export const MeteringMessages = {
  arrears: '余额不足，实例已停机（欠费）',
  expired: '包周期已到期',
  releasedStopped: '实例已停机满 15 天，已自动释放',
  releasedExpired: '包周期到期满 7 天未续费，已自动释放',
} as const;

type Logger = { info: (o: object, m?: string) => void; error: (o: object, m?: string) => void };
export type SettleResult = { instances: number; users: number; amount: number };
export type TickResult = SettleResult & { stopped: string[]; released: string[] };
export type BillActor = { id: number; tenantId: number };

const msBetween = (from: Date, to: Date) => Math.max(0, to.getTime() - from.getTime());
const later = (a: Date, b: Date) => (a.getTime() >= b.getTime() ? a : b);

/**
 * Metering (docs/metering.md): implements MeterHooks for the instance service (each hook inside the
 * caller's transaction), settles every running pay-as-you-go meter into the ledger and bills once a
 * minute (set-based: one statement for the meters and bills, one bulk ledger posting, per batch),
 * stops instances in arrears or past their prepaid expiry and releases those whose time has come
 * through PlatformActions, and answers the bill lists.
 */
export function createMeteringService(deps: { db: Db; clock: Clock; ledger: LedgerService; platform: PlatformActions; log?: Logger }) {
  const { db, clock, ledger, platform } = deps;
  const repo = createMeteringRepository(db);

  /** Counts the current run of a meter up to `at` and marks it not running. */
  function accrueTo(m: MeterRow, at: Date): Partial<MeterRow> {
    if (!m.runningSince) return {};
    const add = msBetween(later(m.runningSince, m.settledUntil), at);
    return { accruedMs: m.accruedMs + add, runningSince: null, ...(add > 0 ? { lastStoppedAt: at } : {}) };
  }

  /** Settles what a meter has pending at its current rate, inside `tx` (a rate change, rare). */
  async function settleOneInline(tx: Tx, m: MeterRow, at: Date): Promise<MeterRow> {
    const amount = owed(m.accruedMs, m.hourly) - owed(m.billedMs, m.hourly);
    const periodEnd = later(m.settledUntil, m.lastStoppedAt ?? at);
    const r = createMeteringRepository(tx);
    if (m.accruedMs > m.billedMs && periodEnd > m.settledUntil) {
      await r.insertBill({
        tenantId: m.tenantId,
        userId: m.userId,
        instanceId: m.instanceId,
        chargeType: 'payg',
        orderId: null,
        periodStart: m.settledUntil,
        periodEnd,
        seconds: Math.floor(m.accruedMs / 1000) - Math.floor(m.billedMs / 1000),
        amount,
        at,
      });
    }
    if (amount > 0) {
      await ledger.post({ tenantId: m.tenantId, userId: m.userId, kind: 'payg_charge', amount: -amount, ref: `payg:${m.instanceId}:${periodEnd.toISOString()}`, memo: '按量计费（变更配置前结算）', allowNegative: true }, tx);
    }
    return { ...m, billedMs: m.accruedMs, settledUntil: periodEnd, chargedTotal: m.chargedTotal + amount };
  }

  const hooks: MeterHooks = {
    async started(tx: Tx, inst: MeteredInstance, at: Date) {
      if (inst.chargeType !== 'payg') return;
      const r = createMeteringRepository(tx);
      const existing = await r.lockMeter(inst.id);
      if (!existing) {
        await r.insertMeter({ instanceId: inst.id, tenantId: inst.tenantId, userId: inst.userId, hourly: inst.hourly, at });
        return;
      }
      let m: MeterRow = { ...existing, ...accrueTo(existing, at) };
      if (m.hourly !== inst.hourly) {
        // A new rate: what ran at the old one is settled now, and the counters start afresh.
        m = await settleOneInline(tx, m, at);
        m = { ...m, accruedMs: 0, billedMs: 0, hourly: inst.hourly };
      }
      const pending = m.accruedMs > m.billedMs;
      await r.updateMeter(inst.id, {
        hourly: m.hourly,
        accruedMs: m.accruedMs,
        billedMs: m.billedMs,
        chargedTotal: m.chargedTotal,
        lastStoppedAt: m.lastStoppedAt,
        runningSince: at,
        // With time still to settle, the next bill starts where the last one ended; otherwise at this start.
        settledUntil: pending ? m.settledUntil : later(m.settledUntil, at),
        updatedAt: at,
      });
    },

    async stopped(tx: Tx, instanceId: string, at: Date) {
      const r = createMeteringRepository(tx);
      const m = await r.lockMeter(instanceId);
      if (!m?.runningSince) return;
      await r.updateMeter(instanceId, { ...accrueTo(m, at), runningSince: null, updatedAt: at });
    },

    async prepaidPaid(tx: Tx, bill) {
      await createMeteringRepository(tx).insertBill({
        tenantId: bill.tenantId,
        userId: bill.userId,
        instanceId: bill.instanceId,
        chargeType: 'prepaid',
        orderId: bill.orderId,
        periodStart: bill.periodStart,
        periodEnd: bill.periodEnd,
        seconds: Math.floor(msBetween(bill.periodStart, bill.periodEnd) / 1000),
        amount: bill.amount,
        at: clock(),
      });
    },
  };

  /**
   * Settles every due meter at `now`: per batch one transaction with the set-based statement
   * (meters and bills) and one bulk ledger posting (one entry per user, hash chain kept). Safe to run
   * twice at once or again after a crash: the meters are locked and moved in the same transaction
   * as the money.
   */
  async function settle(now: Date = clock()): Promise<SettleResult> {
    const total: SettleResult = { instances: 0, users: 0, amount: 0 };
    for (;;) {
      const batch = await db.transaction(async (tx) => {
        const users = await createMeteringRepository(tx).settleDue(now, SETTLE_BATCH);
        const charged = users.filter((u) => u.amount > 0);
        const posted = await ledger.postBulk(
          tx,
          'payg_charge',
          charged.map((u) => ({
            tenantId: u.tenantId,
            userId: u.userId,
            amount: -u.amount,
            ref: `payg:${now.toISOString()}:${u.firstInstanceId}`,
            memo: `按量计费：${u.instances} 个实例`,
          })),
          { allowNegative: true },
        );
        // Every user has a wallet; if one didn't, their meters must not move without the money.
        if (posted.length !== charged.length) throw new Error(`metering: ${charged.length - posted.length} settlement posting(s) found no wallet; nothing settled`);
        return { users, charged };
      });
      ledger.balancesChanged(batch.charged.map((u) => u.userId));
      const n = batch.users.reduce((s, u) => s + u.instances, 0);
      total.instances += n;
      total.users += batch.charged.length;
      total.amount += batch.charged.reduce((s, u) => s + u.amount, 0);
      if (n < SETTLE_BATCH) return total;
    }
  }

  /** Asks the instance service for each action; one failing doesn't stop the rest. */
  async function each(ids: string[], action: (id: string) => Promise<void>, what: string): Promise<string[]> {
    const done: string[] = [];
    for (const id of ids) {
      try {
        await action(id);
        done.push(id);
      } catch (err) {
        deps.log?.error({ err, instanceId: id }, `metering: ${what} failed`);
      }
    }
    return done;
  }

  return {
    hooks,
    ...hooks,
    settle,

    /**
     * The leader's minute: settle, then stop the running pay-as-you-go instances of users in arrears
     * (found from the balances, so ones missed by a crash after the commit are stopped next time),
     * stop prepaid instances past expiry, and release those whose release time has passed.
     */
    async tick(now: Date = clock()): Promise<TickResult> {
      const settled = await settle(now);
      const stopped = [
        ...(await each(await repo.runningPaygInArrears(ACTIONS_PER_TICK), (id) => platform.platformStop(id, MeteringMessages.arrears), 'arrears stop')),
        ...(await each(await repo.expiredPrepaid(now, ACTIONS_PER_TICK), (id) => platform.platformStop(id, MeteringMessages.expired), 'expiry stop')),
      ];
      const due = await repo.dueForRelease(now, ACTIONS_PER_TICK);
      const reasons = new Map(due.map((d) => [d.id, d.chargeType === 'prepaid' ? MeteringMessages.releasedExpired : MeteringMessages.releasedStopped]));
      const released = await each(
        due.map((d) => d.id),
        (id) => platform.platformRelease(id, reasons.get(id) ?? MeteringMessages.releasedStopped),
        'release',
      );
      if (settled.instances > 0 || stopped.length > 0 || released.length > 0) deps.log?.info({ ...settled, stopped: stopped.length, released: released.length }, 'metering tick');
      return { ...settled, stopped, released };
    },

    /** Seconds since the oldest unsettled stretch of a running meter began (0 when none runs). */
    async settlementLagSeconds(): Promise<number> {
      const t = await repo.oldestRunningSettledUntil();
      return t ? Math.max(0, (clock().getTime() - t.getTime()) / 1000) : 0;
    },

    async listBills(actor: BillActor, q: BillListQuery): Promise<BillPage> {
      const r = await repo.billPage(actor.id, filterOf(q), q.page ?? 1, q.pageSize ?? 20);
      return { list: r.list.map(presentBill), total: r.total, totalAmount: r.totalAmount };
    },

    async listDailyBills(actor: BillActor, q: BillListQuery): Promise<DailyBillPage> {
      return repo.dailyPage(actor.id, filterOf(q), q.page ?? 1, q.pageSize ?? 20);
    },
  };
}

function filterOf(q: BillListQuery): BillFilter {
  return {
    instanceId: q.instanceId,
    chargeType: q.chargeType,
    startTime: q.startTime ? new Date(q.startTime) : undefined,
    endTime: q.endTime ? new Date(q.endTime) : undefined,
  };
}

export type MeteringService = ReturnType<typeof createMeteringService>;
