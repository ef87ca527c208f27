import type { Order, PrepaidPeriod } from '@suanli/contract/order';
import type { ClonePaygBody, ClonePrepayBody } from '@suanli/contract/instance-ops';
import { INSTANCE_STATE_LABELS } from '@suanli/domain/instance-state';
import type { Db, Tx } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound, tooMany } from '../../lib/errors.ts';
import { createOrderRepository, type OrderRow } from '../order/order.repository.ts';
import { MAX_OPEN_ORDERS, newOrderId, ORDER_TTL_MS, type OrderService } from '../order/order.service.ts';
import { quoteInstance } from '../order/order-pricing.ts';
import { createInstanceRepository, type InstanceRow } from './instance.repository.ts';
import { createDataCopyRepository } from './data-copy.repository.ts';
import type { InstanceService, NewInstance } from './instance.service.ts';

type Owner = { tenantId: number; userId: number };

/** The source instance of a clone order (orders.params.sourceInstanceId). */
const sourceOf = (o: Pick<OrderRow, 'params'>): string => {
  const id = o.params?.sourceInstanceId;
  if (typeof id !== 'string') throw conflict('克隆订单缺少源实例，请重新下单');
  return id;
};

/**
 * Issue #10, clone (/control/clone; docs/instance-operations.md): a new-instance order of kind
 * `clone` on a chosen machine of the tenant, priced exactly as a new order. Paying it (POST
 * /api/v1/order/pay, through the OrderKindHandler registered here) re-checks that the source is
 * still the user's and stopped, takes the GPUs, debits a prepaid amount through the ledger and
 * creates the instance with `cloneSourceId`: provisioning copies the source's disks
 * (ComputeDriver.cloneFrom), and the source stays busy until it is done.
 */
