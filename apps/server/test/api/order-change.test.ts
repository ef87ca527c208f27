import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser as createFactoryUser } from '../helpers/factories.ts';
import { createTestClock } from '../helpers/clock.ts';
import { createFakeCompute, type FakeCompute } from '../fakes/compute.ts';
import { createInventory } from '../fakes/orders.ts';
import { instances, machines, orders } from '../../src/db/schema/compute.ts';
import { bills } from '../../src/db/schema/metering.ts';
import { jobs } from '../../src/db/schema/job.ts';
import { ledgerEntries } from '../../src/db/schema/wallet.ts';
import { sessions } from '../../src/db/schema/user.ts';
import { ComputeError } from '../../src/adapters/compute/port.ts';
import { RESIZE_DISK_JOB } from '../../src/modules/order/instance-change.jobs.ts';

const YUAN = 10_000;
const DAY = 86_400_000;
const GIB = 1024 ** 3;
// createInventory's prices: ¥3.60/h, ¥80/day, ¥1,800/month per GPU; disk ¥0.01/GB/day beyond 50 GB, up to 200 GB.
const HOUR_PRICE = 36_000;
const MONTH_PRICE = 18_000_000;

type U = Awaited<ReturnType<typeof createFactoryUser>>;

/** Every billing change of an instance, with the real metering (bills and refunds are real rows). */
describe.each(engines)('instance billing changes on %s', (engine) => {
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

  /** A user whose session lives by the test clock (which these tests move by days). */
  const createUser = async (tt: TestApp, opts: { host?: string } = {}) => {
    const u = await createFactoryUser(tt, opts);
    await tt.container.db.update(sessions).set({ lastSeenAt: clock(), expiresAt: new Date(clock().getTime() + 7 * DAY) }).where(eq(sessions.userId, u.user.id));
    return u;
  };
  const post = (url: string, token: string, payload: object) => t.request({ method: 'POST', url, token, payload });
  const credit = (u: U, amount: number) => t.container.ledger.post({ tenantId: u.user.tenantId, userId: u.user.id, kind: 'recharge', amount, ref: `test:${Math.random()}` });
  const balanceOf = async (u: U) => {
    t.container.wallet.forgetBalance(u.user.id);
    return t.container.wallet.balanceOf(u.user.id);
  };
  const inst = async (id: string) => (await t.container.db.select().from(instances).where(eq(instances.id, id)))[0]!;
  const gpuUsed = async (machineId: number) => (await t.container.db.select({ n: machines.gpuUsed }).from(machines).where(eq(machines.id, machineId)))[0]!.n;
  const ledgerClean = async (u: U) => expect(await t.container.ledger.check(u.user.tenantId)).toEqual([]);

  /** Rents an instance through the order API and provisions it (running). */
  async function rent(u: U, inv: Awaited<ReturnType<typeof createInventory>>, charge: { period?: 'day' | 'month'; quantity?: number; gpuCount?: number; dataDiskGb?: number } = {}) {
    const body = { machineId: inv.machine.id, gpuCount: charge.gpuCount ?? 1, imageId: inv.image.id, ...(charge.dataDiskGb ? { dataDiskGb: charge.dataDiskGb } : {}) };
    const order = charge.period
      ? (await post('/api/v1/order/prepay', u.token, { ...body, period: charge.period, quantity: charge.quantity ?? 1 })).json().data
      : (await post('/api/v1/order/payg', u.token, body)).json().data;
    const paid = await post('/api/v1/order/pay', u.token, { orderId: order.id });
    expect(paid.statusCode).toBe(200);
    await t.container.jobs.runDue();
    const id = paid.json().data.instanceId as string;
    expect((await inst(id)).status).toBe('running');
    return id;
  }
  async function stop(u: U, id: string) {
    expect((await post('/api/v1/ide-instance/power_off', u.token, { instanceId: id })).statusCode).toBe(200);
    await t.container.jobs.runDue();
    expect((await inst(id)).status).toBe('stopped');
  }
  /** Moves the test clock, touching the session so it stays alive (sessions last 7 days). */
  async function advance(u: U, ms: number) {
    for (let left = ms; left > 0; left -= Math.min(left, 5 * DAY)) {
      clock.advance(Math.min(left, 5 * DAY));
      await t.request({ method: 'GET', url: '/api/v1/account/balance', token: u.token });
    }
  }

  it('turns a running pay-as-you-go instance prepaid (paid order, meter stopped), and back with the unused time refunded exact to the unit', async () => {
    const u = await createUser(t);
    const inv = await createInventory(t);
    await credit(u, 5_000 * YUAN);
    const id = await rent(u, inv);
    await advance(u, 10 * 60_000); // 10 minutes at ¥3.60/h = ¥0.60

    const preview = await post('/api/v1/order/charge_type/prepay/preview', u.token, { instanceId: id, period: 'month', quantity: 1 });
    expect(preview.statusCode).toBe(200);
    expect(preview.json().data).toMatchObject({ instanceId: id, amount: MONTH_PRICE, hourly: 0, remainingSeconds: 0, lines: [{ label: `按量转包月：${inv.gpuType.name} × 1，按月 × 1`, amount: MONTH_PRICE }] });
    const created = await post('/api/v1/order/charge_type/prepay', u.token, { instanceId: id, period: 'month', quantity: 1 });
    expect(created.statusCode).toBe(200);
    const order = created.json().data;
    expect(order).toMatchObject({ kind: 'charge_type', status: 'unpaid', chargeType: 'prepaid', period: 'month', quantity: 1, amount: MONTH_PRICE, instanceId: id });
    expect((await inst(id)).chargeType).toBe('payg'); // nothing changes before paying

    const paid = await post('/api/v1/order/pay', u.token, { orderId: order.id });
    expect(paid.statusCode).toBe(200);
    expect(paid.json().data).toMatchObject({ status: 'paid', instanceId: id });
    const paidAt = clock().getTime();
    const row = await inst(id);
    expect(row).toMatchObject({ chargeType: 'prepaid', period: 'month', hourly: 0, gpuHeld: true, status: 'running' });
    expect(row.expiresAt!.getTime()).toBe(paidAt + 30 * DAY);
    expect(row.releaseAt!.getTime()).toBe(paidAt + 37 * DAY);
    // The meter stopped at payment: the settlement charges the 10 minutes and no more, however late it runs.
    await advance(u, 60 * 60_000);
    await t.container.metering.settle(clock());
    expect(await balanceOf(u)).toBe(5_000 * YUAN - 6_000 - MONTH_PRICE);
    const prepaidBills = await t.container.db.select().from(bills).where(and(eq(bills.instanceId, id), eq(bills.chargeType, 'prepaid')));
    expect(prepaidBills.map((b) => ({ amount: b.amount, orderId: b.orderId }))).toEqual([{ amount: MONTH_PRICE, orderId: order.id }]);

    // Already prepaid: converting again is refused, for the preview and the order.
    for (const url of ['/api/v1/order/charge_type/prepay/preview', '/api/v1/order/charge_type/prepay']) {
      const again = await post(url, u.token, { instanceId: id, period: 'day', quantity: 1 });
      expect(again.statusCode).toBe(409);
      expect(again.json().msg).toBe('实例已是包周期计费，无需转换');
    }

    // 5 days and 1 s after paying (the hour above included): refund floor(18,000,000 × (25 d − 1 s) / 30 d) = 14,999,993.
    await advance(u, 5 * DAY - 60 * 60_000 + 1000);
    const back = await post('/api/v1/order/charge_type/payg/preview', u.token, { instanceId: id });
    expect(back.statusCode).toBe(200);
    expect(back.json().data).toMatchObject({ amount: -14_999_993, hourly: HOUR_PRICE, expiresAt: null, remainingSeconds: 25 * 86_400 - 1 });
    expect(back.json().data.lines[0].label).toMatch(/^包周期转按量：退还未使用时长（按秒折算/);
    const before = await balanceOf(u);
    const converted = await post('/api/v1/order/charge_type/payg', u.token, { instanceId: id });
    expect(converted.statusCode).toBe(200);
    const refundOrder = converted.json().data;
    expect(refundOrder).toMatchObject({ kind: 'charge_type', status: 'paid', chargeType: 'payg', amount: -14_999_993, hourly: HOUR_PRICE, instanceId: id });
    expect(await balanceOf(u)).toBe(before + 14_999_993);
    const refunds = await t.container.db.select().from(ledgerEntries).where(and(eq(ledgerEntries.userId, u.user.id), eq(ledgerEntries.kind, 'refund')));
    expect(refunds.map((e) => ({ amount: e.amount, ref: e.ref }))).toEqual([{ amount: 14_999_993, ref: `order:${refundOrder.id}` }]);
    const [marked] = await t.container.db.select().from(bills).where(and(eq(bills.instanceId, id), eq(bills.chargeType, 'prepaid')));
    expect(marked).toMatchObject({ refundedAmount: 14_999_993, refundedAt: expect.any(Date) });
    expect(await inst(id)).toMatchObject({ chargeType: 'payg', period: null, hourly: HOUR_PRICE, expiresAt: null, releaseAt: null, status: 'running' });

    // Metering at the pay-as-you-go price again from the conversion: 1 hour = ¥3.60.
    const afterRefund = await balanceOf(u);
    await advance(u, 60 * 60_000);
    await t.container.metering.settle(clock());
    expect(await balanceOf(u)).toBe(afterRefund - HOUR_PRICE);

    // Already pay-as-you-go: refused, and the bill is never refunded twice.
    const twice = await post('/api/v1/order/charge_type/payg', u.token, { instanceId: id });
    expect(twice.statusCode).toBe(409);
    expect(twice.json().msg).toBe('实例已是按量计费，无需转换');
    expect((await post('/api/v1/order/charge_type/payg/preview', u.token, { instanceId: id })).statusCode).toBe(409);
    await ledgerClean(u);
  });

  it('a stopped instance takes its GPUs back to turn prepaid (409 when none are free) and gives them back to turn pay-as-you-go', async () => {
    const u = await createUser(t);
    const inv = await createInventory(t, { gpuTotal: 2 });
    await credit(u, 5_000 * YUAN);
    const id = await rent(u, inv, { gpuCount: 2 });
    await stop(u, id);
    expect(await gpuUsed(inv.machine.id)).toBe(0);
    // Someone else takes a GPU: converting needs 2.
    await t.container.db.update(machines).set({ gpuUsed: 1 }).where(eq(machines.id, inv.machine.id));
    const refused = await post('/api/v1/order/charge_type/prepay', u.token, { instanceId: id, period: 'day', quantity: 1 });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().msg).toMatch(/仅剩 1 张空闲 GPU/);
    await t.container.db.update(machines).set({ gpuUsed: 0 }).where(eq(machines.id, inv.machine.id));
    const order = (await post('/api/v1/order/charge_type/prepay', u.token, { instanceId: id, period: 'day', quantity: 2 })).json().data;
    expect(order.amount).toBe(2 * 2 * 800_000);
    // Taken between ordering and paying: 409, nothing charged.
    await t.container.db.update(machines).set({ gpuUsed: 1 }).where(eq(machines.id, inv.machine.id));
    const before = await balanceOf(u);
    const lost = await post('/api/v1/order/pay', u.token, { orderId: order.id });
    expect(lost.statusCode).toBe(409);
    expect(lost.json().msg).toMatch(/本次未扣费/);
    expect(await balanceOf(u)).toBe(before);
    await t.container.db.update(machines).set({ gpuUsed: 0 }).where(eq(machines.id, inv.machine.id));
    expect((await post('/api/v1/order/pay', u.token, { orderId: order.id })).statusCode).toBe(200);
    expect(await gpuUsed(inv.machine.id)).toBe(2);
    const row = await inst(id);
    expect(row).toMatchObject({ chargeType: 'prepaid', status: 'stopped', gpuHeld: true });
    expect(row.releaseAt!.getTime()).toBe(row.expiresAt!.getTime() + 7 * DAY);

    // Back to pay-as-you-go right away: the whole of it refunded, GPUs freed, released 15 days after it stopped.
    const back = await post('/api/v1/order/charge_type/payg', u.token, { instanceId: id });
    expect(back.statusCode).toBe(200);
    expect(back.json().data.amount).toBe(-order.amount);
    expect(await balanceOf(u)).toBe(before);
    expect(await gpuUsed(inv.machine.id)).toBe(0);
    const after = await inst(id);
    expect(after).toMatchObject({ chargeType: 'payg', gpuHeld: false, expiresAt: null });
    expect(after.releaseAt!.getTime()).toBe(after.stoppedAt!.getTime() + 15 * DAY);
    await ledgerClean(u);
  });

  it('turning a running prepaid instance pay-as-you-go needs one hour of balance after the refund', async () => {
    const u = await createUser(t);
    const inv = await createInventory(t);
    await credit(u, 80 * YUAN);
    const id = await rent(u, inv, { period: 'day' }); // ¥80, the whole balance
    await advance(u, DAY - 30 * 60_000); // half an hour left: refund 800,000 × 1,800 / 86,400 = 16,666
    const refused = await post('/api/v1/order/charge_type/payg', u.token, { instanceId: id });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().msg).toBe('余额不足：转为按量计费后需账户余额至少可支付一小时的费用 ¥3.60，还差 ¥1.9334，请先充值');
    expect((await inst(id)).chargeType).toBe('prepaid');
    await credit(u, 2 * YUAN);
    const ok = await post('/api/v1/order/charge_type/payg', u.token, { instanceId: id });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data.amount).toBe(-16_666);
    expect(await balanceOf(u)).toBe(2 * YUAN + 16_666);
    await ledgerClean(u);
  });

  it('renews a prepaid instance from its expiry, also an expired unreleased one from now; refuses pay-as-you-go and released instances', async () => {
    const u = await createUser(t);
    const inv = await createInventory(t);
    await credit(u, 5_000 * YUAN);
    const id = await rent(u, inv, { period: 'day' });
    const expires = (await inst(id)).expiresAt!.getTime();
    const preview = await post('/api/v1/order/instance/renewal/preview', u.token, { instanceId: id, period: 'day', quantity: 3 });
    expect(preview.statusCode).toBe(200);
    expect(preview.json().data).toMatchObject({ amount: 3 * 800_000, expiresAt: new Date(expires + 3 * DAY).toISOString(), lines: [{ label: expect.stringMatching(/^续费：/) }] });
    const order = (await post('/api/v1/order/instance/renewal', u.token, { instanceId: id, period: 'day', quantity: 3 })).json().data;
    expect(order).toMatchObject({ kind: 'renewal', status: 'unpaid', amount: 3 * 800_000, instanceId: id });
    const before = await balanceOf(u);
    expect((await post('/api/v1/order/pay', u.token, { orderId: order.id })).statusCode).toBe(200);
    expect(await balanceOf(u)).toBe(before - 3 * 800_000);
    let row = await inst(id);
    expect(row.expiresAt!.getTime()).toBe(expires + 3 * DAY);
    expect(row.releaseAt!.getTime()).toBe(expires + 10 * DAY);
    const renewalBill = (await t.container.db.select().from(bills).where(eq(bills.orderId, order.id)))[0]!;
    expect([renewalBill.periodStart.getTime(), renewalBill.periodEnd.getTime(), renewalBill.amount]).toEqual([expires, expires + 3 * DAY, 3 * 800_000]);

    // Expired (4 days later, stopped by the platform) but not released: renewed from now.
    await advance(u, 4 * DAY + 1000);
    await t.container.metering.tick(clock());
    await t.container.jobs.runDue();
    expect(await inst(id)).toMatchObject({ status: 'stopped', statusReason: '包周期已到期' });
    const late = (await post('/api/v1/order/instance/renewal', u.token, { instanceId: id, period: 'day', quantity: 1 })).json().data;
    expect((await post('/api/v1/order/pay', u.token, { orderId: late.id })).statusCode).toBe(200);
    row = await inst(id);
    expect(row.expiresAt!.getTime()).toBe(clock().getTime() + DAY);
    expect(row.statusReason).toBe('');
    // It can be started again.
    expect((await post('/api/v1/ide-instance/power_on', u.token, { instanceId: id })).statusCode).toBe(200);
    await t.container.jobs.runDue();
    expect((await inst(id)).status).toBe('running');
    // Released: 404 like a missing one.
    expect((await post('/api/v1/ide-instance/release', u.token, { instanceId: id })).statusCode).toBe(200);
    await t.container.jobs.runDue();
    const gone = await post('/api/v1/order/instance/renewal', u.token, { instanceId: id, period: 'day', quantity: 1 });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().msg).toBe('实例不存在');
    // Pay-as-you-go: nothing to renew.
    const payg = await rent(u, inv);
    const refused = await post('/api/v1/order/instance/renewal', u.token, { instanceId: payg, period: 'day', quantity: 1 });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().msg).toMatch(/按量计费实例无需续费/);
    await ledgerClean(u);
  });

  it('changes the GPU count of a stopped instance: payg at the new hourly price, prepaid by the difference for the time left', async () => {
    const u = await createUser(t);
    const other = await createUser(t);
    const inv = await createInventory(t, { gpuTotal: 4 });
    await credit(u, 10_000 * YUAN);
    await credit(other, 1_000 * YUAN);
    const id = await rent(u, inv);
    // Running: 409.
    const running = await post('/api/v1/order/instance/change', u.token, { instanceId: id, gpuCount: 2 });
    expect(running.statusCode).toBe(409);
    expect(running.json().msg).toMatch(/需要先关机/);
    await stop(u, id);
    // Past the machine: 400; unchanged: 400.
    const past = await post('/api/v1/order/instance/change/preview', u.token, { instanceId: id, gpuCount: 5 });
    expect([past.statusCode, past.json().msg]).toEqual([400, '该机器共 4 张 GPU，GPU 数量最多为 4']);
    expect((await post('/api/v1/order/instance/change', u.token, { instanceId: id, gpuCount: 1 })).statusCode).toBe(400);
    expect((await post('/api/v1/order/instance/change', u.token, { instanceId: id, gpuCount: 9 })).statusCode).toBe(400);
    // Another user holds 2 of 4: 3 are not free (409 naming how many are).
    await rent(other, inv, { gpuCount: 2 });
    const busy = await post('/api/v1/order/instance/change', u.token, { instanceId: id, gpuCount: 3 });
    expect(busy.statusCode).toBe(409);
    expect(busy.json().msg).toBe(`机器 ${inv.machine.hostName} 仅剩 2 张空闲 GPU，无法变更为 3 张`);
    // Pay-as-you-go: applied at once, nothing paid, new hourly price.
    const preview = await post('/api/v1/order/instance/change/preview', u.token, { instanceId: id, gpuCount: 2 });
    expect(preview.json().data).toMatchObject({ amount: 0, hourly: 2 * HOUR_PRICE });
    const changed = await post('/api/v1/order/instance/change', u.token, { instanceId: id, gpuCount: 2 });
    expect(changed.statusCode).toBe(200);
    expect(changed.json().data).toMatchObject({ kind: 'spec_change', status: 'paid', amount: 0, gpuCount: 2, hourly: 2 * HOUR_PRICE });
    expect(await inst(id)).toMatchObject({ gpuCount: 2, cpuCores: 4, memoryGb: 8, hourly: 2 * HOUR_PRICE, gpuHeld: false });

    // Prepaid: 1 GPU for a month, 10 days later (20 days left) up to 2, then down to 1.
    const pre = await rent(u, inv, { period: 'month' });
    await stop(u, pre);
    await advance(u, 10 * DAY);
    const up = await post('/api/v1/order/instance/change/preview', u.token, { instanceId: pre, gpuCount: 2 });
    expect(up.json().data).toMatchObject({ amount: 12_000_000, remainingSeconds: 20 * 86_400 });
    const order = (await post('/api/v1/order/instance/change', u.token, { instanceId: pre, gpuCount: 2 })).json().data;
    expect(order).toMatchObject({ kind: 'spec_change', status: 'unpaid', amount: 12_000_000 });
    const before = await balanceOf(u);
    expect((await post('/api/v1/order/pay', u.token, { orderId: order.id })).statusCode).toBe(200);
    expect(await balanceOf(u)).toBe(before - 12_000_000);
    expect(await inst(pre)).toMatchObject({ gpuCount: 2, gpuHeld: true });
    expect(await gpuUsed(inv.machine.id)).toBe(4); // other's 2 + 2
    // Paying it again: the order is paid.
    expect((await post('/api/v1/order/pay', u.token, { orderId: order.id })).statusCode).toBe(409);
    // 1 s later: down to 1 refunds floor(18,000,000 × (20 d − 1 s) / 30 d) = 11,999,993 at once.
    await advance(u, 1000);
    const down = await post('/api/v1/order/instance/change', u.token, { instanceId: pre, gpuCount: 1 });
    expect(down.statusCode).toBe(200);
    expect(down.json().data).toMatchObject({ status: 'paid', amount: -11_999_993 });
    expect(await balanceOf(u)).toBe(before - 12_000_000 + 11_999_993);
    expect(await gpuUsed(inv.machine.id)).toBe(3);
    // Turning it pay-as-you-go now refunds its bills' unused parts (the month, the upgrade, minus the downgrade).
    const refund = (await post('/api/v1/order/charge_type/payg/preview', u.token, { instanceId: pre })).json().data.amount;
    // month: floor(18e6 × (20 d − 1 s)/30 d) = 11,999,993; upgrade: floor(12e6 × (20 d − 1 s)/20 d) = 11,999,993; downgrade bill: −11,999,993 whole.
    expect(refund).toBe(-11_999_993);
    await ledgerClean(u);
  });

  it('shows the data disk range and changes it: growing online, shrinking stopped and never below its data, never past the machine', async () => {
    const u = await createUser(t);
    const inv = await createInventory(t);
    await credit(u, 10_000 * YUAN);
    const id = await rent(u, inv, { dataDiskGb: 60 });
    compute.switches.dataUsedBytes.set(id, 70 * GIB + 1);
    const range = await t.request({ method: 'GET', url: `/api/v1/instance/available_expand_disk?instanceId=${id}`, token: u.token });
    expect(range.statusCode).toBe(200);
    expect(range.json().data).toEqual({ instanceId: id, chargeType: 'payg', status: 'running', currentGb: 60, usedBytes: 70 * GIB + 1, minGb: 60, maxGb: 200, freeGb: 50, pricePerGbDay: 100, canShrink: false });
    compute.switches.dataUsedBytes.set(id, 20 * GIB);

    // Past the machine, below the free size, unchanged: 400.
    for (const [gb, msg] of [
      [201, '该机器的数据盘最大为 200 GB'],
      [40, '数据盘不能小于免费赠送的 50 GB'],
      [60, '数据盘大小未变化（当前为 60 GB）'],
    ] as const) {
      const res = await post('/api/v1/order/data_disk/change', u.token, { instanceId: id, dataDiskGb: gb });
      expect([res.statusCode, res.json().msg]).toEqual([400, msg]);
    }
    // Shrinking a running instance: 409.
    const shrinkRunning = await post('/api/v1/order/data_disk/change/preview', u.token, { instanceId: id, dataDiskGb: 55 });
    expect(shrinkRunning.statusCode).toBe(409);
    expect(shrinkRunning.json().msg).toMatch(/缩小数据盘需要先关机/);

    // Growing while running (pay-as-you-go): at once, online, new hourly price ceil(50 × 100 / 24) = 209.
    const preview = await post('/api/v1/order/data_disk/change/preview', u.token, { instanceId: id, dataDiskGb: 100 });
    expect(preview.json().data).toMatchObject({ amount: 0, hourly: HOUR_PRICE + 209 });
    await advance(u, 30 * 60_000);
    const grown = await post('/api/v1/order/data_disk/change', u.token, { instanceId: id, dataDiskGb: 100 });
    expect(grown.statusCode).toBe(200);
    expect(grown.json().data).toMatchObject({ kind: 'data_disk', status: 'paid', amount: 0, dataDiskGb: 100, hourly: HOUR_PRICE + 209 });
    expect(await inst(id)).toMatchObject({ status: 'running', dataDiskGb: 100, hourly: HOUR_PRICE + 209 });
    // A second change while the resize is pending: 409.
    const pending = await post('/api/v1/order/data_disk/change', u.token, { instanceId: id, dataDiskGb: 120 });
    expect(pending.statusCode).toBe(409);
    await t.container.jobs.runDue();
    expect(compute.instances.get(id)!.spec.dataDiskBytes).toBe(100 * GIB);
    expect((await inst(id)).status).toBe('running');
    // The meter moved to the new price at the change: half an hour at the old price was settled then.
    const b0 = await balanceOf(u);
    await advance(u, 60 * 60_000);
    await t.container.metering.settle(clock());
    expect(await balanceOf(u)).toBe(b0 - (HOUR_PRICE + 209));

    // Shrinking a stopped one below its data: 400 (holds 70 GiB + 1 byte: at least 72 GB).
    await stop(u, id);
    compute.switches.dataUsedBytes.set(id, 70 * GIB + 1);
    const small = await post('/api/v1/order/data_disk/change', u.token, { instanceId: id, dataDiskGb: 71 });
    expect(small.statusCode).toBe(400);
    expect(small.json().msg).toBe('数据盘已使用 70.00 GB，最小只能缩小到 72 GB');
    const range2 = (await t.request({ method: 'GET', url: `/api/v1/instance/available_expand_disk?instanceId=${id}`, token: u.token })).json().data;
    expect(range2).toMatchObject({ minGb: 72, canShrink: true, status: 'stopped' });
    const shrunk = await post('/api/v1/order/data_disk/change', u.token, { instanceId: id, dataDiskGb: 72 });
    expect(shrunk.statusCode).toBe(200);
    expect(await inst(id)).toMatchObject({ status: 'creating', statusReason: '正在调整数据盘', dataDiskGb: 72 });
    // It can't be started meanwhile.
    expect((await post('/api/v1/ide-instance/power_on', u.token, { instanceId: id })).statusCode).toBe(409);
    await t.container.jobs.runDue();
    expect(await inst(id)).toMatchObject({ status: 'stopped', statusReason: '' });
    expect(compute.instances.get(id)!.spec.dataDiskBytes).toBe(72 * GIB);
    await ledgerClean(u);
  });

  it('prices a prepaid data disk by the difference for the time left: growth is an order, shrinking refunds at once', async () => {
    const u = await createUser(t);
    const inv = await createInventory(t);
    await credit(u, 10_000 * YUAN);
    const id = await rent(u, inv, { period: 'day' });
    await advance(u, 12 * 3_600_000); // half the day left
    // +30 GB × ¥0.01 × 0.5 day = 1,500
    const order = (await post('/api/v1/order/data_disk/change', u.token, { instanceId: id, dataDiskGb: 80 })).json().data;
    expect(order).toMatchObject({ kind: 'data_disk', status: 'unpaid', amount: 1_500, dataDiskGb: 80 });
    expect((await inst(id)).dataDiskGb).toBe(50);
    const before = await balanceOf(u);
    expect((await post('/api/v1/order/pay', u.token, { orderId: order.id })).statusCode).toBe(200);
    expect(await balanceOf(u)).toBe(before - 1_500);
    await t.container.jobs.runDue();
    expect(compute.instances.get(id)!.spec.dataDiskBytes).toBe(80 * GIB);
    await stop(u, id);
    await advance(u, 6 * 3_600_000 + 1000); // 6 h − 1 s left: −10 GB refunds floor(10 × 100 × 21,599 / 86,400) = 249
    const shrink = await post('/api/v1/order/data_disk/change', u.token, { instanceId: id, dataDiskGb: 70 });
    expect(shrink.json().data).toMatchObject({ status: 'paid', amount: -249 });
    expect(await balanceOf(u)).toBe(before - 1_500 + 249);
    await t.container.jobs.runDue();
    expect(await inst(id)).toMatchObject({ status: 'stopped', dataDiskGb: 70 });
    await ledgerClean(u);
  });

  it('undoes a resize the driver refuses for good: old size back, the refund taken back, stopped with the reason', async () => {
    const u = await createUser(t);
    const inv = await createInventory(t);
    await credit(u, 1_000 * YUAN);
    const id = await rent(u, inv, { period: 'day', dataDiskGb: 80 });
    await stop(u, id);
    const before = await balanceOf(u);
    const original = compute.resizeDataDisk;
    compute.resizeDataDisk = async () => {
      throw new ComputeError('fake: the disk is broken');
    };
    try {
      const res = await post('/api/v1/order/data_disk/change', u.token, { instanceId: id, dataDiskGb: 60 });
      expect(res.statusCode).toBe(200);
      const refund = -res.json().data.amount;
      expect(refund).toBeGreaterThan(0);
      expect(await balanceOf(u)).toBe(before + refund);
      await t.container.jobs.runDue();
    } finally {
      compute.resizeDataDisk = original;
    }
    expect(await inst(id)).toMatchObject({ status: 'stopped', dataDiskGb: 80, statusReason: expect.stringMatching(/^调整数据盘失败/) });
    expect(await balanceOf(u)).toBe(before);
    await ledgerClean(u);
  });

  it('resumes a data disk resize lost in a restart (start-up recovery)', async () => {
    const u = await createUser(t);
    const inv = await createInventory(t);
    await credit(u, 1_000 * YUAN);
    const id = await rent(u, inv, { dataDiskGb: 80 });
    await stop(u, id);
    expect((await post('/api/v1/order/data_disk/change', u.token, { instanceId: id, dataDiskGb: 90 })).statusCode).toBe(200);
    // The job is lost (as if it had failed for good in a crashed process).
    await t.container.db.update(jobs).set({ status: 'failed' }).where(eq(jobs.kind, RESIZE_DISK_JOB));
    expect(await t.container.instances.recover()).toBeGreaterThanOrEqual(1);
    const queued = await t.container.db.select().from(jobs).where(and(eq(jobs.kind, RESIZE_DISK_JOB), eq(jobs.status, 'queued')));
    expect(queued.map((j) => j.payload.instanceId)).toContain(id);
    await t.container.jobs.runDue();
    expect(await inst(id)).toMatchObject({ status: 'stopped', dataDiskGb: 90 });
    expect(compute.instances.get(id)!.spec.dataDiskBytes).toBe(90 * GIB);
  });

  it('refuses a shrink when the driver cannot tell the usage, and a prepaid conversion in no-GPU mode', async () => {
    const u = await createUser(t);
    const inv = await createInventory(t);
    await credit(u, 1_000 * YUAN);
    const id = await rent(u, inv, { dataDiskGb: 80 });
    await t.container.db.update(instances).set({ noGpu: true }).where(eq(instances.id, id));
    const noGpu = await post('/api/v1/order/charge_type/prepay', u.token, { instanceId: id, period: 'day', quantity: 1 });
    expect([noGpu.statusCode, noGpu.json().msg]).toEqual([409, '实例正以无卡模式运行，请先关机再转为包周期']);
    await t.container.db.update(instances).set({ noGpu: false }).where(eq(instances.id, id));
    await stop(u, id);
    const original = compute.usage;
    compute.usage = async () => {
      throw new ComputeError('fake: usage unknown');
    };
    try {
      const res = await post('/api/v1/order/data_disk/change', u.token, { instanceId: id, dataDiskGb: 60 });
      expect([res.statusCode, res.json().msg]).toEqual([409, '暂时无法读取数据盘的用量，请稍后再试']);
      const range = (await t.request({ method: 'GET', url: `/api/v1/instance/available_expand_disk?instanceId=${id}`, token: u.token })).json().data;
      expect(range).toMatchObject({ usedBytes: 0, currentGb: 80 });
      // Growing needs no usage.
      expect((await post('/api/v1/order/data_disk/change', u.token, { instanceId: id, dataDiskGb: 90 })).statusCode).toBe(200);
    } finally {
      compute.usage = original;
    }
    await t.container.jobs.runDue();
    expect(await inst(id)).toMatchObject({ status: 'stopped', dataDiskGb: 90 });
  });

  it("answers 404 for another user's instance on every call, and 400 for bad bodies", async () => {
    const owner = await createUser(t);
    const stranger = await createUser(t);
    const inv = await createInventory(t);
    await credit(owner, 1_000 * YUAN);
    const id = await rent(owner, inv, { period: 'day' });
    const calls: [string, object][] = [
      ['/api/v1/order/charge_type/prepay/preview', { instanceId: id, period: 'month', quantity: 1 }],
      ['/api/v1/order/charge_type/prepay', { instanceId: id, period: 'month', quantity: 1 }],
      ['/api/v1/order/charge_type/payg/preview', { instanceId: id }],
      ['/api/v1/order/charge_type/payg', { instanceId: id }],
      ['/api/v1/order/instance/renewal/preview', { instanceId: id, period: 'day', quantity: 1 }],
      ['/api/v1/order/instance/renewal', { instanceId: id, period: 'day', quantity: 1 }],
      ['/api/v1/order/instance/change/preview', { instanceId: id, gpuCount: 2 }],
      ['/api/v1/order/instance/change', { instanceId: id, gpuCount: 2 }],
      ['/api/v1/order/data_disk/change/preview', { instanceId: id, dataDiskGb: 60 }],
      ['/api/v1/order/data_disk/change', { instanceId: id, dataDiskGb: 60 }],
    ];
    for (const [url, body] of calls) {
      const res = await post(url, stranger.token, body);
      expect({ url, status: res.statusCode, msg: res.json().msg }).toEqual({ url, status: 404, msg: '实例不存在' });
      expect((await post(url, owner.token, { ...body, instanceId: 'i-0000000000' })).statusCode).toBe(404);
      expect((await t.request({ method: 'POST', url, payload: body })).statusCode).toBe(401);
    }
    expect((await t.request({ method: 'GET', url: `/api/v1/instance/available_expand_disk?instanceId=${id}`, token: stranger.token })).statusCode).toBe(404);
    const foreignTenant = await createUser(t, { host: '127.0.0.1' });
    expect((await t.request({ method: 'POST', url: '/api/v1/order/charge_type/payg', token: foreignTenant.token, host: '127.0.0.1', payload: { instanceId: id } })).statusCode).toBe(404);
    // A stranger can't pay the owner's change order either.
    const renewal = (await post('/api/v1/order/instance/renewal', owner.token, { instanceId: id, period: 'day', quantity: 1 })).json().data;
    expect((await post('/api/v1/order/pay', stranger.token, { orderId: renewal.id })).statusCode).toBe(404);

    const bad: [string, object, RegExp][] = [
      ['/api/v1/order/charge_type/prepay', { instanceId: 'x', period: 'month', quantity: 1 }, /实例 ID 格式不正确/],
      ['/api/v1/order/charge_type/prepay', { instanceId: id, period: 'decade', quantity: 1 }, /包周期时长应为/],
      ['/api/v1/order/instance/renewal', { instanceId: id, period: 'year', quantity: 4 }, /最多可购买 3 个周期/],
      ['/api/v1/order/instance/renewal', { instanceId: id, period: 'day', quantity: 0 }, /购买时长至少为 1/],
      ['/api/v1/order/instance/change', { instanceId: id, gpuCount: 0 }, /GPU 数量至少为 1/],
      ['/api/v1/order/instance/change', { instanceId: id, gpuCount: 1.5 }, /GPU 数量必须是整数/],
      ['/api/v1/order/data_disk/change', { instanceId: id, dataDiskGb: 'big' }, /数据盘大小必须是数字/],
      ['/api/v1/order/charge_type/payg', { instanceId: id, extra: 1 }, /./],
    ];
    for (const [url, body, msg] of bad) {
      const res = await post(url, owner.token, body);
      expect({ url, status: res.statusCode, msg: res.json().msg }).toMatchObject({ url, status: 400, msg: expect.stringMatching(msg) });
    }
    expect((await t.request({ method: 'GET', url: '/api/v1/instance/available_expand_disk?instanceId=nope', token: owner.token })).statusCode).toBe(400);
    // None of this wrote an order beyond the renewal.
    const written = await t.container.db.select().from(orders).where(eq(orders.instanceId, id));
    expect(written.map((o) => o.kind).sort()).toEqual(['new', 'renewal']);
  });
});
