import crypto from 'node:crypto';
import { ORDER_TTL_MINUTES, type Order, type OrderKind, type OrderListQuery, type OrderPage, type PricePreview, type PrepaidPeriod } from '@suanli/contract/order';
import { ErrorReason } from '@suanli/contract/errors';
import { formatMoney } from '@suanli/domain/format';
import { prepaidDurationMs } from '@suanli/domain/pricing';
import type { Db, Tx } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound, tooMany } from '../../lib/errors.ts';
import type { LedgerService } from '../wallet/ledger.service.ts';
import type { MeterHooks } from '../metering/meter-hooks.ts';
import type { InstanceService, NewInstance } from '../instance/instance.service.ts';
import { createInstanceRepository, type InstanceRow } from '../instance/instance.repository.ts';
import { createOrderRepository, type MachineView, type OrderRow } from './order.repository.ts';
import { effectiveStatus, presentOrder } from './order.presenter.ts';
import { quoteInstance } from './order-pricing.ts';
import { countImageUse, imageUsableBy } from '../image/image-access.ts'; // Issue #10 (images): countImageUse

type Owner = { tenantId: number; userId: number };
export type Spec = { machineId: number; gpuCount: number; imageId: number; dataDiskGb?: number };
type Log = { info: (o: object, m?: string) => void; error: (o: object, m?: string) => void };

/** How often the leader marks unpaid orders past their TTL expired. */
export const ORDER_EXPIRE_EVERY_MS = 60_000;
export const ORDER_TTL_MS = ORDER_TTL_MINUTES * 60_000;
const TTL_MS = ORDER_TTL_MS;
/** Unpaid orders one user may have open at once (they hold nothing, but each is a row). */
export const MAX_OPEN_ORDERS = 20;

/**
 * Issue #10: orders of the other kinds (renewal, charge_type, spec_change, data_disk, clone) are
 * created by the module that owns the change and paid here, through the handler it registers.
 */
export interface OrderKindHandler<P = unknown> {
  /** Before the paying transaction (slow or outside work: availability, password hashing). */
  prepare?(order: OrderRow): Promise<P>;
  /**
   * Inside the paying transaction, the order row locked and checked payable: re-check what the
   * change needs (409 with the reason, rolling everything back), post the money through the
   * ledger in `tx`, change the instance. Returns the instance it concerns (for clone, the new one).
   */
  pay(tx: Tx, order: OrderRow, now: Date, prepared: P): Promise<{ instanceId: string; charged: boolean }>;
}

/** Order numbers: yyyymmddHHMMSS (Beijing time) + 6 random digits, what the user sees and quotes. */
export function newOrderId(now: Date): string {
  const bj = new Date(now.getTime() + 8 * 3_600_000).toISOString();
  const stamp = bj.slice(0, 19).replace(/[-T:]/g, '');
  return `${stamp}${crypto.randomInt(0, 1_000_000).toString().padStart(6, '0')}`;
}

