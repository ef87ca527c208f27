import type { AvailableExpandDisk, ChangePreview } from '@suanli/contract/instance-ops';
import { type Order, type OrderKind, type OrderLine, type PrepaidPeriod } from '@suanli/contract/order';
import { ErrorReason } from '@suanli/contract/errors';
import { INSTANCE_STATE_LABELS } from '@suanli/domain/instance-state';
import { formatMoney } from '@suanli/domain/format';
import { diskHourly, extraDiskGb, PERIOD_DAYS, PERIOD_LABELS, paygHourly, prepaidDurationMs, quotePrepaid } from '@suanli/domain/pricing';
import { diskChangeDifference, durationText, gpuChangeDifference, minDataDiskGb, prepaidRefund, remainingMs } from '@suanli/domain/pricing-change';
import type { Db, Tx } from '../../db/client.ts';
import { enqueueJob, type JobContext, type JobHandler, type JobKindOptions } from '../../jobs/queue.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound, tooMany } from '../../lib/errors.ts';
import type { ComputeDriver } from '../../adapters/compute/port.ts';
import type { LedgerService } from '../wallet/ledger.service.ts';
import type { MeterHooks } from '../metering/meter-hooks.ts';
import { MeteringMessages } from '../metering/metering.service.ts';
import { DRIVER_ATTEMPTS, EXPIRED_RELEASE_DAYS, STOPPED_RELEASE_DAYS, type InstanceService } from '../instance/instance.service.ts';
import { createInstanceRepository, type InstanceRow } from '../instance/instance.repository.ts';
import { createOrderRepository, type MachineView, type OrderRow } from './order.repository.ts';
import { MAX_OPEN_ORDERS, newOrderId, ORDER_TTL_MS, type OrderService } from './order.service.ts';
import { checkPrepaidQuantity, pricingOf } from './order-pricing.ts';
import { createInstanceChangeRepository } from './instance-change.repository.ts';
import { RESIZE_DISK_JOB, RESIZING_DISK } from './instance-change.jobs.ts';

type Owner = { tenantId: number; userId: number };
type Log = { info: (o: object, m?: string) => void; error: (o: object, m?: string) => void };
const silent: Log = { info: () => {}, error: () => {} };

const DAY_MS = 86_400_000;
const GIB = 1024 ** 3;
/** "按量转包月": what a conversion to each period is called. */
const RESIZE_PENDING = '数据盘正在调整中，请等待完成后再试';
const PACK: Record<PrepaidPeriod, string> = { day: '包天', week: '包周', month: '包月', year: '包年' };

/** The resize job's options (container.ts): like the instance module's driver jobs. */
export const RESIZE_DISK_JOB_OPTIONS: JobKindOptions = { concurrency: 8, timeoutMs: 120_000, retry: { maxAttempts: DRIVER_ATTEMPTS, maxBackoffSeconds: 30 } };

/** When the platform releases a stopped instance (as instance.service): prepaid 7 days after expiry, payg 15 days after it stopped. */
function releaseAtOf(chargeType: 'payg' | 'prepaid', expiresAt: Date | null, status: InstanceRow['status'], stoppedAt: Date | null, now: Date): Date | null {
  if (chargeType === 'prepaid') return expiresAt && new Date(expiresAt.getTime() + EXPIRED_RELEASE_DAYS * DAY_MS);
  return status === 'stopped' ? new Date((stoppedAt ?? now).getTime() + STOPPED_RELEASE_DAYS * DAY_MS) : null;
}

const label = (inst: InstanceRow) => INSTANCE_STATE_LABELS[inst.status];
const iso = (d: Date | null) => (d ? d.toISOString() : null);
const isFinal = (err: unknown, ctx: JobContext) => !(err instanceof Error && 'retryable' in err && (err as { retryable: boolean }).retryable) || ctx.attempt >= DRIVER_ATTEMPTS;

type Quote = { lines: OrderLine[]; amount: number; hourly: number; expiresAt: Date | null; remainingMs: number };

/**
 * Issue #10 (billing changes): charge-type conversions, renewal, GPU count and data disk of an
 * existing instance (docs/instance-operations.md). A change that costs money is an unpaid order,
 * paid through POST /api/v1/order/pay (the handlers registered here); one that refunds or costs
 * nothing is applied at once and recorded as a paid order with amount ≤ 0. Every transaction locks
 * the instance row and re-checks its state under the lock.
 */