export function createCloneService(deps: { db: Db; clock: Clock; instances: InstanceService; orders: OrderService }) {
  const { db, clock, instances, orders } = deps;
  const repo = createOrderRepository(db);

  /** The caller's source instance: stopped, not busy. 404 for a foreign, missing or released one. */
  async function checkSource(r: ReturnType<typeof createInstanceRepository>, owner: Owner, src: InstanceRow | undefined, copies: ReturnType<typeof createDataCopyRepository>, at: 'order' | 'pay'): Promise<InstanceRow> {
    if (!src || src.userId !== owner.userId || src.tenantId !== owner.tenantId || src.status === 'released') throw notFound('源实例不存在');
    const unpaid = at === 'pay' ? '，本次未扣费' : '';
    if (src.status !== 'stopped') throw conflict(`源实例当前状态为「${INSTANCE_STATE_LABELS[src.status]}」，请先关机再克隆${unpaid}`);
    const active = await copies.countActiveFor(src.id);
    if (active > 0) throw conflict(`源实例正在进行数据拷贝，请等待拷贝完成或先终止拷贝后再克隆${unpaid}`);
    const image = await r.image(src.imageId);
    if (!image || image.status !== 'ready' || !image.rootPath) throw conflict(`源实例的镜像已不可用，无法克隆${unpaid}`);
    return src;
  }

  async function create(owner: Owner, body: ClonePaygBody, charge: { chargeType: 'payg' } | { chargeType: 'prepaid'; period: PrepaidPeriod; quantity: number }): Promise<Order> {
    const ir = createInstanceRepository(db);
    const source = await checkSource(ir, owner, await ir.find(body.instanceId), createDataCopyRepository(db), 'order');
    const machine = await repo.findMachine(owner.tenantId, body.machineId);
    if (!machine) throw notFound('机器不存在');
    if (!machine.online) throw conflict(`机器 ${machine.hostName} 已下线，无法克隆到该机器`);
    if (body.gpuCount > machine.gpuTotal) throw badRequest(`该机器共 ${machine.gpuTotal} 张 GPU，GPU 数量最多为 ${Math.min(8, machine.gpuTotal)}`);
    const free = machine.gpuTotal - machine.gpuUsed;
    if (free < body.gpuCount) {
      throw conflict(free === 0 ? `机器 ${machine.hostName} 没有空闲 GPU，无法克隆到该机器，请选择其他机器` : `机器 ${machine.hostName} 仅剩 ${free} 张空闲 GPU，请减少 GPU 数量或选择其他机器`);
    }
    const dataDiskGb = body.dataDiskGb ?? Math.max(source.dataDiskGb, machine.dataDiskFreeGb);
    if (dataDiskGb < source.dataDiskGb) throw badRequest(`数据盘不能小于源实例的 ${source.dataDiskGb} GB`);
    if (dataDiskGb < machine.dataDiskFreeGb) throw badRequest(`数据盘不能小于免费赠送的 ${machine.dataDiskFreeGb} GB`);
    if (dataDiskGb > machine.dataDiskMaxGb) {
      throw badRequest(source.dataDiskGb > machine.dataDiskMaxGb ? `该机器的数据盘最大为 ${machine.dataDiskMaxGb} GB，小于源实例的 ${source.dataDiskGb} GB，请选择其他机器` : `该机器的数据盘最大为 ${machine.dataDiskMaxGb} GB`);
    }
    const quote = quoteInstance(machine, body.gpuCount, dataDiskGb, charge);
    await instances.availability();
    const now = clock();
    if ((await repo.countOpen(owner.userId, now)) >= MAX_OPEN_ORDERS) throw tooMany(`未支付的订单已达 ${MAX_OPEN_ORDERS} 个，请先支付或取消已有订单`);
    const row = await repo.insert({
      id: newOrderId(now),
      tenantId: owner.tenantId,
      userId: owner.userId,
      kind: 'clone',
      status: 'unpaid',
      chargeType: charge.chargeType,
      period: charge.chargeType === 'prepaid' ? charge.period : null,
      quantity: charge.chargeType === 'prepaid' ? charge.quantity : null,
      machineId: machine.id,
      gpuCount: body.gpuCount,
      imageId: source.imageId,
      dataDiskGb,
      instanceName: body.name || `${source.name}-克隆`.slice(0, 32),
      params: { sourceInstanceId: source.id },
      lines: quote.lines,
      amount: quote.total,
      hourly: quote.hourly,
      instanceId: null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + ORDER_TTL_MS),
    });
    return orders.get(owner, row.id);
  }

  /** Paying a clone order, like a new one (order.service.ts `pay`), inside the order's transaction. */
  orders.registerKind<NewInstance['password']>('clone', {
    async prepare() {
      await instances.availability();
      return instances.preparePassword();
    },
    async pay(tx: Tx, o: OrderRow, now: Date, password) {
      const owner = { tenantId: o.tenantId, userId: o.userId };
      const ir = createInstanceRepository(tx);
      const or = createOrderRepository(tx);
      // The source first, under its row lock: a start, release or second clone racing this one waits.
      const source = await checkSource(ir, owner, await ir.lock(sourceOf(o)), createDataCopyRepository(tx), 'pay');
      if (source.imageId !== o.imageId) throw conflict('源实例在下单后更换了镜像，请重新下单，本次未扣费');
      if (source.dataDiskGb > o.dataDiskGb) throw conflict(`源实例的数据盘已扩容到 ${source.dataDiskGb} GB，大于订单的 ${o.dataDiskGb} GB，请重新下单，本次未扣费`);
      const machine = await or.findMachine(o.tenantId, o.machineId);
      if (!machine) throw notFound('机器不存在');
      if (!machine.online) throw conflict(`机器 ${machine.hostName} 已下线，无法克隆到该机器，本次未扣费`);
      const { inst, charged } = await orders.takeInstance(tx, o, machine, now, password, source.id);
      return { instanceId: inst.id, charged };
    },
  });

  return {
    /** POST /api/v1/order/instance/clone/payg */
    createPayg: (owner: Owner, body: ClonePaygBody) => create(owner, body, { chargeType: 'payg' }),
    /** POST /api/v1/order/instance/clone/prepay */
    createPrepay: (owner: Owner, body: ClonePrepayBody) => create(owner, body, { chargeType: 'prepaid', period: body.period, quantity: body.quantity }),
  };
}
export type CloneService = ReturnType<typeof createCloneService>;