export function createOrderService(deps: {
  db: Db;
  clock: Clock;
  ledger: LedgerService;
  instances: InstanceService;
  meter: MeterHooks;
  onBalanceChanged?: (userId: number) => void;
  log?: Log;
}) {
  const { db, clock, ledger, instances, meter } = deps;
  const repo = createOrderRepository(db);
  const kindHandlers = new Map<OrderKind, OrderKindHandler<unknown>>();

  /**
   * Inside a paying transaction (the order locked and payable, its machine read): takes what a new
   * instance needs — one hour of balance for pay-as-you-go (409 with the shortfall), its GPUs with
   * one conditional UPDATE (409 when another payer got them), the prepaid amount through the ledger
   * (ref order:<id>) — then creates the instance (a clone copies `cloneSourceId`'s disks) and, when
   * prepaid, its bill. Used by new-instance orders and (issue #10) clone orders.
   */
  async function takeInstance(tx: Tx, o: OrderRow, machine: MachineView, now: Date, password: NewInstance['password'], cloneSourceId?: string): Promise<{ inst: InstanceRow; charged: boolean }> {
    const ir = createInstanceRepository(tx);
    if (o.chargeType === 'payg') {
      const balance = await ir.balanceOf(o.userId);
      if (balance < o.hourly) {
        throw conflict(`余额不足：按量计费需账户余额至少可支付一小时的费用 ${formatMoney(o.hourly)}，还差 ${formatMoney(o.hourly - balance)}，请先充值`, ErrorReason.InsufficientBalance);
      }
    }
    if (!(await ir.reserveGpus(machine.id, o.gpuCount))) {
      throw conflict(`GPU 已被抢完：机器 ${machine.hostName} 的空闲 GPU 不足 ${o.gpuCount} 张，本次未扣费，请选择其他机器`);
    }
    let charged = false;
    if (o.amount > 0) {
      await ledger.post({ tenantId: o.tenantId, userId: o.userId, kind: 'order_payment', amount: -o.amount, ref: `order:${o.id}`, memo: `${o.kind === 'clone' ? 'clone order' : 'order'} ${o.id}` }, tx);
      charged = true;
    }
    const expiresAt = o.chargeType === 'prepaid' && o.period ? new Date(now.getTime() + prepaidDurationMs(o.period, o.quantity ?? 1)) : null;
    const inst = await instances.createInTx(
      tx,
      {
        tenantId: o.tenantId,
        userId: o.userId,
        orderId: o.id,
        machine,
        name: o.instanceName,
        chargeType: o.chargeType,
        period: o.period,
        gpuCount: o.gpuCount,
        dataDiskGb: o.dataDiskGb,
        imageId: o.imageId,
        hourly: o.hourly,
        expiresAt,
        password,
        ...(cloneSourceId ? { cloneSourceId } : {}),
      },
      now,
    );
    if (o.chargeType === 'prepaid' && o.amount > 0 && expiresAt) {
      await meter.prepaidPaid(tx, { instanceId: inst.id, tenantId: o.tenantId, userId: o.userId, orderId: o.id, amount: o.amount, periodStart: now, periodEnd: expiresAt });
    }
    return { inst, charged };
  }

  /** Pays an order of a kind other than `new` through its module's handler (see OrderKindHandler). */
  async function payThroughHandler(owner: Owner, pre: OrderRow): Promise<void> {
    const handler = kindHandlers.get(pre.kind);
    if (!handler) throw conflict('该类型的订单暂不能支付');
    const prepared = handler.prepare ? await handler.prepare(pre) : undefined;
    let charged = false;
    await db.transaction(async (tx) => {
      const r = createOrderRepository(tx);
      const o = await r.lock(pre.id);
      if (!o || o.userId !== owner.userId || o.tenantId !== owner.tenantId) throw notFound('订单不存在');
      const now = clock();
      refuseClosed(o, now, '支付');
      const done = await handler.pay(tx, o, now, prepared);
      charged = done.charged;
      await r.markPaid(o.id, done.instanceId, now);
    });
    instances.changed();
    if (charged) deps.onBalanceChanged?.(owner.userId);
  }

  /**
   * What an order may ask for, checked against the rows: the tenant's machine (404), online (409),
   * GPUs within 1..min(8, total) (400) and free now (409), a ready image offered to the tenant
   * (404 / 409), a data disk between the free size and the machine's largest (400).
   */
  async function validate(owner: Owner, spec: Spec, opts: { checkFree: boolean }) {
    const machine = await repo.findMachine(owner.tenantId, spec.machineId);
    if (!machine) throw notFound('机器不存在');
    if (!machine.online) throw conflict(`机器 ${machine.hostName} 已下线，暂不可租用`);
    if (spec.gpuCount > machine.gpuTotal) throw badRequest(`该机器共 ${machine.gpuTotal} 张 GPU，GPU 数量最多为 ${Math.min(8, machine.gpuTotal)}`);
    const free = machine.gpuTotal - machine.gpuUsed;
    if (opts.checkFree && free < spec.gpuCount) throw conflict(free === 0 ? `机器 ${machine.hostName} 的 GPU 已售罄，请选择其他机器` : `机器 ${machine.hostName} 仅剩 ${free} 张空闲 GPU，请减少 GPU 数量或选择其他机器`);
    const image = await repo.findImage(spec.imageId);
    if (!image || !imageUsableBy(image, owner)) throw notFound('镜像不存在');
    if (image.status !== 'ready' || !image.rootPath) throw conflict(`镜像「${image.name}」尚未就绪，暂不可用`);
    const dataDiskGb = spec.dataDiskGb ?? machine.dataDiskFreeGb;
    if (dataDiskGb < machine.dataDiskFreeGb) throw badRequest(`数据盘不能小于免费赠送的 ${machine.dataDiskFreeGb} GB`);
    if (dataDiskGb > machine.dataDiskMaxGb) throw badRequest(`该机器的数据盘最大为 ${machine.dataDiskMaxGb} GB`);
    return { machine, image, dataDiskGb };
  }

  async function create(owner: Owner, body: Spec & { name?: string }, charge: { chargeType: 'payg' } | { chargeType: 'prepaid'; period: PrepaidPeriod; quantity: number }): Promise<Order> {
    const { machine, dataDiskGb } = await validate(owner, body, { checkFree: true });
    const quote = quoteInstance(machine, body.gpuCount, dataDiskGb, charge);
    await instances.availability();
    const now = clock();
    if ((await repo.countOpen(owner.userId, now)) >= MAX_OPEN_ORDERS) throw tooMany(`未支付的订单已达 ${MAX_OPEN_ORDERS} 个，请先支付或取消已有订单`);
    const row = await repo.insert({
      id: newOrderId(now),
      tenantId: owner.tenantId,
      userId: owner.userId,
      kind: 'new',
      status: 'unpaid',
      chargeType: charge.chargeType,
      period: charge.chargeType === 'prepaid' ? charge.period : null,
      quantity: charge.chargeType === 'prepaid' ? charge.quantity : null,
      machineId: machine.id,
      gpuCount: body.gpuCount,
      imageId: body.imageId,
      dataDiskGb,
      instanceName: body.name ?? '',
      lines: quote.lines,
      amount: quote.total,
      hourly: quote.hourly,
      createdAt: now,
      expiresAt: new Date(now.getTime() + TTL_MS),
    });
    return service.get(owner, row.id);
  }

  /** Why an order can't be paid (or cancelled) in its state, 409. */
  function refuseClosed(o: OrderRow, now: Date, action: '支付' | '取消'): void {
    const status = effectiveStatus(o, now);
    if (status === 'paid') throw conflict(action === '支付' ? '订单已支付，请勿重复支付' : '订单已支付，无法取消');
    if (status === 'cancelled') throw conflict(`订单已取消，无法${action}`);
    if (status === 'expired') throw conflict(`订单已超时（${ORDER_TTL_MINUTES} 分钟内未支付），无法${action}，请重新下单`);
  }

  const service = {
    async preview(owner: Owner, body: Spec & { chargeType: 'payg' | 'prepaid'; period?: PrepaidPeriod; quantity?: number }): Promise<PricePreview> {
      const { machine, dataDiskGb } = await validate(owner, body, { checkFree: false });
      const q = quoteInstance(machine, body.gpuCount, dataDiskGb, body);
      return { lines: q.lines, total: q.total, hourly: q.hourly, requiredBalance: q.requiredBalance };
    },

    createPayg: (owner: Owner, body: Spec & { name?: string }) => create(owner, body, { chargeType: 'payg' }),
    createPrepay: (owner: Owner, body: Spec & { name?: string; period: PrepaidPeriod; quantity: number }) =>
      create(owner, body, { chargeType: 'prepaid', period: body.period, quantity: body.quantity }),

    async get(owner: Owner, id: string): Promise<Order> {
      const v = await repo.findView(id);
      if (!v || v.userId !== owner.userId || v.tenantId !== owner.tenantId) throw notFound('订单不存在');
      return presentOrder(v, clock());
    },

    async list(owner: Owner, q: OrderListQuery & { page: number; pageSize: number }): Promise<OrderPage> {
      const now = clock();
      const r = await repo.page(owner.userId, { status: q.status, kind: q.kind }, now, q.page, q.pageSize);
      return { list: r.list.map((v) => presentOrder(v, now)), total: r.total };
    },

    async cancel(owner: Owner, id: string): Promise<Order> {
      await db.transaction(async (tx) => {
        const r = createOrderRepository(tx);
        const o = await r.lock(id);
        if (!o || o.userId !== owner.userId || o.tenantId !== owner.tenantId) throw notFound('订单不存在');
        const now = clock();
        refuseClosed(o, now, '取消');
        await r.close(id, 'cancelled', now);
      });
      return service.get(owner, id);
    },

    /**
     * Pays an order from the balance, all in one transaction: the order locked (concurrent payers
     * of it queue), its GPUs taken with one conditional UPDATE (of racers for the last GPUs one
     * wins), the prepaid amount debited through the ledger (ref order:<id>), the instance created
     * and its provisioning job enqueued. Any refusal rolls everything back: nothing is charged.
     */
    async pay(owner: Owner, id: string): Promise<Order> {
      // Cheap checks first, outside the transaction; they are repeated under the lock.
      const pre = await repo.findView(id);
      if (!pre || pre.userId !== owner.userId || pre.tenantId !== owner.tenantId) throw notFound('订单不存在');
      refuseClosed(pre, clock(), '支付');
      if (pre.kind !== 'new') {
        await payThroughHandler(owner, pre);
        return service.get(owner, id);
      }
      await instances.availability();
      const password = await instances.preparePassword();
      let charged = false;
      await db.transaction(async (tx) => {
        const r = createOrderRepository(tx);
        const o = await r.lock(id);
        if (!o || o.userId !== owner.userId || o.tenantId !== owner.tenantId) throw notFound('订单不存在');
        const now = clock();
        refuseClosed(o, now, '支付');
        const machine = await r.findMachine(owner.tenantId, o.machineId);
        if (!machine) throw notFound('机器不存在');
        if (!machine.online) throw conflict(`机器 ${machine.hostName} 已下线，暂不可租用，本次未扣费`);
        const image = await r.findImage(o.imageId);
        if (!image || !imageUsableBy(image, owner) || image.status !== 'ready' || !image.rootPath) throw conflict('所选镜像已不可用，请重新下单');
        const { inst, charged: took } = await takeInstance(tx, o, machine, now, password);
        charged = took;
        await r.markPaid(o.id, inst.id, now);
        await countImageUse(tx, image, owner.userId); // Issue #10 (images): another user's shared private image counts one use
      });
      instances.changed(); // committed: drop cached instance lists (see InstanceService.list)
      if (charged) deps.onBalanceChanged?.(owner.userId);
      return service.get(owner, id);
    },

    /** Issue #10: what paying a new-instance order takes and makes, for clone orders (see takeInstance). */
    takeInstance,

    /** Issue #10: the module that creates orders of `kind` pays them through `handler`. */
    registerKind<P>(kind: Exclude<OrderKind, 'new'>, handler: OrderKindHandler<P>): void {
      kindHandlers.set(kind, handler as OrderKindHandler<unknown>);
    },

    /** The expiry task (leader): unpaid orders past their TTL become expired. */
    async expireDue(): Promise<number> {
      return repo.expireDue(clock());
    },
  };
  return service;
}
export type OrderService = ReturnType<typeof createOrderService>;