export function createInstanceChangeService(deps: {
  db: Db;
  clock: Clock;
  ledger: LedgerService;
  instances: InstanceService;
  orders: OrderService;
  meter: MeterHooks;
  compute: ComputeDriver;
  onBalanceChanged?: (userId: number) => void;
  log?: Log;
}) {
  const { db, clock, ledger, meter, compute } = deps;
  const log = deps.log ?? silent;
  const instRepo = createInstanceRepository(db);
  const orderRepo = createOrderRepository(db);
  const changeRepo = createInstanceChangeRepository(db);

  // ---- reading and checking ------------------------------------------------------------------

  const isOwn = (inst: InstanceRow | undefined, owner: Owner): inst is InstanceRow =>
    !!inst && inst.userId === owner.userId && inst.tenantId === owner.tenantId && inst.status !== 'released';

  async function loadOwn(owner: Owner, id: string): Promise<InstanceRow> {
    const inst = await instRepo.find(id);
    if (!isOwn(inst, owner)) throw notFound('实例不存在');
    return inst;
  }

  async function lockOwn(tx: Tx, owner: Owner, id: string): Promise<InstanceRow> {
    const inst = await createInstanceRepository(tx).lock(id);
    if (!isOwn(inst, owner)) throw notFound('实例不存在');
    return inst;
  }

  /** Paying an order: its instance locked; gone or another user's → 409, nothing charged. */
  async function lockForOrder(tx: Tx, o: OrderRow): Promise<InstanceRow> {
    const inst = o.instanceId ? await createInstanceRepository(tx).lock(o.instanceId) : undefined;
    if (!inst || inst.userId !== o.userId || inst.tenantId !== o.tenantId) throw notFound('实例不存在');
    if (inst.status === 'released' || inst.status === 'releasing') throw conflict('实例已释放，订单无法支付，本次未扣费');
    return inst;
  }

  async function machineOf(db2: Db | Tx, inst: InstanceRow): Promise<MachineView> {
    const m = await createOrderRepository(db2).findMachine(inst.tenantId, inst.machineId);
    if (!m) throw notFound('机器不存在');
    return m;
  }

  function mustBeRunningOrStopped(inst: InstanceRow, what: string): void {
    if (inst.status !== 'running' && inst.status !== 'stopped') throw conflict(`实例当前状态为「${label(inst)}」，暂不能${what}，请稍后再试`);
  }

  /** GPUs the instance could have on its machine: the free ones plus those it holds. */
  function gpusAvailable(inst: InstanceRow, m: MachineView): { free: number; available: number } {
    const free = Math.max(0, m.gpuTotal - m.gpuUsed);
    return { free, available: free + (inst.gpuHeld ? inst.gpuCount : 0) };
  }

  async function usedBytesOf(id: string): Promise<number | null> {
    try {
      return (await compute.usage(id)).dataDiskUsedBytes;
    } catch (err) {
      log.error({ err, instanceId: id }, 'data disk usage unknown');
      return null;
    }
  }

  // ---- quotes (pure on the rows) -----------------------------------------------------------------

  function quoteToPrepaid(inst: InstanceRow, m: MachineView, period: PrepaidPeriod, quantity: number, now: Date): Quote {
    if (inst.chargeType !== 'payg') throw conflict('实例已是包周期计费，无需转换');
    mustBeRunningOrStopped(inst, '转为包周期');
    if (inst.noGpu) throw conflict('实例正以无卡模式运行，请先关机再转为包周期');
    checkPrepaidQuantity(period, quantity);
    const q = quotePrepaid(pricingOf(m), inst.gpuCount, inst.dataDiskGb, period, quantity);
    const lines = q.lines.map((l, i) => (i === 0 ? { label: `按量转${PACK[period]}：${m.gpuTypeName} × ${inst.gpuCount}，${PERIOD_LABELS[period]} × ${quantity}`, amount: l.amount } : l));
    return { lines, amount: q.total, hourly: 0, expiresAt: new Date(now.getTime() + prepaidDurationMs(period, quantity)), remainingMs: 0 };
  }

  function quoteToPayg(inst: InstanceRow, m: MachineView, bills: { amount: number; periodStart: Date; periodEnd: Date }[], now: Date): Quote & { perBill: number[] } {
    if (inst.chargeType !== 'prepaid') throw conflict('实例已是按量计费，无需转换');
    mustBeRunningOrStopped(inst, '转为按量计费');
    const refund = prepaidRefund(bills, now);
    const left = remainingMs(inst.expiresAt, now);
    const total = Math.max(0, refund.total);
    const amount = total === 0 ? 0 : -total;
    return {
      lines: [{ label: `包周期转按量：退还未使用时长（按秒折算，剩余 ${durationText(left)}）`, amount }],
      amount,
      hourly: paygHourly(pricingOf(m), inst.gpuCount, inst.dataDiskGb),
      expiresAt: null,
      remainingMs: left,
      perBill: refund.perBill,
    };
  }

  function quoteRenewal(inst: InstanceRow, m: MachineView, period: PrepaidPeriod, quantity: number, now: Date): Quote & { start: Date } {
    if (inst.chargeType !== 'prepaid') throw conflict('按量计费实例无需续费，可先转为包周期');
    if (inst.status === 'releasing' || inst.status === 'failed') throw conflict(`实例当前状态为「${label(inst)}」，无法续费`);
    checkPrepaidQuantity(period, quantity);
    const start = inst.expiresAt && inst.expiresAt > now ? inst.expiresAt : now;
    const q = quotePrepaid(pricingOf(m), inst.gpuCount, inst.dataDiskGb, period, quantity);
    const lines = q.lines.map((l, i) => (i === 0 ? { label: `续费：${l.label}`, amount: l.amount } : l));
    return { lines, amount: q.total, hourly: 0, expiresAt: new Date(start.getTime() + prepaidDurationMs(period, quantity)), remainingMs: remainingMs(inst.expiresAt, now), start };
  }

  function quoteSpec(inst: InstanceRow, m: MachineView, toCount: number, now: Date): Quote {
    if (inst.status !== 'stopped') throw conflict(`变更 GPU 数量需要先关机（实例当前状态为「${label(inst)}」）`);
    if (toCount > m.gpuTotal) throw badRequest(`该机器共 ${m.gpuTotal} 张 GPU，GPU 数量最多为 ${Math.min(8, m.gpuTotal)}`);
    if (toCount === inst.gpuCount) throw badRequest(`GPU 数量未变化（当前为 ${inst.gpuCount} 张）`);
    const { free, available } = gpusAvailable(inst, m);
    if (toCount > inst.gpuCount && available < toCount) {
      throw conflict(free === 0 ? `机器 ${m.hostName} 已没有空闲 GPU，无法变更为 ${toCount} 张` : `机器 ${m.hostName} 仅剩 ${free} 张空闲 GPU，无法变更为 ${toCount} 张`);
    }
    const p = pricingOf(m);
    const head = `变更 GPU：${m.gpuTypeName} × ${inst.gpuCount} → × ${toCount}`;
    if (inst.chargeType === 'payg') {
      const hourly = paygHourly(p, toCount, inst.dataDiskGb);
      return { lines: [{ label: `${head}，按量计费（每小时，下次开机起生效）`, amount: hourly }], amount: 0, hourly, expiresAt: null, remainingMs: 0 };
    }
    const period = inst.period ?? 'month';
    const left = remainingMs(inst.expiresAt, now);
    const amount = gpuChangeDifference(p.prices[period], PERIOD_DAYS[period], inst.gpuCount, toCount, left);
    return { lines: [{ label: `${head}（${PERIOD_LABELS[period]}，剩余 ${durationText(left)}，按秒折算）`, amount }], amount, hourly: 0, expiresAt: inst.expiresAt, remainingMs: left };
  }

  function quoteDisk(inst: InstanceRow, m: MachineView, toGb: number, usedBytes: number | null, now: Date): Quote {
    if (toGb > m.dataDiskMaxGb) throw badRequest(`该机器的数据盘最大为 ${m.dataDiskMaxGb} GB`);
    if (toGb < m.dataDiskFreeGb) throw badRequest(`数据盘不能小于免费赠送的 ${m.dataDiskFreeGb} GB`);
    if (toGb === inst.dataDiskGb) throw badRequest(`数据盘大小未变化（当前为 ${inst.dataDiskGb} GB）`);
    if (toGb < inst.dataDiskGb) {
      if (inst.status !== 'stopped') throw conflict(`缩小数据盘需要先关机（实例当前状态为「${label(inst)}」）`);
      if (usedBytes === null) throw conflict('暂时无法读取数据盘的用量，请稍后再试');
      const min = minDataDiskGb(m.dataDiskFreeGb, usedBytes);
      if (toGb < min) throw badRequest(`数据盘已使用 ${(usedBytes / GIB).toFixed(2)} GB，最小只能缩小到 ${min} GB`);
    } else {
      mustBeRunningOrStopped(inst, '扩容数据盘');
    }
    const p = pricingOf(m);
    const head = `数据盘 ${inst.dataDiskGb} GB → ${toGb} GB`;
    if (inst.chargeType === 'payg') {
      const hourly = paygHourly(p, inst.gpuCount, toGb);
      return { lines: [{ label: `${head}，超出免费 ${extraDiskGb(p, toGb)} GB（每小时）`, amount: diskHourly(p, toGb) }], amount: 0, hourly, expiresAt: null, remainingMs: 0 };
    }
    const left = remainingMs(inst.expiresAt, now);
    const amount = diskChangeDifference(p.dataDiskPricePerGbDay, extraDiskGb(p, inst.dataDiskGb), extraDiskGb(p, toGb), left);
    return { lines: [{ label: `${head}（剩余 ${durationText(left)}，按秒折算）`, amount }], amount, hourly: 0, expiresAt: inst.expiresAt, remainingMs: left };
  }

  const previewOf = (inst: InstanceRow, q: Quote): ChangePreview => ({
    instanceId: inst.id,
    lines: q.lines,
    amount: q.amount,
    hourly: q.hourly,
    expiresAt: iso(q.expiresAt),
    remainingSeconds: Math.floor(q.remainingMs / 1000),
  });

  // ---- writing -----------------------------------------------------------------------------------

  type OrderFields = { kind: Exclude<OrderKind, 'new' | 'clone'>; chargeType: 'payg' | 'prepaid'; period?: PrepaidPeriod | null; quantity?: number | null; gpuCount?: number; dataDiskGb?: number; params: Record<string, unknown> };

  async function insertOrder(dbx: Db | Tx, inst: InstanceRow, f: OrderFields, q: Quote, status: 'unpaid' | 'paid', now: Date): Promise<OrderRow> {
    return createOrderRepository(dbx).insert({
      id: newOrderId(now),
      tenantId: inst.tenantId,
      userId: inst.userId,
      kind: f.kind,
      status,
      chargeType: f.chargeType,
      period: f.period ?? null,
      quantity: f.quantity ?? null,
      machineId: inst.machineId,
      gpuCount: f.gpuCount ?? inst.gpuCount,
      imageId: inst.imageId,
      dataDiskGb: f.dataDiskGb ?? inst.dataDiskGb,
      instanceName: inst.name,
      params: f.params,
      lines: q.lines,
      amount: q.amount,
      hourly: q.hourly,
      instanceId: inst.id,
      createdAt: now,
      expiresAt: new Date(now.getTime() + ORDER_TTL_MS),
      ...(status === 'paid' ? { paidAt: now } : {}),
    });
  }

  /** An unpaid order for a change that costs money (paid on the check-order page). */
  async function createUnpaid(owner: Owner, inst: InstanceRow, f: OrderFields, q: Quote): Promise<Order> {
    const now = clock();
    if ((await orderRepo.countOpen(owner.userId, now)) >= MAX_OPEN_ORDERS) throw tooMany(`未支付的订单已达 ${MAX_OPEN_ORDERS} 个，请先支付或取消已有订单`);
    const row = await insertOrder(db, inst, f, q, 'unpaid', now);
    return deps.orders.get(owner, row.id);
  }

  async function debit(tx: Tx, o: OrderRow): Promise<boolean> {
    if (o.amount <= 0) return false;
    await ledger.post({ tenantId: o.tenantId, userId: o.userId, kind: 'order_payment', amount: -o.amount, ref: `order:${o.id}`, memo: `order ${o.id}` }, tx);
    return true;
  }

  async function refund(tx: Tx, inst: InstanceRow, orderId: string, amount: number, memo: string): Promise<boolean> {
    if (amount <= 0) return false;
    await ledger.post({ tenantId: inst.tenantId, userId: inst.userId, kind: 'refund', amount, ref: `order:${orderId}`, memo }, tx);
    return true;
  }

  /** A signed prepaid bill over [start, end] (a charge, a difference or its reversal). */
  async function bill(tx: Tx, inst: InstanceRow, orderId: string, amount: number, start: Date, end: Date | null): Promise<void> {
    if (amount === 0 || !end || end <= start) return;
    const at = await createInstanceChangeRepository(tx).freeBillStart(inst.id, start);
    await meter.prepaidPaid(tx, { instanceId: inst.id, tenantId: inst.tenantId, userId: inst.userId, orderId, amount, periodStart: at, periodEnd: end });
  }

  /** A running pay-as-you-go instance's meter moves to a new hourly price at `now` (what ran before is settled at the old one). */
  async function rerate(tx: Tx, inst: InstanceRow, hourly: number, now: Date): Promise<void> {
    if (inst.status !== 'running' || inst.chargeType !== 'payg' || inst.noGpu) return;
    await meter.stopped(tx, inst.id, now);
    await meter.started(tx, { id: inst.id, tenantId: inst.tenantId, userId: inst.userId, chargeType: 'payg', hourly }, now);
  }

  /** Runs `fn` in a transaction, then drops cached instance lists and, when money moved, the cached balance. */
  async function commit<T>(userId: number, fn: (tx: Tx) => Promise<{ result: T; moved: boolean }>): Promise<T> {
    let moved = false;
    try {
      const out = await db.transaction(async (tx) => {
        const r = await fn(tx);
        moved = r.moved;
        return r.result;
      });
      return out;
    } finally {
      deps.instances.changed();
      if (moved) deps.onBalanceChanged?.(userId);
    }
  }

  /** The disk change in `tx`: the new size (and payg price), the resize job, and for a stopped instance the 'creating' mark. */
  async function applyDisk(tx: Tx, inst: InstanceRow, toGb: number, hourly: number, orderId: string, now: Date): Promise<void> {
    const r = createInstanceRepository(tx);
    if (await createInstanceChangeRepository(tx).resizePending(inst.id)) throw conflict(RESIZE_PENDING);
    const stopped = inst.status === 'stopped';
    await r.update(inst.id, {
      dataDiskGb: toGb,
      ...(inst.chargeType === 'payg' ? { hourly } : {}),
      ...(stopped ? { status: 'creating' as const, statusReason: RESIZING_DISK } : {}),
      updatedAt: now,
    });
    if (inst.chargeType === 'payg') await rerate(tx, inst, hourly, now);
    await enqueueJob(tx, RESIZE_DISK_JOB, { instanceId: inst.id, orderId }, clock());
  }

  // ---- pay handlers (POST /api/v1/order/pay) -----------------------------------------------------

  deps.orders.registerKind('charge_type', {
    async pay(tx, o, now) {
      const inst = await lockForOrder(tx, o);
      if (o.params.to !== 'prepaid') throw conflict('该订单无需支付');
      if (inst.chargeType !== 'payg') throw conflict('实例已是包周期计费，本次未扣费');
      mustBeRunningOrStopped(inst, '转为包周期');
      if (inst.noGpu) throw conflict('实例正以无卡模式运行，请先关机再转为包周期，本次未扣费');
      if (!o.period) throw conflict('订单缺少包周期时长');
      const r = createInstanceRepository(tx);
      if (!inst.gpuHeld && !(await r.reserveGpus(inst.machineId, inst.gpuCount))) {
        throw conflict(`机器的空闲 GPU 不足 ${inst.gpuCount} 张（或机器已下线），包周期实例需占用 GPU，本次未扣费`);
      }
      // Lock order everywhere: instance → meter → wallet (the settlement takes meters, then wallets).
      if (inst.status === 'running') await meter.stopped(tx, inst.id, now);
      const charged = await debit(tx, o);
      const expiresAt = new Date(now.getTime() + prepaidDurationMs(o.period, o.quantity ?? 1));
      await r.update(inst.id, { chargeType: 'prepaid', period: o.period, hourly: 0, gpuHeld: true, expiresAt, releaseAt: releaseAtOf('prepaid', expiresAt, inst.status, inst.stoppedAt, now), updatedAt: now });
      await bill(tx, inst, o.id, o.amount, now, expiresAt);
      return { instanceId: inst.id, charged };
    },
  });

  deps.orders.registerKind('renewal', {
    async pay(tx, o, now) {
      const inst = await lockForOrder(tx, o);
      if (inst.chargeType !== 'prepaid') throw conflict('实例已不是包周期计费，无法续费，本次未扣费');
      if (inst.status === 'failed') throw conflict('实例创建失败，无法续费，本次未扣费');
      if (!o.period) throw conflict('订单缺少续费时长');
      const charged = await debit(tx, o);
      const start = inst.expiresAt && inst.expiresAt > now ? inst.expiresAt : now;
      const expiresAt = new Date(start.getTime() + prepaidDurationMs(o.period, o.quantity ?? 1));
      await createInstanceRepository(tx).update(inst.id, {
        period: o.period,
        expiresAt,
        releaseAt: releaseAtOf('prepaid', expiresAt, inst.status, inst.stoppedAt, now),
        // "包周期已到期" no longer holds once renewed.
        ...(inst.statusReason === MeteringMessages.expired ? { statusReason: '' } : {}),
        updatedAt: now,
      });
      await bill(tx, inst, o.id, o.amount, start, expiresAt);
      return { instanceId: inst.id, charged };
    },
  });

  deps.orders.registerKind('spec_change', {
    async pay(tx, o, now) {
      const inst = await lockForOrder(tx, o);
      if (inst.status !== 'stopped') throw conflict(`变更 GPU 数量需要先关机（实例当前状态为「${label(inst)}」），本次未扣费`);
      if (inst.chargeType !== 'prepaid' || inst.gpuCount !== Number(o.params.fromGpuCount)) throw conflict('实例的配置或计费方式已变化，请重新下单，本次未扣费');
      const to = o.gpuCount;
      const delta = to - inst.gpuCount;
      const r = createInstanceRepository(tx);
      if (delta > 0 && inst.gpuHeld && !(await r.reserveGpus(inst.machineId, delta))) throw conflict(`GPU 已被占用：机器的空闲 GPU 不足 ${delta} 张，本次未扣费`);
      if (delta > 0 && !inst.gpuHeld && !(await r.reserveGpus(inst.machineId, to))) throw conflict(`GPU 已被占用：机器的空闲 GPU 不足 ${to} 张，本次未扣费`);
      const m = await machineOf(tx, inst);
      const charged = await debit(tx, o);
      await r.update(inst.id, { gpuCount: to, gpuHeld: true, cpuCores: m.cpuPerGpu * to, memoryGb: m.memoryGbPerGpu * to, updatedAt: now });
      await bill(tx, inst, o.id, o.amount, now, inst.expiresAt);
      return { instanceId: inst.id, charged };
    },
  });

  deps.orders.registerKind('data_disk', {
    async pay(tx, o, now) {
      const inst = await lockForOrder(tx, o);
      if (inst.chargeType !== 'prepaid' || inst.dataDiskGb !== Number(o.params.fromDataDiskGb)) throw conflict('实例的数据盘或计费方式已变化，请重新下单，本次未扣费');
      const to = o.dataDiskGb;
      if (to < inst.dataDiskGb) throw conflict('该订单无需支付');
      mustBeRunningOrStopped(inst, '扩容数据盘');
      await applyDisk(tx, inst, to, 0, o.id, now);
      const charged = await debit(tx, o);
      await bill(tx, inst, o.id, o.amount, now, inst.expiresAt);
      return { instanceId: inst.id, charged };
    },
  });

  // ---- the resize job ----------------------------------------------------------------------------

  /** Shown on a running instance whose data disk was grown but takes the size at its next start. */
  const GROW_AT_NEXT_START = '数据盘已扩容，重启实例后生效（本主机不支持在线扩容）';

  /** Resizes the driver's data disk to what the row says; a stopped instance goes back to 'stopped'. */
  async function runResize(payload: Record<string, unknown>, ctx: JobContext): Promise<void> {
    const id = String(payload.instanceId);
    const inst = await instRepo.find(id);
    if (!inst || inst.status === 'released' || inst.status === 'releasing' || inst.status === 'failed') return;
    let atNextStart = false;
    try {
      ({ atNextStart } = await compute.resizeDataDisk(id, inst.dataDiskGb * GIB));
    } catch (err) {
      if (!isFinal(err, ctx)) throw err;
      log.error({ err, instanceId: id }, 'data disk resize failed');
      await failResize(id);
      return;
    }
    await commit(inst.userId, async (tx) => {
      const cur = await createInstanceRepository(tx).lock(id);
      if (cur && cur.status === 'creating' && cur.statusReason === RESIZING_DISK) {
        await createInstanceRepository(tx).update(id, { status: 'stopped', statusReason: '', updatedAt: clock() });
      } else if (cur && cur.status === 'running' && atNextStart) {
        // The host can't grow a mounted disk: say so until the next start (which clears the reason).
        await createInstanceRepository(tx).update(id, { statusReason: GROW_AT_NEXT_START, updatedAt: clock() });
      }
      return { result: undefined, moved: false };
    });
  }

  /**
   * The driver could not resize for good: the old size (and price) back, the money of the change
   * reversed (a charge refunded, a refund taken back), a reversing bill, and 'stopped' with the reason.
   */
  async function failResize(id: string): Promise<void> {
    const inst = await instRepo.find(id);
    if (!inst) return;
    await commit(inst.userId, async (tx) => {
      const r = createInstanceRepository(tx);
      const cur = await r.lock(id);
      if (!cur) return { result: undefined, moved: false };
      const now = clock();
      const o = await createInstanceChangeRepository(tx).lastDiskOrder(id);
      const from = Number(o?.params.fromDataDiskGb);
      let moved = false;
      if (o && Number.isSafeInteger(from) && from > 0 && cur.dataDiskGb === o.dataDiskGb) {
        const m = await machineOf(tx, cur);
        const hourly = paygHourly(pricingOf(m), cur.gpuCount, from);
        await r.update(id, { dataDiskGb: from, ...(cur.chargeType === 'payg' ? { hourly } : {}), updatedAt: now });
        if (cur.chargeType === 'payg') await rerate(tx, cur, hourly, now);
        if (o.amount > 0) {
          moved = await refund(tx, cur, o.id, o.amount, `data disk resize of ${id} failed`);
        } else if (o.amount < 0) {
          await ledger.post({ tenantId: cur.tenantId, userId: cur.userId, kind: 'adjustment', amount: o.amount, ref: `order:${o.id}:revert`, memo: `data disk resize of ${id} failed`, allowNegative: true }, tx);
          moved = true;
        }
        if (cur.chargeType === 'prepaid') await bill(tx, cur, o.id, -o.amount, now, cur.expiresAt);
      }
      if (cur.status === 'creating' && cur.statusReason === RESIZING_DISK) {
        await r.update(id, { status: 'stopped', statusReason: '调整数据盘失败：计算节点出现故障，已恢复原大小并退回差价，请稍后重试或联系客服', updatedAt: now });
      }
      return { result: undefined, moved };
    });
  }

  // ---- the calls ---------------------------------------------------------------------------------

  const service = {
    /** POST /api/v1/order/charge_type/prepay/preview */
    async previewToPrepaid(owner: Owner, body: { instanceId: string; period: PrepaidPeriod; quantity: number }): Promise<ChangePreview> {
      const inst = await loadOwn(owner, body.instanceId);
      return previewOf(inst, quoteToPrepaid(inst, await machineOf(db, inst), body.period, body.quantity, clock()));
    },

    /** POST /api/v1/order/charge_type/prepay: an unpaid order; a stopped instance needs its GPUs free (it will hold them). */
    async toPrepaid(owner: Owner, body: { instanceId: string; period: PrepaidPeriod; quantity: number }): Promise<Order> {
      const inst = await loadOwn(owner, body.instanceId);
      const m = await machineOf(db, inst);
      const q = quoteToPrepaid(inst, m, body.period, body.quantity, clock());
      const { free, available } = gpusAvailable(inst, m);
      if (available < inst.gpuCount) throw conflict(`机器 ${m.hostName} 仅剩 ${free} 张空闲 GPU，包周期实例需占用 ${inst.gpuCount} 张，暂时无法转换`);
      return createUnpaid(owner, inst, { kind: 'charge_type', chargeType: 'prepaid', period: body.period, quantity: body.quantity, params: { to: 'prepaid', period: body.period, quantity: body.quantity } }, q);
    },

    /** POST /api/v1/order/charge_type/payg/preview: the refund of the unused prepaid time. */
    async previewToPayg(owner: Owner, body: { instanceId: string }): Promise<ChangePreview> {
      const inst = await loadOwn(owner, body.instanceId);
      const now = clock();
      const bills = await changeRepo.lockRefundableBills(inst.id, now);
      return previewOf(inst, quoteToPayg(inst, await machineOf(db, inst), bills, now));
    },

    /** POST /api/v1/order/charge_type/payg: applied at once, the refund posted; the order recorded paid with amount ≤ 0. */
    async toPayg(owner: Owner, body: { instanceId: string }): Promise<Order> {
      const id = await commit(owner.userId, async (tx) => {
        const inst = await lockOwn(tx, owner, body.instanceId);
        const now = clock();
        const cr = createInstanceChangeRepository(tx);
        const r = createInstanceRepository(tx);
        const bills = await cr.lockRefundableBills(inst.id, now);
        const q = quoteToPayg(inst, await machineOf(tx, inst), bills, now);
        const refundAmount = -q.amount;
        if (inst.status === 'running') {
          const balance = await r.balanceOf(inst.userId);
          if (balance + refundAmount < q.hourly) {
            throw conflict(`余额不足：转为按量计费后需账户余额至少可支付一小时的费用 ${formatMoney(q.hourly)}，还差 ${formatMoney(q.hourly - balance - refundAmount)}，请先充值`, ErrorReason.InsufficientBalance);
          }
        }
        const o = await insertOrder(tx, inst, { kind: 'charge_type', chargeType: 'payg', params: { to: 'payg', fromExpiresAt: iso(inst.expiresAt) } }, q, 'paid', now);
        // Lock order everywhere: instance → meter → wallet (the settlement takes meters, then wallets).
        if (inst.status === 'running') await meter.started(tx, { id: inst.id, tenantId: inst.tenantId, userId: inst.userId, chargeType: 'payg', hourly: q.hourly }, now);
        const moved = await refund(tx, inst, o.id, refundAmount, `instance ${inst.id} to pay-as-you-go`);
        for (const [i, b] of bills.entries()) await cr.markRefunded(b.id, q.perBill[i] ?? 0, now);
        const freeing = inst.status === 'stopped' && inst.gpuHeld;
        if (freeing) await r.freeGpus(inst.machineId, inst.gpuCount);
        await r.update(inst.id, {
          chargeType: 'payg',
          period: null,
          hourly: q.hourly,
          expiresAt: null,
          gpuHeld: freeing ? false : inst.gpuHeld,
          releaseAt: releaseAtOf('payg', null, inst.status, inst.stoppedAt, now),
          updatedAt: now,
        });
        return { result: o.id, moved };
      });
      return deps.orders.get(owner, id);
    },

    /** POST /api/v1/order/instance/renewal/preview */
    async previewRenewal(owner: Owner, body: { instanceId: string; period: PrepaidPeriod; quantity: number }): Promise<ChangePreview> {
      const inst = await loadOwn(owner, body.instanceId);
      return previewOf(inst, quoteRenewal(inst, await machineOf(db, inst), body.period, body.quantity, clock()));
    },

    /** POST /api/v1/order/instance/renewal: an unpaid order. */
    async renew(owner: Owner, body: { instanceId: string; period: PrepaidPeriod; quantity: number }): Promise<Order> {
      const inst = await loadOwn(owner, body.instanceId);
      const q = quoteRenewal(inst, await machineOf(db, inst), body.period, body.quantity, clock());
      return createUnpaid(owner, inst, { kind: 'renewal', chargeType: 'prepaid', period: body.period, quantity: body.quantity, params: { period: body.period, quantity: body.quantity } }, q);
    },

    /** POST /api/v1/order/instance/change/preview */
    async previewSpec(owner: Owner, body: { instanceId: string; gpuCount: number }): Promise<ChangePreview> {
      const inst = await loadOwn(owner, body.instanceId);
      return previewOf(inst, quoteSpec(inst, await machineOf(db, inst), body.gpuCount, clock()));
    },

    /** POST /api/v1/order/instance/change: a prepaid upgrade is an unpaid order; anything else applies at once. */
    async changeSpec(owner: Owner, body: { instanceId: string; gpuCount: number }): Promise<Order> {
      const pre = await loadOwn(owner, body.instanceId);
      const preQuote = quoteSpec(pre, await machineOf(db, pre), body.gpuCount, clock());
      const fields = (inst: InstanceRow): OrderFields => ({ kind: 'spec_change', chargeType: inst.chargeType, period: inst.period, gpuCount: body.gpuCount, params: { gpuCount: body.gpuCount, fromGpuCount: inst.gpuCount } });
      if (preQuote.amount > 0) return createUnpaid(owner, pre, fields(pre), preQuote);
      const id = await commit(owner.userId, async (tx) => {
        const inst = await lockOwn(tx, owner, body.instanceId);
        const now = clock();
        const m = await machineOf(tx, inst);
        const q = quoteSpec(inst, m, body.gpuCount, now);
        if (q.amount > 0) throw conflict('实例的剩余时长已变化，请重新确认价格');
        const r = createInstanceRepository(tx);
        const delta = body.gpuCount - inst.gpuCount;
        if (inst.gpuHeld && delta > 0 && !(await r.reserveGpus(inst.machineId, delta))) throw conflict(`GPU 已被占用：机器的空闲 GPU 不足 ${delta} 张`);
        if (inst.gpuHeld && delta < 0) await r.freeGpus(inst.machineId, -delta);
        const o = await insertOrder(tx, inst, fields(inst), q, 'paid', now);
        const moved = await refund(tx, inst, o.id, -q.amount, `instance ${inst.id} GPU ${inst.gpuCount} -> ${body.gpuCount}`);
        await r.update(inst.id, {
          gpuCount: body.gpuCount,
          cpuCores: m.cpuPerGpu * body.gpuCount,
          memoryGb: m.memoryGbPerGpu * body.gpuCount,
          ...(inst.chargeType === 'payg' ? { hourly: q.hourly } : {}),
          updatedAt: now,
        });
        if (inst.chargeType === 'prepaid') await bill(tx, inst, o.id, q.amount, now, inst.expiresAt);
        return { result: o.id, moved };
      });
      return deps.orders.get(owner, id);
    },

    /** GET /api/v1/instance/available_expand_disk */
    async availableExpandDisk(owner: Owner, instanceId: string): Promise<AvailableExpandDisk> {
      const inst = await loadOwn(owner, instanceId);
      const m = await machineOf(db, inst);
      const used = (await usedBytesOf(inst.id)) ?? 0;
      return {
        instanceId: inst.id,
        chargeType: inst.chargeType,
        status: inst.status,
        currentGb: inst.dataDiskGb,
        usedBytes: used,
        minGb: Math.min(inst.dataDiskGb, minDataDiskGb(m.dataDiskFreeGb, used)),
        maxGb: m.dataDiskMaxGb,
        freeGb: m.dataDiskFreeGb,
        pricePerGbDay: m.dataDiskPricePerGbDay,
        canShrink: inst.status === 'stopped',
      };
    },

    /** POST /api/v1/order/data_disk/change/preview */
    async previewDisk(owner: Owner, body: { instanceId: string; dataDiskGb: number }): Promise<ChangePreview> {
      const inst = await loadOwn(owner, body.instanceId);
      const used = body.dataDiskGb < inst.dataDiskGb ? await usedBytesOf(inst.id) : 0;
      return previewOf(inst, quoteDisk(inst, await machineOf(db, inst), body.dataDiskGb, used, clock()));
    },

    /** POST /api/v1/order/data_disk/change: a prepaid growth is an unpaid order; anything else applies at once. */
    async changeDisk(owner: Owner, body: { instanceId: string; dataDiskGb: number }): Promise<Order> {
      const pre = await loadOwn(owner, body.instanceId);
      if (await changeRepo.resizePending(pre.id)) throw conflict(RESIZE_PENDING);
      const shrinking = body.dataDiskGb < pre.dataDiskGb;
      const used = shrinking ? await usedBytesOf(pre.id) : 0;
      const preQuote = quoteDisk(pre, await machineOf(db, pre), body.dataDiskGb, used, clock());
      const fields = (inst: InstanceRow): OrderFields => ({ kind: 'data_disk', chargeType: inst.chargeType, period: inst.period, dataDiskGb: body.dataDiskGb, params: { dataDiskGb: body.dataDiskGb, fromDataDiskGb: inst.dataDiskGb } });
      if (preQuote.amount > 0) return createUnpaid(owner, pre, fields(pre), preQuote);
      const id = await commit(owner.userId, async (tx) => {
        const inst = await lockOwn(tx, owner, body.instanceId);
        if (await createInstanceChangeRepository(tx).resizePending(inst.id)) throw conflict(RESIZE_PENDING);
        const now = clock();
        // Stopped and locked: what the disk holds can't grow before the resize.
        const q = quoteDisk(inst, await machineOf(tx, inst), body.dataDiskGb, used, now);
        if (q.amount > 0) throw conflict('实例的剩余时长已变化，请重新确认价格');
        const o = await insertOrder(tx, inst, fields(inst), q, 'paid', now);
        await applyDisk(tx, inst, body.dataDiskGb, q.hourly, o.id, now);
        const moved = await refund(tx, inst, o.id, -q.amount, `instance ${inst.id} data disk ${inst.dataDiskGb} -> ${body.dataDiskGb} GB`);
        if (inst.chargeType === 'prepaid') await bill(tx, inst, o.id, q.amount, now, inst.expiresAt);
        return { result: o.id, moved };
      });
      return deps.orders.get(owner, id);
    },

    /** Job handlers, by kind (container.ts registers them). */
    jobHandlers: { [RESIZE_DISK_JOB]: runResize } as Record<string, JobHandler>,
    jobKinds: { [RESIZE_DISK_JOB]: RESIZE_DISK_JOB_OPTIONS } as Record<string, JobKindOptions>,
  };
  return service;
}
export type InstanceChangeService = ReturnType<typeof createInstanceChangeService>;
