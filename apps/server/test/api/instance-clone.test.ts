import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { createTestClock } from '../helpers/clock.ts';
import { createFakeCompute, type FakeCompute } from '../fakes/compute.ts';
import { createInventory } from '../fakes/orders.ts';
import { instances, machines, orders } from '../../src/db/schema/compute.ts';
import { bills } from '../../src/db/schema/metering.ts';
import { ledgerEntries } from '../../src/db/schema/wallet.ts';

const YUAN = 10_000;
const RACERS = 6;

describe.each(engines)('cloning instances on %s', (engine) => {
  let t: TestApp;
  let compute: FakeCompute;
  const clock = createTestClock(new Date());
  beforeAll(async () => {
    compute = createFakeCompute();
    t = await buildTestApp({ engine, clock, overrides: { compute } });
  });
  afterAll(async () => {
    await t.close();
    compute.cleanup();
  });

  const post = (url: string, token: string, payload: object) => t.request({ method: 'POST', url, token, payload });
  const row = async (id: string) => (await t.container.db.select().from(instances).where(eq(instances.id, id)))[0]!;
  const gpuUsed = async (machineId: number) => (await t.container.db.select({ n: machines.gpuUsed }).from(machines).where(eq(machines.id, machineId)))[0]!.n;
  const balanceOf = async (userId: number) => {
    t.container.wallet.forgetBalance(userId);
    return t.container.wallet.balanceOf(userId);
  };

  /** A user's instance, provisioned and (unless `stop: false`) stopped, with a file on its data disk. */
  async function source(opts: { user?: Awaited<ReturnType<typeof createUser>>; balance?: number; stop?: boolean; dataDiskGb?: number } = {}) {
    const u = opts.user ?? (await createUser(t));
    const inv = await createInventory(t);
    await t.container.ledger.post({ tenantId: u.user.tenantId, userId: u.user.id, kind: 'recharge', amount: opts.balance ?? 1000 * YUAN, ref: `test:${Math.random()}` });
    const order = (await post('/api/v1/order/payg', u.token, { machineId: inv.machine.id, gpuCount: 1, imageId: inv.image.id, name: '源实例', ...(opts.dataDiskGb ? { dataDiskGb: opts.dataDiskGb } : {}) })).json().data;
    const paid = await post('/api/v1/order/pay', u.token, { orderId: order.id });
    if (paid.statusCode !== 200) throw new Error(`pay failed: ${paid.body}`);
    const id = paid.json().data.instanceId as string;
    await t.container.jobs.runDue();
    fs.writeFileSync(path.join(compute.instances.get(id)!.dir, 'data', 'hello.txt'), `written in ${id}`);
    if (opts.stop !== false) {
      await post('/api/v1/ide-instance/power_off', u.token, { instanceId: id });
      await t.container.jobs.runDue();
    }
    return { ...u, ...inv, id };
  }

  it('clones a stopped instance pay-as-you-go: an unpaid clone order priced as new, paid, provisioned with cloneFrom; the source is busy meanwhile', async () => {
    const s = await source();
    const target = await createInventory(t, { gpuTotal: 4 });
    const preview = (await post('/api/v1/order/price/preview', s.token, { machineId: target.machine.id, gpuCount: 2, imageId: target.image.id, chargeType: 'payg', dataDiskGb: 60 })).json().data;
    const res = await post('/api/v1/order/instance/clone/payg', s.token, { instanceId: s.id, machineId: target.machine.id, gpuCount: 2, dataDiskGb: 60, name: '克隆体' });
    expect(res.statusCode).toBe(200);
    const order = res.json().data;
    expect(order).toMatchObject({
      kind: 'clone',
      status: 'unpaid',
      chargeType: 'payg',
      machineId: target.machine.id,
      gpuCount: 2,
      dataDiskGb: 60,
      imageId: s.image.id,
      instanceName: '克隆体',
      instanceId: null,
      sourceInstanceId: s.id,
      amount: 0,
      hourly: preview.hourly,
      lines: preview.lines,
    });
    const [stored] = await t.container.db.select().from(orders).where(eq(orders.id, order.id));
    expect(stored!.params).toEqual({ sourceInstanceId: s.id });
    expect(await gpuUsed(target.machine.id)).toBe(0); // an unpaid order holds nothing

    const paid = await post('/api/v1/order/pay', s.token, { orderId: order.id });
    expect(paid.statusCode).toBe(200);
    expect(paid.json().data).toMatchObject({ status: 'paid', kind: 'clone', sourceInstanceId: s.id });
    const cloneId = paid.json().data.instanceId as string;
    expect(cloneId).toMatch(/^i-/);
    expect(await row(cloneId)).toMatchObject({ status: 'creating', cloneSourceId: s.id, machineId: target.machine.id, gpuCount: 2, dataDiskGb: 60, imageId: s.image.id, name: '克隆体', hourly: preview.hourly });
    expect(await gpuUsed(target.machine.id)).toBe(2);
    // The source is busy while its disks are copied.
    const busy = await post('/api/v1/ide-instance/power_on', s.token, { instanceId: s.id });
    expect(busy.statusCode).toBe(409);
    expect(busy.json().msg).toBe(`实例正在被克隆到 ${cloneId}，请等待克隆完成`);
    expect((await post('/api/v1/ide-instance/release', s.token, { instanceId: s.id })).statusCode).toBe(409);

    await t.container.jobs.runDue();
    expect(await row(cloneId)).toMatchObject({ status: 'running', cloneSourceId: s.id });
    expect(compute.calls).toContainEqual({ op: 'cloneFrom', id: cloneId });
    expect(compute.calls).not.toContainEqual({ op: 'create', id: cloneId });
    expect(fs.readFileSync(path.join(compute.instances.get(cloneId)!.dir, 'data', 'hello.txt'), 'utf8')).toBe(`written in ${s.id}`);
    const item = (await t.request({ method: 'GET', url: '/api/v1/instance/list', token: s.token })).json().data.list.find((i: { id: string }) => i.id === cloneId);
    expect(item).toMatchObject({ cloneSourceId: s.id, status: 'running' });
    // Free again.
    expect((await post('/api/v1/ide-instance/power_on', s.token, { instanceId: s.id })).statusCode).toBe(200);
    expect(await t.container.ledger.check(s.user.tenantId)).toEqual([]);
  });

  it('clones prepaid: the amount is debited through the ledger with a prepaid bill; the data disk defaults to the source’s', async () => {
    const s = await source({ dataDiskGb: 80 });
    const target = await createInventory(t);
    const before = await balanceOf(s.user.id);
    const order = (await post('/api/v1/order/instance/clone/prepay', s.token, { instanceId: s.id, machineId: target.machine.id, gpuCount: 1, period: 'week', quantity: 1 })).json().data;
    expect(order).toMatchObject({ kind: 'clone', chargeType: 'prepaid', period: 'week', quantity: 1, dataDiskGb: 80, instanceName: '源实例-克隆' });
    const preview = (await post('/api/v1/order/price/preview', s.token, { machineId: target.machine.id, gpuCount: 1, imageId: target.image.id, chargeType: 'prepaid', period: 'week', quantity: 1, dataDiskGb: 80 })).json().data;
    expect(order.amount).toBe(preview.total);
    expect(order.amount).toBeGreaterThan(0);
    const paid = await post('/api/v1/order/pay', s.token, { orderId: order.id });
    expect(paid.statusCode).toBe(200);
    const cloneId = paid.json().data.instanceId as string;
    expect(await balanceOf(s.user.id)).toBe(before - order.amount);
    const entries = await t.container.db.select().from(ledgerEntries).where(and(eq(ledgerEntries.userId, s.user.id), eq(ledgerEntries.ref, `order:${order.id}`)));
    expect(entries.map((e) => ({ kind: e.kind, amount: Number(e.amount) }))).toEqual([{ kind: 'order_payment', amount: -order.amount }]);
    const [bill] = await t.container.db.select().from(bills).where(eq(bills.instanceId, cloneId));
    expect(bill).toMatchObject({ chargeType: 'prepaid', orderId: order.id });
    expect(Number(bill!.amount)).toBe(order.amount);
    await t.container.jobs.runDue();
    expect(await row(cloneId)).toMatchObject({ status: 'running', chargeType: 'prepaid', expiresAt: expect.any(Date) });
    // Paying twice is refused and charges nothing more.
    expect((await post('/api/v1/order/pay', s.token, { orderId: order.id })).statusCode).toBe(409);
    expect(await balanceOf(s.user.id)).toBe(before - order.amount);
    expect(await t.container.ledger.check(s.user.tenantId)).toEqual([]);
  });

  it('refuses bad clones: a running, foreign, missing or released source; a missing, foreign-tenant or offline machine; no free GPUs; disks out of range; malformed bodies', async () => {
    const s = await source();
    const target = await createInventory(t, { gpuTotal: 4, gpuUsed: 3 });
    const ok = { instanceId: s.id, machineId: target.machine.id, gpuCount: 1 };
    const clone = (token: string, body: object) => post('/api/v1/order/instance/clone/payg', token, body);
    const expectError = async (token: string, body: object, status: number, msg: RegExp | string) => {
      const r = await clone(token, body);
      expect({ status: r.statusCode, msg: r.json().msg }).toEqual({ status, msg: typeof msg === 'string' ? msg : expect.stringMatching(msg) });
    };

    const running = await source({ stop: false });
    await expectError(running.token, { ...ok, instanceId: running.id }, 409, '源实例当前状态为「运行中」，请先关机再克隆');
    const other = await createUser(t);
    await expectError(other.token, ok, 404, '源实例不存在'); // another user's instance: as if missing
    const foreignTenant = await createUser(t, { host: '127.0.0.1' });
    const ft = await t.request({ method: 'POST', url: '/api/v1/order/instance/clone/payg', token: foreignTenant.token, host: '127.0.0.1', payload: ok });
    expect(ft.statusCode).toBe(404);
    await expectError(s.token, { ...ok, instanceId: 'i-zzzzzzzzzz' }, 404, '源实例不存在');
    await expectError(s.token, { ...ok, machineId: 99_999_999 }, 404, '机器不存在');
    const otherTenantMachine = await createInventory(t, { host: '127.0.0.1' });
    await expectError(s.token, { ...ok, machineId: otherTenantMachine.machine.id }, 404, '机器不存在');
    const offline = await createInventory(t, { online: false });
    await expectError(s.token, { ...ok, machineId: offline.machine.id }, 409, /已下线/);
    await expectError(s.token, { ...ok, gpuCount: 2 }, 409, `机器 ${target.machine.hostName} 仅剩 1 张空闲 GPU，请减少 GPU 数量或选择其他机器`);
    const full = await createInventory(t, { gpuTotal: 2, gpuUsed: 2 });
    await expectError(s.token, { ...ok, machineId: full.machine.id }, 409, /没有空闲 GPU，无法克隆到该机器/);
    await expectError(s.token, { ...ok, gpuCount: 5 }, 400, /共 4 张 GPU/);
    const big = await source({ dataDiskGb: 120 });
    await expectError(big.token, { instanceId: big.id, machineId: target.machine.id, gpuCount: 1, dataDiskGb: 100 }, 400, '数据盘不能小于源实例的 120 GB');
    await expectError(s.token, { ...ok, dataDiskGb: 300 }, 400, '该机器的数据盘最大为 200 GB');
    await expectError(s.token, { ...ok, instanceId: 'bad' }, 400, /实例 ID 格式不正确/);
    await expectError(s.token, { ...ok, gpuCount: 0 }, 400, /GPU 数量至少为 1/);
    await expectError(s.token, { ...ok, extra: 1 }, 400, /.+/);
    const prepay = await post('/api/v1/order/instance/clone/prepay', s.token, { ...ok, period: 'day', quantity: 31 });
    expect(prepay.statusCode).toBe(400);
    expect((await post('/api/v1/order/instance/clone/prepay', s.token, ok)).statusCode).toBe(400); // no period
    expect((await t.request({ method: 'POST', url: '/api/v1/order/instance/clone/payg', payload: ok })).statusCode).toBe(401);

    // Released: 404 like missing.
    const gone = await source();
    await post('/api/v1/ide-instance/release', gone.token, { instanceId: gone.id });
    await t.container.jobs.runDue();
    await expectError(gone.token, { ...ok, instanceId: gone.id }, 404, '源实例不存在');
    // Nothing was ordered by any refusal.
    expect(await t.container.db.select().from(orders).where(and(eq(orders.kind, 'clone'), eq(orders.userId, s.user.id)))).toEqual([]);
    expect(await gpuUsed(target.machine.id)).toBe(3);
  });

  it('paying re-checks the source: started, copying, image changed or disk grown since the order → 409, nothing charged, no GPU taken', async () => {
    const s = await source();
    const other = await source({ user: { token: s.token, user: s.user } }); // a second instance of the same user
    const target = await createInventory(t);
    const order = (await post('/api/v1/order/instance/clone/prepay', s.token, { instanceId: s.id, machineId: target.machine.id, gpuCount: 1, period: 'day', quantity: 1 })).json().data;
    const before = await balanceOf(s.user.id);
    await post('/api/v1/ide-instance/power_on', s.token, { instanceId: s.id });
    const started = await post('/api/v1/order/pay', s.token, { orderId: order.id });
    expect(started.statusCode).toBe(409);
    expect(started.json().msg).toBe('源实例当前状态为「启动中」，请先关机再克隆，本次未扣费');
    await t.container.jobs.runDue();
    await post('/api/v1/ide-instance/power_off', s.token, { instanceId: s.id });
    await t.container.jobs.runDue();

    // A data copy from it in progress.
    const copy = await post('/api/v1/instance/copy_data', s.token, { sourceInstanceId: s.id, targetInstanceId: other.id });
    expect(copy.statusCode).toBe(200);
    const copying = await post('/api/v1/order/pay', s.token, { orderId: order.id });
    expect(copying.statusCode).toBe(409);
    expect(copying.json().msg).toMatch(/数据拷贝.*本次未扣费/);
    await t.container.jobs.runDue();

    await t.container.db.update(instances).set({ imageId: other.image.id }).where(eq(instances.id, s.id));
    const reimaged = await post('/api/v1/order/pay', s.token, { orderId: order.id });
    expect(reimaged.statusCode).toBe(409);
    expect(reimaged.json().msg).toBe('源实例在下单后更换了镜像，请重新下单，本次未扣费');
    await t.container.db.update(instances).set({ imageId: s.image.id }).where(eq(instances.id, s.id));

    await t.container.db.update(instances).set({ dataDiskGb: 150 }).where(eq(instances.id, s.id));
    const grown = await post('/api/v1/order/pay', s.token, { orderId: order.id });
    expect(grown.statusCode).toBe(409);
    expect(grown.json().msg).toMatch(/数据盘已扩容到 150 GB/);
    await t.container.db.update(instances).set({ dataDiskGb: 50 }).where(eq(instances.id, s.id));

    expect(await balanceOf(s.user.id)).toBe(before);
    expect(await gpuUsed(target.machine.id)).toBe(0);
    // Now it goes through.
    const paid = await post('/api/v1/order/pay', s.token, { orderId: order.id });
    expect(paid.statusCode).toBe(200);
    expect(await balanceOf(s.user.id)).toBe(before - order.amount);
    await t.container.jobs.runDue();
    expect((await row(paid.json().data.instanceId)).status).toBe('running');
    expect(await t.container.ledger.check(s.user.tenantId)).toEqual([]);
  });

  it('a clone whose copy fails ends failed, frees its GPUs, refunds the prepaid amount once, and frees the source', async () => {
    const s = await source();
    const target = await createInventory(t);
    const before = await balanceOf(s.user.id);
    const order = (await post('/api/v1/order/instance/clone/prepay', s.token, { instanceId: s.id, machineId: target.machine.id, gpuCount: 1, period: 'day', quantity: 1 })).json().data;
    compute.switches.failCreate = 1; // cloneFrom fails (not retryable)
    const cloneId = (await post('/api/v1/order/pay', s.token, { orderId: order.id })).json().data.instanceId as string;
    await t.container.jobs.runDue();
    expect(await row(cloneId)).toMatchObject({ status: 'failed', gpuHeld: false, statusReason: expect.stringContaining('创建失败') });
    expect(await gpuUsed(target.machine.id)).toBe(0);
    expect(await balanceOf(s.user.id)).toBe(before);
    expect((await post('/api/v1/ide-instance/power_on', s.token, { instanceId: s.id })).statusCode).toBe(200);
    expect(await t.container.ledger.check(s.user.tenantId)).toEqual([]);
  });

  it(`${RACERS} users cloning onto the machine’s last GPU at once: one wins, the others get 409 and pay nothing; balance == ledger`, async () => {
    const target = await createInventory(t, { gpuTotal: 4, gpuUsed: 3 });
    // Sources one after another (each runs the job queue), then the orders, then the payments at once.
    const sources: Awaited<ReturnType<typeof source>>[] = [];
    for (let i = 0; i < RACERS; i++) sources.push(await source({ balance: 500 * YUAN }));
    const racers = await Promise.all(
      sources.map(async (s, i) => {
        const kind = i % 2 === 0 ? 'prepay' : 'payg';
        const body = { instanceId: s.id, machineId: target.machine.id, gpuCount: 1, ...(kind === 'prepay' ? { period: 'day', quantity: 1 } : {}) };
        const res = await post(`/api/v1/order/instance/clone/${kind}`, s.token, body);
        if (res.statusCode !== 200) throw new Error(`clone order failed: ${res.body}`);
        return { ...s, order: res.json().data as { id: string; amount: number }, balance: await balanceOf(s.user.id) };
      }),
    );
    const answers = await Promise.all(racers.map((r) => post('/api/v1/order/pay', r.token, { orderId: r.order.id })));
    expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(1);
    for (const a of answers.filter((x) => x.statusCode !== 200)) {
      expect(a.statusCode).toBe(409);
      expect(a.json().msg).toMatch(/^GPU 已被抢完：.*本次未扣费/);
    }
    expect(await gpuUsed(target.machine.id)).toBe(4);
    expect(await t.container.db.select().from(instances).where(eq(instances.machineId, target.machine.id))).toHaveLength(1);
    for (const [i, r] of racers.entries()) {
      const won = answers[i]!.statusCode === 200;
      expect(await balanceOf(r.user.id)).toBe(won ? r.balance - r.order.amount : r.balance);
    }
    await t.container.jobs.runDue();
    expect(await t.container.ledger.check(racers[0]!.user.tenantId)).toEqual([]);
  });
});
