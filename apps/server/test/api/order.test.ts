import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { createTestClock } from '../helpers/clock.ts';
import { createFakeCompute, type FakeCompute } from '../fakes/compute.ts';
import { createFakeMeter, createInventory, type FakeMeter } from '../fakes/orders.ts';
import { instances, machines, orders } from '../../src/db/schema/compute.ts';
import { ledgerEntries } from '../../src/db/schema/wallet.ts';

const YUAN = 10_000;

describe.each(engines)('orders on %s', (engine) => {
  let t: TestApp;
  let compute: FakeCompute;
  let meter: FakeMeter;
  const clock = createTestClock(new Date());
  beforeAll(async () => {
    compute = createFakeCompute();
    meter = createFakeMeter();
    t = await buildTestApp({ engine, clock, overrides: { compute, meter } });
  });
  afterAll(async () => {
    await t.close();
    compute.cleanup();
  });

  const credit = (u: { id: number; tenantId: number }, amount: number, ref = `test:${Math.random()}`) => t.container.ledger.post({ tenantId: u.tenantId, userId: u.id, kind: 'recharge', amount, ref });
  const post = (url: string, token: string, payload: object, headers: Record<string, string> = {}) => t.request({ method: 'POST', url, token, payload, headers });
  const balance = async (token: string, userId: number) => {
    t.container.wallet.forgetBalance(userId);
    return (await t.request({ method: 'GET', url: '/api/v1/account/balance', token })).json().data.balance as number;
  };
  const gpuUsed = async (machineId: number) => (await t.container.db.select({ n: machines.gpuUsed }).from(machines).where(eq(machines.id, machineId)))[0]!.n;

  it('previews pay-as-you-go and prepaid prices with Chinese lines', async () => {
    const { token } = await createUser(t);
    const { machine, image, gpuType } = await createInventory(t);
    const payg = await post('/api/v1/order/price/preview', token, { machineId: machine.id, gpuCount: 2, imageId: image.id, dataDiskGb: 60, chargeType: 'payg' });
    expect(payg.statusCode).toBe(200);
    expect(payg.json().data).toEqual({
      lines: [
        { label: `${gpuType.name} × 2，按量计费（每小时）`, amount: 72_000 },
        { label: '数据盘扩容 10 GB（每小时）', amount: 42 },
      ],
      total: 0,
      hourly: 72_042,
      requiredBalance: 72_042,
    });
    const prepaid = await post('/api/v1/order/price/preview', token, { machineId: machine.id, gpuCount: 1, imageId: image.id, chargeType: 'prepaid', period: 'week', quantity: 2 });
    expect(prepaid.json().data).toMatchObject({ total: 10_000_000, hourly: 0, lines: [{ label: `${gpuType.name} × 1，按周 × 2（2 周）`, amount: 10_000_000 }] });
  });

  it('refuses every bad order with a clear Chinese message and the right status', async () => {
    const { token } = await createUser(t);
    const inv = await createInventory(t, { gpuTotal: 4 });
    const offline = await createInventory(t, { online: false });
    const soldOut = await createInventory(t, { gpuTotal: 2, gpuUsed: 2 });
    const building = await createInventory(t, { imageStatus: 'building' });
    const foreign = await createInventory(t, { host: '127.0.0.1' });
    const otherTenantImage = await createInventory(t, { imageTenantId: foreign.tenant.id });
    const base = { machineId: inv.machine.id, gpuCount: 1, imageId: inv.image.id };
    const cases: [object, number, RegExp][] = [
      [{ ...base, gpuCount: 0 }, 400, /GPU 数量至少为 1/],
      [{ ...base, gpuCount: 9 }, 400, /GPU 数量最多为 8/],
      [{ ...base, gpuCount: 5 }, 400, /该机器共 4 张 GPU/],
      [{ ...base, gpuCount: 1.5 }, 400, /GPU 数量必须是整数/],
      [{ ...base, machineId: 99_999_999 }, 404, /机器不存在/],
      [{ ...base, machineId: foreign.machine.id }, 404, /机器不存在/],
      [{ ...base, machineId: offline.machine.id, imageId: offline.image.id }, 409, /已下线/],
      [{ ...base, machineId: soldOut.machine.id, imageId: soldOut.image.id }, 409, /GPU 已售罄/],
      [{ ...base, imageId: 99_999_999 }, 404, /镜像不存在/],
      [{ ...base, imageId: building.image.id }, 409, /尚未就绪/],
      [{ ...base, imageId: otherTenantImage.image.id }, 404, /镜像不存在/],
      [{ ...base, dataDiskGb: 20 }, 400, /数据盘不能小于免费赠送的 50 GB/],
      [{ ...base, dataDiskGb: 201 }, 400, /数据盘最大为 200 GB/],
      [{ ...base, machineId: 'x' }, 400, /机器必须是数字/],
      [{ ...base, extra: 1 }, 400, /./],
    ];
    for (const [body, status, msg] of cases) {
      const res = await post('/api/v1/order/payg', token, body);
      expect({ body, status: res.statusCode, msg: res.json().msg }).toMatchObject({ body, status, msg: expect.stringMatching(msg) });
      expect(res.json()).toMatchObject({ data: null, requestId: expect.any(String) });
    }
    const quantity = await post('/api/v1/order/prepay', token, { ...base, period: 'year', quantity: 4 });
    expect(quantity.statusCode).toBe(400);
    expect(quantity.json().msg).toMatch(/最多可购买 3 个周期/);
    const noPeriod = await post('/api/v1/order/price/preview', token, { ...base, chargeType: 'prepaid' });
    expect(noPeriod.statusCode).toBe(400);
    expect(noPeriod.json().msg).toMatch(/请选择时长/);
    const anon = await t.request({ method: 'POST', url: '/api/v1/order/payg', payload: base });
    expect(anon.statusCode).toBe(401);
    // Nothing was written by any refusal.
    expect(await t.container.db.select().from(orders).where(eq(orders.machineId, inv.machine.id))).toEqual([]);
  });

  it('creates an unpaid order that holds nothing, shows it, lists it and lets its owner alone see it', async () => {
    const { token } = await createUser(t);
    const other = await createUser(t);
    const { machine, image } = await createInventory(t, { gpuTotal: 2 });
    const res = await post('/api/v1/order/payg', token, { machineId: machine.id, gpuCount: 2, imageId: image.id, name: '训练机' });
    expect(res.statusCode).toBe(200);
    const order = res.json().data;
    expect(order).toMatchObject({ kind: 'new', status: 'unpaid', chargeType: 'payg', gpuCount: 2, dataDiskGb: 50, instanceName: '训练机', amount: 0, hourly: 72_000, instanceId: null, hostName: machine.hostName });
    expect(order.id).toMatch(/^\d{20}$/);
    expect(new Date(order.expiresAt).getTime() - new Date(order.createdAt).getTime()).toBe(15 * 60_000);
    expect(await gpuUsed(machine.id)).toBe(0);
    expect((await t.request({ method: 'GET', url: `/api/v1/order/${order.id}`, token })).json().data).toEqual(order);
    const list = (await post('/api/v1/order/list', token, { page: 1, pageSize: 10 })).json().data;
    expect(list.total).toBe(1);
    expect(list.list[0].id).toBe(order.id);
    expect((await post('/api/v1/order/list', token, { status: 'paid' })).json().data.total).toBe(0);
    // Another user: 404 like a missing order, for reading, paying and cancelling.
    expect((await t.request({ method: 'GET', url: `/api/v1/order/${order.id}`, token: other.token })).statusCode).toBe(404);
    expect((await post('/api/v1/order/pay', other.token, { orderId: order.id })).statusCode).toBe(404);
    expect((await t.request({ method: 'PUT', url: `/api/v1/order/${order.id}/cancel`, token: other.token })).statusCode).toBe(404);
    expect((await t.request({ method: 'GET', url: '/api/v1/order/12345678901234567890', token })).statusCode).toBe(404);
    expect((await t.request({ method: 'GET', url: '/api/v1/order/abc', token })).statusCode).toBe(400);
    // Another tenant's user can't see it either.
    const foreign = await createUser(t, { host: '127.0.0.1' });
    expect((await t.request({ method: 'GET', url: `/api/v1/order/${order.id}`, token: foreign.token, host: '127.0.0.1' })).statusCode).toBe(404);
  });

  it('pays pay-as-you-go only with one hour of balance, then reserves the GPUs and provisions the instance', async () => {
    const { token, user } = await createUser(t);
    const { machine, image } = await createInventory(t, { gpuTotal: 4 });
    const order = (await post('/api/v1/order/payg', token, { machineId: machine.id, gpuCount: 2, imageId: image.id })).json().data;
    await credit(user, 5 * YUAN);
    const short = await post('/api/v1/order/pay', token, { orderId: order.id });
    expect(short.statusCode).toBe(409);
    expect(short.json().msg).toBe('余额不足：按量计费需账户余额至少可支付一小时的费用 ¥7.20，还差 ¥2.20，请先充值');
    expect(await gpuUsed(machine.id)).toBe(0);
    expect((await t.request({ method: 'GET', url: `/api/v1/order/${order.id}`, token })).json().data.status).toBe('unpaid');

    await credit(user, 10 * YUAN);
    const paid = await post('/api/v1/order/pay', token, { orderId: order.id });
    expect(paid.statusCode).toBe(200);
    expect(paid.json().data).toMatchObject({ status: 'paid', instanceId: expect.stringMatching(/^i-[a-z0-9]{10}$/), paidAt: expect.any(String) });
    expect(await gpuUsed(machine.id)).toBe(2);
    expect(await balance(token, user.id)).toBe(15 * YUAN); // pay-as-you-go takes nothing up front
    const instanceId = paid.json().data.instanceId as string;
    const [row] = await t.container.db.select().from(instances).where(eq(instances.id, instanceId));
    expect(row).toMatchObject({ status: 'creating', gpuHeld: true, cpuCores: 4, memoryGb: 8, hourly: 72_000, chargeType: 'payg' });
    expect(row!.passwordSealed).not.toContain(row!.passwordHash);
    await t.container.jobs.runDue();
    const [after] = await t.container.db.select().from(instances).where(eq(instances.id, instanceId));
    expect(after!.status).toBe('running');
    expect(compute.instances.get(instanceId)?.spec).toMatchObject({ hostname: instanceId, cpuCores: 4, memoryBytes: 8 * 1024 ** 3, dataDiskBytes: 50 * 1024 ** 3, banner: expect.stringContaining('演示机器：无物理 GPU') });
    expect(meter.calls).toContainEqual(expect.objectContaining({ op: 'started', instance: expect.objectContaining({ id: instanceId, hourly: 72_000, chargeType: 'payg' }) }));

    const twice = await post('/api/v1/order/pay', token, { orderId: order.id });
    expect(twice.statusCode).toBe(409);
    expect(twice.json().msg).toBe('订单已支付，请勿重复支付');
    expect(await gpuUsed(machine.id)).toBe(2);
    expect(await t.container.ledger.check(user.tenantId)).toEqual([]);
  });

  it('pays a prepaid order by debiting the balance once through the ledger, and bills it once', async () => {
    const { token, user } = await createUser(t);
    const { machine, image } = await createInventory(t);
    const order = (await post('/api/v1/order/prepay', token, { machineId: machine.id, gpuCount: 1, imageId: image.id, period: 'day', quantity: 2, dataDiskGb: 70 })).json().data;
    expect(order.amount).toBe(2 * 800_000 + 20 * 100 * 2);
    await credit(user, 100 * YUAN);
    const short = await post('/api/v1/order/pay', token, { orderId: order.id });
    expect(short.statusCode).toBe(409);
    expect(short.json().msg).toBe('余额不足，还差 ¥60.40，请先充值');
    expect(await gpuUsed(machine.id)).toBe(0);
    await credit(user, 100 * YUAN);
    const paid = await post('/api/v1/order/pay', token, { orderId: order.id });
    expect(paid.statusCode).toBe(200);
    expect(await balance(token, user.id)).toBe(200 * YUAN - order.amount);
    const entries = await t.container.db.select().from(ledgerEntries).where(and(eq(ledgerEntries.userId, user.id), eq(ledgerEntries.kind, 'order_payment')));
    expect(entries.map((e) => ({ amount: e.amount, ref: e.ref }))).toEqual([{ amount: -order.amount, ref: `order:${order.id}` }]);
    const instanceId = paid.json().data.instanceId as string;
    const bill = meter.calls.find((c) => c.op === 'prepaidPaid' && c.bill.orderId === order.id);
    expect(bill).toMatchObject({ bill: { instanceId, amount: order.amount, userId: user.id } });
    const [row] = await t.container.db.select().from(instances).where(eq(instances.id, instanceId));
    expect(row!.expiresAt!.getTime() - row!.createdAt.getTime()).toBe(2 * 86_400_000);
    expect(await t.container.ledger.check(user.tenantId)).toEqual([]);
  });

  it('expires unpaid orders after 15 minutes (at once for reads, and by the expiry task); cancels only unpaid ones', async () => {
    const { token, user } = await createUser(t);
    const { machine, image } = await createInventory(t);
    await credit(user, 1000 * YUAN);
    const a = (await post('/api/v1/order/payg', token, { machineId: machine.id, gpuCount: 1, imageId: image.id })).json().data;
    const b = (await post('/api/v1/order/payg', token, { machineId: machine.id, gpuCount: 1, imageId: image.id })).json().data;
    const cancelled = await t.request({ method: 'PUT', url: `/api/v1/order/${b.id}/cancel`, token });
    expect(cancelled.json().data).toMatchObject({ status: 'cancelled', closedAt: expect.any(String) });
    const payCancelled = await post('/api/v1/order/pay', token, { orderId: b.id });
    expect(payCancelled.statusCode).toBe(409);
    expect(payCancelled.json().msg).toBe('订单已取消，无法支付');
    expect((await t.request({ method: 'PUT', url: `/api/v1/order/${b.id}/cancel`, token })).statusCode).toBe(409);

    clock.advanceMinutes(16);
    expect((await t.request({ method: 'GET', url: `/api/v1/order/${a.id}`, token })).json().data.status).toBe('expired');
    expect((await post('/api/v1/order/list', token, { status: 'expired' })).json().data.list.map((o: { id: string }) => o.id)).toEqual([a.id]);
    const late = await post('/api/v1/order/pay', token, { orderId: a.id });
    expect(late.statusCode).toBe(409);
    expect(late.json().msg).toBe('订单已超时（15 分钟内未支付），无法支付，请重新下单');
    expect((await t.request({ method: 'PUT', url: `/api/v1/order/${a.id}/cancel`, token })).statusCode).toBe(409);
    expect(await t.container.orders.expireDue()).toBeGreaterThanOrEqual(1);
    const [row] = await t.container.db.select().from(orders).where(eq(orders.id, a.id));
    expect(row!.status).toBe('expired');
    expect(await gpuUsed(machine.id)).toBe(0);
    expect(await balance(token, user.id)).toBe(1000 * YUAN);
    const task = t.container.scheduledTasks.find((s) => s.name === 'order.expire');
    expect(task).toBeDefined();
  });

  it('limits how many unpaid orders one user may hold open', async () => {
    const { token } = await createUser(t);
    const { machine, image } = await createInventory(t);
    const body = { machineId: machine.id, gpuCount: 1, imageId: image.id };
    for (let i = 0; i < 20; i++) expect((await post('/api/v1/order/payg', token, body)).statusCode).toBe(200);
    const over = await post('/api/v1/order/payg', token, body);
    expect(over.statusCode).toBe(429);
    expect(over.json().msg).toBe('未支付的订单已达 20 个，请先支付或取消已有订单');
    const first = (await post('/api/v1/order/list', token, { pageSize: 1 })).json().data.list[0];
    await t.request({ method: 'PUT', url: `/api/v1/order/${first.id}/cancel`, token });
    expect((await post('/api/v1/order/payg', token, body)).statusCode).toBe(200);
  });

  it('refuses to take an order or money while the compute driver is unavailable', async () => {
    const { token, user } = await createUser(t);
    const { machine, image } = await createInventory(t);
    await credit(user, 100 * YUAN);
    const order = (await post('/api/v1/order/prepay', token, { machineId: machine.id, gpuCount: 1, imageId: image.id, period: 'day', quantity: 1 })).json().data;
    compute.switches.unavailable = '缺少 bubblewrap，请以 root 运行 npm start 安装';
    try {
      const create = await post('/api/v1/order/payg', token, { machineId: machine.id, gpuCount: 1, imageId: image.id });
      expect(create.statusCode).toBe(409);
      expect(create.json().msg).toBe('暂时无法启动实例：缺少 bubblewrap，请以 root 运行 npm start 安装');
      const pay = await post('/api/v1/order/pay', token, { orderId: order.id });
      expect(pay.statusCode).toBe(409);
      expect(await balance(token, user.id)).toBe(100 * YUAN);
      expect(await gpuUsed(machine.id)).toBe(0);
    } finally {
      compute.switches.unavailable = undefined;
    }
  });

  it('replays a paid answer for the same Idempotency-Key and charges once', async () => {
    const { token, user } = await createUser(t);
    const { machine, image } = await createInventory(t);
    await credit(user, 100 * YUAN);
    const order = (await post('/api/v1/order/prepay', token, { machineId: machine.id, gpuCount: 1, imageId: image.id, period: 'day', quantity: 1 })).json().data;
    const first = await post('/api/v1/order/pay', token, { orderId: order.id }, { 'idempotency-key': `pay-${order.id}` });
    const again = await post('/api/v1/order/pay', token, { orderId: order.id }, { 'idempotency-key': `pay-${order.id}` });
    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().data.instanceId).toBe(first.json().data.instanceId);
    expect(await balance(token, user.id)).toBe(100 * YUAN - 800_000);
    expect(await gpuUsed(machine.id)).toBe(1);
    expect(await t.container.ledger.check(user.tenantId)).toEqual([]);
  });
});
