import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { createFakeCompute, type FakeCompute } from '../fakes/compute.ts';
import { createInventory } from '../fakes/orders.ts';
import { instances, machines } from '../../src/db/schema/compute.ts';
import { bills } from '../../src/db/schema/metering.ts';
import { ledgerEntries, wallets } from '../../src/db/schema/wallet.ts';

const YUAN = 10_000;
const DAY = 86_400_000;
const GIB = 1024 ** 3;
const RACERS = 6;

type U = Awaited<ReturnType<typeof createUser>>;

/**
 * Changes of one instance racing, on both engines (on PostgreSQL, with TEST_DATABASE_URL, the
 * requests really run at once): where only one can win, exactly one does and the others get 409
 * with nothing charged; the ledger holds, and each balance is the sum of its ledger entries.
 * The real metering runs (no meter override), so bills and refunds are real rows.
 */
describe.each(engines)('instance billing changes racing on %s', (engine) => {
  let t: TestApp;
  let compute: FakeCompute;
  beforeAll(async () => {
    compute = createFakeCompute();
    t = await buildTestApp({ engine, overrides: { compute } });
  });
  afterAll(async () => {
    await t.close();
    compute.cleanup();
  });

  const post = (url: string, token: string, payload: object) => t.request({ method: 'POST', url, token, payload });
  const credit = (u: U, amount: number) => t.container.ledger.post({ tenantId: u.user.tenantId, userId: u.user.id, kind: 'recharge', amount, ref: `test:${Math.random()}` });
  const inst = async (id: string) => (await t.container.db.select().from(instances).where(eq(instances.id, id)))[0]!;
  const balanceOf = async (u: U) => (await t.container.db.select({ b: wallets.balance }).from(wallets).where(eq(wallets.userId, u.user.id)))[0]!.b;
  /** The ledger holds, and the balance equals the sum of the user's entries. */
  async function moneyRight(u: U) {
    expect(await t.container.ledger.check(u.user.tenantId)).toEqual([]);
    const [sum] = await t.container.db.select({ s: sql<string>`coalesce(sum(${ledgerEntries.amount}), 0)` }).from(ledgerEntries).where(eq(ledgerEntries.userId, u.user.id));
    expect(Number(sum!.s)).toBe(await balanceOf(u));
  }
  async function rent(u: U, inv: Awaited<ReturnType<typeof createInventory>>, charge: { period?: 'day' | 'month'; gpuCount?: number; dataDiskGb?: number } = {}) {
    const body = { machineId: inv.machine.id, gpuCount: charge.gpuCount ?? 1, imageId: inv.image.id, ...(charge.dataDiskGb ? { dataDiskGb: charge.dataDiskGb } : {}) };
    const order = charge.period
      ? (await post('/api/v1/order/prepay', u.token, { ...body, period: charge.period, quantity: 1 })).json().data
      : (await post('/api/v1/order/payg', u.token, body)).json().data;
    const paid = await post('/api/v1/order/pay', u.token, { orderId: order.id });
    expect(paid.statusCode).toBe(200);
    await t.container.jobs.runDue();
    return paid.json().data.instanceId as string;
  }
  async function stop(u: U, id: string) {
    expect((await post('/api/v1/ide-instance/power_off', u.token, { instanceId: id })).statusCode).toBe(200);
    await t.container.jobs.runDue();
  }

  it(`refunds once when ${RACERS} prepaid → pay-as-you-go conversions of one instance race`, async () => {
    const u = await createUser(t);
    const inv = await createInventory(t);
    await credit(u, 5_000 * YUAN);
    const id = await rent(u, inv, { period: 'month' });
    const afterRent = await balanceOf(u);
    const answers = await Promise.all(Array.from({ length: RACERS }, () => post('/api/v1/order/charge_type/payg', u.token, { instanceId: id })));
    const winners = answers.filter((a) => a.statusCode === 200);
    expect(winners).toHaveLength(1);
    for (const a of answers.filter((x) => x.statusCode !== 200)) {
      expect(a.statusCode).toBe(409);
      expect(a.json().msg).toBe('实例已是按量计费，无需转换');
    }
    const refund = -winners[0]!.json().data.amount;
    expect(refund).toBeGreaterThan(0);
    expect(await balanceOf(u)).toBe(afterRent + refund);
    const refunds = await t.container.db.select().from(ledgerEntries).where(and(eq(ledgerEntries.userId, u.user.id), eq(ledgerEntries.kind, 'refund')));
    expect(refunds).toHaveLength(1);
    expect(await inst(id)).toMatchObject({ chargeType: 'payg' });
    await moneyRight(u);
  });

  it('replays a retried conversion with the same Idempotency-Key instead of answering 409', async () => {
    const u = await createUser(t);
    const inv = await createInventory(t);
    await credit(u, 5_000 * YUAN);
    const id = await rent(u, inv, { period: 'day' });
    const headers = { 'idempotency-key': `to-payg-${id}` };
    const first = await t.request({ method: 'POST', url: '/api/v1/order/charge_type/payg', token: u.token, payload: { instanceId: id }, headers });
    const retry = await t.request({ method: 'POST', url: '/api/v1/order/charge_type/payg', token: u.token, payload: { instanceId: id }, headers });
    expect([first.statusCode, retry.statusCode]).toEqual([200, 200]);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json().data.id).toBe(first.json().data.id);
    const refunds = await t.container.db.select().from(ledgerEntries).where(and(eq(ledgerEntries.userId, u.user.id), eq(ledgerEntries.kind, 'refund')));
    expect(refunds).toHaveLength(1);
    await moneyRight(u);
  });

  it(`charges once when ${RACERS} pay-as-you-go → prepaid orders of one instance are paid at once`, async () => {
    const u = await createUser(t);
    const inv = await createInventory(t);
    await credit(u, 5_000 * YUAN);
    const id = await rent(u, inv);
    const created = await Promise.all(Array.from({ length: RACERS }, () => post('/api/v1/order/charge_type/prepay', u.token, { instanceId: id, period: 'day', quantity: 1 })));
    const ids = created.map((c) => c.json().data.id as string);
    const before = await balanceOf(u);
    const answers = await Promise.all(ids.map((orderId) => post('/api/v1/order/pay', u.token, { orderId })));
    expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(1);
    for (const a of answers.filter((x) => x.statusCode !== 200)) {
      expect(a.statusCode).toBe(409);
      expect(a.json().msg).toBe('实例已是包周期计费，本次未扣费');
    }
    expect(await balanceOf(u)).toBe(before - 800_000);
    expect(await t.container.db.select().from(bills).where(and(eq(bills.instanceId, id), eq(bills.chargeType, 'prepaid')))).toHaveLength(1);
    await moneyRight(u);
  });

  it('keeps the money right when a renewal is paid while the instance turns pay-as-you-go', async () => {
    for (let round = 0; round < 3; round++) {
      const u = await createUser(t);
      const inv = await createInventory(t);
      await credit(u, 5_000 * YUAN);
      const id = await rent(u, inv, { period: 'day' });
      const renewal = (await post('/api/v1/order/instance/renewal', u.token, { instanceId: id, period: 'day', quantity: 2 })).json().data;
      const [paid, converted] = await Promise.all([post('/api/v1/order/pay', u.token, { orderId: renewal.id }), post('/api/v1/order/charge_type/payg', u.token, { instanceId: id })]);
      expect(converted.statusCode).toBe(200);
      // Either the renewal went first (and the conversion refunded it with the rest) or it was refused.
      if (paid.statusCode === 200) {
        expect(-converted.json().data.amount).toBeGreaterThan(2 * 800_000);
      } else {
        expect(paid.statusCode).toBe(409);
        expect(paid.json().msg).toMatch(/不是包周期计费.*本次未扣费/);
      }
      expect(await inst(id)).toMatchObject({ chargeType: 'payg', expiresAt: null });
      await moneyRight(u);
    }
  });

  it(`extends by each of ${RACERS} renewals paid at once, and charges each once`, async () => {
    const u = await createUser(t);
    const inv = await createInventory(t);
    await credit(u, 5_000 * YUAN);
    const id = await rent(u, inv, { period: 'day' });
    const expires = (await inst(id)).expiresAt!.getTime();
    const created = await Promise.all(Array.from({ length: RACERS }, () => post('/api/v1/order/instance/renewal', u.token, { instanceId: id, period: 'day', quantity: 1 })));
    const before = await balanceOf(u);
    // Each order paid twice at once: once per order is charged.
    const answers = await Promise.all(created.flatMap((c) => [c, c]).map((c) => post('/api/v1/order/pay', u.token, { orderId: c.json().data.id })));
    expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(RACERS);
    for (const a of answers.filter((x) => x.statusCode !== 200)) expect(a.json().msg).toBe('订单已支付，请勿重复支付');
    expect(await balanceOf(u)).toBe(before - RACERS * 800_000);
    expect((await inst(id)).expiresAt!.getTime()).toBe(expires + RACERS * DAY);
    // One bill per renewal, back to back.
    const rows = (await t.container.db.select().from(bills).where(and(eq(bills.instanceId, id), eq(bills.chargeType, 'prepaid')))).sort((a, b) => a.periodStart.getTime() - b.periodStart.getTime());
    expect(rows).toHaveLength(RACERS + 1);
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.periodStart.getTime()).toBe(rows[i - 1]!.periodEnd.getTime());
    await moneyRight(u);
  });

  it(`lets one of ${RACERS} concurrent data disk changes of a running instance through`, async () => {
    const u = await createUser(t);
    const inv = await createInventory(t);
    await credit(u, 1_000 * YUAN);
    const id = await rent(u, inv);
    const sizes = Array.from({ length: RACERS }, (_, i) => 60 + i * 10);
    const answers = await Promise.all(sizes.map((gb) => post('/api/v1/order/data_disk/change', u.token, { instanceId: id, dataDiskGb: gb })));
    const winners = answers.filter((a) => a.statusCode === 200);
    expect(winners).toHaveLength(1);
    for (const a of answers.filter((x) => x.statusCode !== 200)) {
      expect(a.statusCode).toBe(409);
      expect(a.json().msg).toBe('数据盘正在调整中，请等待完成后再试');
    }
    const size = winners[0]!.json().data.dataDiskGb as number;
    await t.container.jobs.runDue();
    expect(await inst(id)).toMatchObject({ status: 'running', dataDiskGb: size });
    expect(compute.instances.get(id)!.spec.dataDiskBytes).toBe(size * GIB);
    await moneyRight(u);
  });

  it(`refunds once when ${RACERS} shrinks of a stopped prepaid data disk race`, async () => {
    const u = await createUser(t);
    const inv = await createInventory(t);
    await credit(u, 5_000 * YUAN);
    const id = await rent(u, inv, { period: 'month', dataDiskGb: 150 });
    await stop(u, id);
    const before = await balanceOf(u);
    const answers = await Promise.all(Array.from({ length: RACERS }, (_, i) => post('/api/v1/order/data_disk/change', u.token, { instanceId: id, dataDiskGb: 60 + i })));
    const winners = answers.filter((a) => a.statusCode === 200);
    expect(winners).toHaveLength(1);
    for (const a of answers.filter((x) => x.statusCode !== 200)) expect(a.statusCode).toBe(409);
    const refund = -winners[0]!.json().data.amount;
    expect(refund).toBeGreaterThan(0);
    expect(await balanceOf(u)).toBe(before + refund);
    await t.container.jobs.runDue();
    expect(await inst(id)).toMatchObject({ status: 'stopped', dataDiskGb: winners[0]!.json().data.dataDiskGb });
    await moneyRight(u);
  });

  it(`frees GPUs and refunds once when ${RACERS} identical prepaid downgrades race; upgrades race for the last GPU`, async () => {
    const u = await createUser(t);
    const inv = await createInventory(t, { gpuTotal: 4 });
    await credit(u, 50_000 * YUAN);
    const id = await rent(u, inv, { period: 'month', gpuCount: 3 });
    await stop(u, id);
    const before = await balanceOf(u);
    const answers = await Promise.all(Array.from({ length: RACERS }, () => post('/api/v1/order/instance/change', u.token, { instanceId: id, gpuCount: 1 })));
    const winners = answers.filter((a) => a.statusCode === 200);
    expect(winners).toHaveLength(1);
    for (const a of answers.filter((x) => x.statusCode !== 200)) expect([400, 409]).toContain(a.statusCode);
    expect(await balanceOf(u)).toBe(before - winners[0]!.json().data.amount);
    const used = async () => (await t.container.db.select({ n: machines.gpuUsed }).from(machines).where(eq(machines.id, inv.machine.id)))[0]!.n;
    expect(await used()).toBe(1);

    // Two upgrade orders to 4 (3 more GPUs): paid at once, only one gets the GPUs and is charged.
    const orders = await Promise.all([0, 1].map(() => post('/api/v1/order/instance/change', u.token, { instanceId: id, gpuCount: 4 })));
    const mid = await balanceOf(u);
    const pays = await Promise.all(orders.map((o) => post('/api/v1/order/pay', u.token, { orderId: o.json().data.id })));
    expect(pays.filter((p) => p.statusCode === 200)).toHaveLength(1);
    expect(pays.filter((p) => p.statusCode === 409)).toHaveLength(1);
    // Each order was priced for the time left when it was made (they may differ by a unit): the paid one is charged.
    const paid = orders[pays.findIndex((p) => p.statusCode === 200)]!;
    expect(await balanceOf(u)).toBe(mid - paid.json().data.amount);
    expect(await used()).toBe(4);
    expect(await inst(id)).toMatchObject({ gpuCount: 4, cpuCores: 8 });
    await moneyRight(u);
  });
});
