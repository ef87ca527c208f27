import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { NO_GPU_CPU_CORES, NO_GPU_HOURLY, NO_GPU_MEMORY_GB } from '@suanli/contract/instance-ops';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { createTestClock } from '../helpers/clock.ts';
import { createFakeCompute, type FakeCompute } from '../fakes/compute.ts';
import { createInventory } from '../fakes/orders.ts';
import { dataCopies, instances, machines } from '../../src/db/schema/compute.ts';
import { instanceMeters } from '../../src/db/schema/metering.ts';
import { ledgerEntries } from '../../src/db/schema/wallet.ts';

const YUAN = 10_000;
const HOUR = 3_600_000;
const GIB = 1024 ** 3;

/** No-GPU mode (无卡模式), with the real metering service (no meter override). */
describe.each(engines)('no-GPU mode on %s', (engine) => {
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
  const setGpuUsed = (machineId: number, n: number) => t.container.db.update(machines).set({ gpuUsed: n }).where(eq(machines.id, machineId));
  const balanceOf = async (userId: number) => {
    t.container.wallet.forgetBalance(userId);
    return t.container.wallet.balanceOf(userId);
  };
  const charges = async (userId: number) =>
    (await t.container.db.select().from(ledgerEntries).where(and(eq(ledgerEntries.userId, userId), eq(ledgerEntries.kind, 'payg_charge')))).reduce((n, e) => n - Number(e.amount), 0);

  async function rentStopped(opts: { chargeType?: 'payg' | 'prepaid'; balance?: number; gpuTotal?: number } = {}) {
    const u = await createUser(t);
    const inv = await createInventory(t, { gpuTotal: opts.gpuTotal ?? 1 });
    await t.container.ledger.post({ tenantId: u.user.tenantId, userId: u.user.id, kind: 'recharge', amount: opts.balance ?? 100 * YUAN, ref: `test:${Math.random()}` });
    const spec = { machineId: inv.machine.id, gpuCount: 1, imageId: inv.image.id, name: '无卡测试' };
    const prepaid = opts.chargeType === 'prepaid';
    const order = (await post(prepaid ? '/api/v1/order/prepay' : '/api/v1/order/payg', u.token, prepaid ? { ...spec, period: 'day', quantity: 1 } : spec)).json().data;
    const paid = await post('/api/v1/order/pay', u.token, { orderId: order.id });
    if (paid.statusCode !== 200) throw new Error(`pay failed: ${paid.body}`);
    const id = paid.json().data.instanceId as string;
    await t.container.jobs.runDue();
    await post('/api/v1/ide-instance/power_off', u.token, { instanceId: id });
    await t.container.jobs.runDue();
    return { ...u, ...inv, id };
  }

  it('starts a stopped pay-as-you-go instance without GPUs while the machine’s GPUs are taken, billed at NO_GPU_HOURLY, then normally again', async () => {
    const r = await rentStopped({ balance: 100 * YUAN });
    const before = await balanceOf(r.user.id);
    const chargedBefore = await charges(r.user.id);
    // Someone else takes the only GPU: a normal start is refused, a no-GPU start is not.
    await setGpuUsed(r.machine.id, 1);
    expect((await post('/api/v1/ide-instance/power_on', r.token, { instanceId: r.id })).statusCode).toBe(409);
    const on = await post('/api/v1/ide-instance/power_on', r.token, { instanceId: r.id, noGpu: true });
    expect(on.statusCode).toBe(200);
    expect(on.json().data).toMatchObject({ status: 'starting', noGpu: true });
    expect(await row(r.id)).toMatchObject({ gpuHeld: false, noGpu: true });
    expect(await gpuUsed(r.machine.id)).toBe(1);
    await t.container.jobs.runDue();
    expect(await row(r.id)).toMatchObject({ status: 'running', gpuHeld: false, noGpu: true });
    const spec = compute.instances.get(r.id)!.spec;
    expect(spec).toMatchObject({ gpuDevices: [], cpuCores: NO_GPU_CPU_CORES, memoryBytes: NO_GPU_MEMORY_GB * GIB });
    expect(spec.banner).toContain('无卡模式');
    // The list shows the mode.
    const listed = (await t.request({ method: 'GET', url: '/api/v1/instance/list', token: r.token })).json().data.list[0];
    expect(listed).toMatchObject({ id: r.id, status: 'running', noGpu: true });
    const [meter] = await t.container.db.select().from(instanceMeters).where(eq(instanceMeters.instanceId, r.id));
    expect(meter!.hourly).toBe(NO_GPU_HOURLY);

    // One hour at ¥0.10.
    clock.advance(HOUR);
    await t.container.metering.tick();
    expect((await charges(r.user.id)) - chargedBefore).toBe(NO_GPU_HOURLY);
    expect(await balanceOf(r.user.id)).toBe(before - NO_GPU_HOURLY);

    // Stopping ends the mode and frees nothing (it held nothing).
    await post('/api/v1/ide-instance/power_off', r.token, { instanceId: r.id });
    await t.container.jobs.runDue();
    expect(await row(r.id)).toMatchObject({ status: 'stopped', noGpu: false, gpuHeld: false });
    expect(await gpuUsed(r.machine.id)).toBe(1);
    await t.container.metering.tick();

    // The GPU is free again: a normal start takes it and is billed at the instance's own price.
    await setGpuUsed(r.machine.id, 0);
    const normal = await post('/api/v1/ide-instance/power_on', r.token, { instanceId: r.id });
    expect(normal.json().data).toMatchObject({ status: 'starting', noGpu: false });
    await t.container.jobs.runDue();
    expect(await row(r.id)).toMatchObject({ status: 'running', noGpu: false, gpuHeld: true });
    expect(compute.instances.get(r.id)!.spec.banner).not.toContain('无卡模式');
    const hourly = (await row(r.id)).hourly;
    const mid = await charges(r.user.id);
    clock.advance(HOUR);
    await t.container.metering.tick();
    expect((await charges(r.user.id)) - mid).toBe(hourly);
    expect(await balanceOf(r.user.id)).toBe(before - NO_GPU_HOURLY - hourly);
    expect(await t.container.ledger.check(r.user.tenantId)).toEqual([]);
  });

  it('refuses prepaid, running, short of balance, foreign and malformed requests', async () => {
    const prepaid = await rentStopped({ chargeType: 'prepaid' });
    const p = await post('/api/v1/ide-instance/power_on', prepaid.token, { instanceId: prepaid.id, noGpu: true });
    expect(p.statusCode).toBe(409);
    expect(p.json().msg).toMatch(/^包周期实例/);

    const poor = await rentStopped({ balance: 5 * YUAN });
    await t.container.ledger.post({ tenantId: poor.user.tenantId, userId: poor.user.id, kind: 'adjustment', amount: -(await balanceOf(poor.user.id)) + 400, ref: `test:drain-${poor.id}` });
    const short = await post('/api/v1/ide-instance/power_on', poor.token, { instanceId: poor.id, noGpu: true });
    expect(short.statusCode).toBe(409);
    expect(short.json().msg).toBe('余额不足：无卡模式开机需至少可支付一小时的费用 ¥0.10，还差 ¥0.06，请先充值');
    expect(short.json().reason).toBe('INSUFFICIENT_BALANCE');
    expect((await row(poor.id)).status).toBe('stopped');

    const r = await rentStopped();
    await post('/api/v1/ide-instance/power_on', r.token, { instanceId: r.id, noGpu: true });
    await t.container.jobs.runDue();
    const running = await post('/api/v1/ide-instance/power_on', r.token, { instanceId: r.id, noGpu: true });
    expect(running.statusCode).toBe(409);
    expect(running.json().msg).toBe('实例当前状态为「运行中」，无法开机');

    const other = await createUser(t);
    expect((await post('/api/v1/ide-instance/power_on', other.token, { instanceId: prepaid.id, noGpu: true })).statusCode).toBe(404);
    const bad = await post('/api/v1/ide-instance/power_on', r.token, { instanceId: r.id, noGpu: 'yes' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().msg).toMatch(/noGpu 应为 true 或 false/);
    expect((await post('/api/v1/ide-instance/power_on', r.token, { instanceId: r.id, noGpu: true, gpu: 0 })).statusCode).toBe(400);
  });

  it('a busy instance (a data copy) can’t start in no-GPU mode either', async () => {
    const a = await rentStopped();
    const b = await rentStopped({ gpuTotal: 2 });
    // b was rented by another user: hand it to a's user, so both sides are theirs.
    const mine = { ...b, id: b.id };
    await t.container.db.update(instances).set({ userId: a.user.id }).where(eq(instances.id, mine.id));
    const copy = await post('/api/v1/instance/copy_data', a.token, { sourceInstanceId: a.id, targetInstanceId: mine.id });
    expect(copy.statusCode).toBe(200);
    const busy = await post('/api/v1/ide-instance/power_on', a.token, { instanceId: a.id, noGpu: true });
    expect(busy.statusCode).toBe(409);
    expect(busy.json().msg).toMatch(/数据拷贝/);
    await t.container.jobs.runDue();
    expect((await t.container.db.select().from(dataCopies).where(eq(dataCopies.id, copy.json().data.id)))[0]!.status).toBe('succeeded');
    expect((await post('/api/v1/ide-instance/power_on', a.token, { instanceId: a.id, noGpu: true })).statusCode).toBe(200);
  });

  it('a platform stop ends the mode without freeing GPUs; recovery after a restart starts it without GPUs again', async () => {
    const r = await rentStopped();
    await setGpuUsed(r.machine.id, 1);
    await post('/api/v1/ide-instance/power_on', r.token, { instanceId: r.id, noGpu: true });
    await t.container.jobs.runDue();
    // A host reboot: recovery restarts it with the no-GPU spec.
    compute.reboot();
    await t.container.instances.recover();
    await t.container.jobs.runDue();
    expect(compute.instances.get(r.id)).toMatchObject({ state: 'running', spec: { gpuDevices: [], cpuCores: NO_GPU_CPU_CORES } });
    expect(await row(r.id)).toMatchObject({ status: 'running', noGpu: true, gpuHeld: false });
    await t.container.instances.platformStop(r.id, '账户欠费，实例已停止');
    await t.container.jobs.runDue();
    expect(await row(r.id)).toMatchObject({ status: 'stopped', noGpu: false, gpuHeld: false, statusReason: '账户欠费，实例已停止' });
    expect(await gpuUsed(r.machine.id)).toBe(1);
    // A failed no-GPU start goes back to stopped, mode off.
    compute.switches.failStartOf.add(r.id);
    try {
      await post('/api/v1/ide-instance/power_on', r.token, { instanceId: r.id, noGpu: true });
      await t.container.jobs.runDue();
    } finally {
      compute.switches.failStartOf.clear();
    }
    expect(await row(r.id)).toMatchObject({ status: 'stopped', noGpu: false, gpuHeld: false });
    expect(await gpuUsed(r.machine.id)).toBe(1);
  });
});
