import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { createFakeCompute, type FakeCompute } from '../fakes/compute.ts';
import { createFakeMeter, createInventory } from '../fakes/orders.ts';
import { instances, machines } from '../../src/db/schema/compute.ts';

const YUAN = 10_000;
const RACERS = 8;

/** Paying races on both engines; on PostgreSQL (TEST_DATABASE_URL) the requests really run at once. */
describe.each(engines)('paying for orders concurrently on %s', (engine) => {
  let t: TestApp;
  let compute: FakeCompute;
  beforeAll(async () => {
    compute = createFakeCompute();
    t = await buildTestApp({ engine, overrides: { compute, meter: createFakeMeter() } });
  });
  afterAll(async () => {
    await t.close();
    compute.cleanup();
  });

  const post = (url: string, token: string, payload: object, headers: Record<string, string> = {}) => t.request({ method: 'POST', url, token, payload, headers });
  const balanceOf = async (userId: number) => {
    t.container.wallet.forgetBalance(userId);
    return t.container.wallet.balanceOf(userId);
  };
  const ledgerClean = async (tenantId: number) => expect(await t.container.ledger.check(tenantId)).toEqual([]);

  it(`lets exactly one of ${RACERS} users take the last GPU; the others get 409 and are not charged`, async () => {
    const { machine, image } = await createInventory(t, { gpuTotal: 4, gpuUsed: 3 });
    const racers = await Promise.all(
      Array.from({ length: RACERS }, async (_, i) => {
        const u = await createUser(t);
        await t.container.ledger.post({ tenantId: u.user.tenantId, userId: u.user.id, kind: 'recharge', amount: 100 * YUAN, ref: `test:race-${i}` });
        const kind = i % 2 === 0 ? 'prepay' : 'payg';
        const body = kind === 'prepay' ? { machineId: machine.id, gpuCount: 1, imageId: image.id, period: 'day', quantity: 1 } : { machineId: machine.id, gpuCount: 1, imageId: image.id };
        const order = (await post(`/api/v1/order/${kind}`, u.token, body)).json().data as { id: string; amount: number };
        return { ...u, order };
      }),
    );
    const answers = await Promise.all(racers.map((r) => post('/api/v1/order/pay', r.token, { orderId: r.order.id })));
    const winners = answers.filter((a) => a.statusCode === 200);
    const losers = answers.filter((a) => a.statusCode !== 200);
    expect(winners).toHaveLength(1);
    expect(losers.map((l) => l.statusCode)).toEqual(Array(RACERS - 1).fill(409));
    for (const l of losers) expect(l.json().msg).toMatch(/^GPU 已被抢完：.*本次未扣费/);
    const [m] = await t.container.db.select().from(machines).where(eq(machines.id, machine.id));
    expect(m!.gpuUsed).toBe(4);
    expect(await t.container.db.select().from(instances).where(eq(instances.machineId, machine.id))).toHaveLength(1);
    for (const [i, r] of racers.entries()) {
      const won = answers[i]!.statusCode === 200;
      expect(await balanceOf(r.user.id)).toBe(won ? 100 * YUAN - r.order.amount : 100 * YUAN);
    }
    await ledgerClean(racers[0]!.user.tenantId);
  });

  it('charges once when one user pays the same order several times at once, without an Idempotency-Key', async () => {
    const { token, user } = await createUser(t);
    const { machine, image } = await createInventory(t);
    await t.container.ledger.post({ tenantId: user.tenantId, userId: user.id, kind: 'recharge', amount: 500 * YUAN, ref: 'test:twice' });
    const order = (await post('/api/v1/order/prepay', token, { machineId: machine.id, gpuCount: 2, imageId: image.id, period: 'day', quantity: 1 })).json().data;
    const answers = await Promise.all(Array.from({ length: 4 }, () => post('/api/v1/order/pay', token, { orderId: order.id })));
    expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(1);
    for (const a of answers.filter((x) => x.statusCode !== 200)) {
      expect(a.statusCode).toBe(409);
      expect(a.json().msg).toBe('订单已支付，请勿重复支付');
    }
    expect(await balanceOf(user.id)).toBe(500 * YUAN - order.amount);
    const [m] = await t.container.db.select().from(machines).where(eq(machines.id, machine.id));
    expect(m!.gpuUsed).toBe(2);
    await ledgerClean(user.tenantId);
  });

  it('charges once when one user pays the same order twice at once with the same Idempotency-Key', async () => {
    const { token, user } = await createUser(t);
    const { machine, image } = await createInventory(t);
    await t.container.ledger.post({ tenantId: user.tenantId, userId: user.id, kind: 'recharge', amount: 100 * YUAN, ref: 'test:key' });
    const order = (await post('/api/v1/order/prepay', token, { machineId: machine.id, gpuCount: 1, imageId: image.id, period: 'day', quantity: 1 })).json().data;
    const headers = { 'idempotency-key': `pay-${order.id}` };
    const answers = await Promise.all([post('/api/v1/order/pay', token, { orderId: order.id }, headers), post('/api/v1/order/pay', token, { orderId: order.id }, headers)]);
    const codes = answers.map((a) => a.statusCode).sort();
    // Either the second waited for the first's stored answer (200, replayed) or found it still running (409).
    expect(codes[0]).toBe(200);
    expect([200, 409]).toContain(codes[1]);
    expect(await balanceOf(user.id)).toBe(100 * YUAN - order.amount);
    await ledgerClean(user.tenantId);
  });
});
