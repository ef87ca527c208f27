import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { createTestClock } from '../helpers/clock.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { createFakePlatform } from '../fakes/metering.ts';
import { balanceOf, billsOf, insertInstance, meterOf, paygCharged, recharge, startMeter, stopMeter } from '../helpers/metering.ts';
import { createMeteringService, MeteringMessages } from '../../src/modules/metering/metering.service.ts';
import { owed } from '../../src/modules/metering/metering.repository.ts';

const YUAN = 10_000;
const S = 1000;

describe.each(engines)('metering on %s', (engine) => {
  let t: TestApp;
  const clock = createTestClock();
  const platform = createFakePlatform();
  beforeAll(async () => {
    t = await buildTestApp({ engine, clock, overrides: { platform } });
  });
  afterAll(() => t.close());

  async function paygUser(balance = 100 * YUAN) {
    const { user, token } = await createUser(t);
    await recharge(t, user, balance);
    return { user, token };
  }
  const at = (ms: number) => new Date(clock().getTime() + ms);

  it('the rounding rule: owed(ms) = floor(ms × hourly / 3,600,000)', () => {
    expect(owed(90 * S, 36_000)).toBe(900);
    expect(owed(1, 36_000)).toBe(0);
    expect(owed(100, 36_000)).toBe(1);
    expect(owed(3_600_000, 21_800)).toBe(21_800);
    expect(owed(90 * S, 21_800)).toBe(545);
  });

  it('90 s at ¥3.60/h settles exactly ¥0.0900 in one tick', async () => {
    const { user } = await paygUser();
    const inst = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, hourly: 36_000 });
    const t0 = clock();
    await startMeter(t, inst, t0);
    await t.container.metering.settle(new Date(t0.getTime() + 90 * S));
    expect(await paygCharged(t.container.db, user.id)).toBe(900);
    expect(await balanceOf(t.container.db, user.id)).toBe(100 * YUAN - 900);
    const b = await billsOf(t.container.db, inst.id);
    expect(b).toHaveLength(1);
    expect(b[0]).toMatchObject({ chargeType: 'payg', seconds: 90, amount: 900, periodStart: t0, periodEnd: new Date(t0.getTime() + 90 * S) });
    expect(await t.container.ledger.check(user.tenantId)).toEqual([]);
  });

  it('the same 90 s settle the same ¥0.0900 whatever the tick split, across a stop and a restart too', async () => {
    const splits = [[90], [1, 1, 1, 7, 13, 29, 38], [0.3, 0.3, 0.4, 44, 45], [45.5, 44.5]];
    const start = clock().getTime();
    for (const split of splits) {
      const { user } = await paygUser();
      const inst = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, hourly: 36_000 });
      await startMeter(t, inst, new Date(start));
      let now = start;
      for (const secs of split) {
        now += secs * S;
        await t.container.metering.settle(new Date(now));
      }
      expect(await paygCharged(t.container.db, user.id)).toBe(900);
      const b = await billsOf(t.container.db, inst.id);
      expect(b.reduce((s, x) => s + x.amount, 0)).toBe(900);
      expect(b.reduce((s, x) => s + x.seconds, 0)).toBe(90);
    }
    // 45 s, stopped 20 s (not billed), 45 s more: 90 s of running, one tick in between and one at the end.
    const { user } = await paygUser();
    const inst = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, hourly: 36_000 });
    await startMeter(t, inst, new Date(start));
    await t.container.metering.settle(new Date(start + 30 * S));
    await stopMeter(t, inst.id, new Date(start + 45 * S));
    await t.container.metering.settle(new Date(start + 50 * S));
    await t.container.metering.settle(new Date(start + 60 * S)); // nothing running, nothing pending: no bill
    await startMeter(t, inst, new Date(start + 65 * S));
    await t.container.metering.settle(new Date(start + 110 * S));
    expect(await paygCharged(t.container.db, user.id)).toBe(900);
    const bills = await billsOf(t.container.db, inst.id);
    expect(bills.map((b) => [b.seconds, b.amount])).toEqual([
      [30, 300],
      [15, 150],
      [45, 450],
    ]);
    expect(await t.container.ledger.check()).toEqual([]);
  });

  it('odd prices and 1 s ticks add up to the cumulative rule, never more', async () => {
    const { user } = await paygUser();
    const inst = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, hourly: 21_800 });
    const t0 = clock().getTime();
    await startMeter(t, inst, new Date(t0));
    for (let i = 1; i <= 90; i++) await t.container.metering.settle(new Date(t0 + i * S));
    expect(await paygCharged(t.container.db, user.id)).toBe(owed(90 * S, 21_800));
    expect((await meterOf(t.container.db, inst.id))?.chargedTotal).toBe(545);
  });

  it('one ledger entry per user per tick for all their instances; prepaid instances are not metered', async () => {
    const { user } = await paygUser();
    const a = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, hourly: 36_000 });
    const b = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, hourly: 72_000 });
    const p = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, chargeType: 'prepaid' });
    const t0 = clock();
    for (const i of [a, b, p]) await startMeter(t, i, t0);
    expect(await meterOf(t.container.db, p.id)).toBeUndefined();
    await t.container.metering.settle(new Date(t0.getTime() + 60 * S));
    const entries = await t.container.ledger.list(user.id, { kind: 'payg_charge' }, 1, 10);
    expect(entries.list).toHaveLength(1);
    expect(entries.list[0]).toMatchObject({ amount: -(600 + 1200), memo: '按量计费：2 个实例' });
  });

  it('a new rate settles what ran at the old one first', async () => {
    const { user } = await paygUser();
    const inst = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, hourly: 36_000 });
    const t0 = clock().getTime();
    await startMeter(t, inst, new Date(t0));
    await startMeter(t, { ...inst, hourly: 72_000 }, new Date(t0 + 10 * S)); // spec change while running
    await t.container.metering.settle(new Date(t0 + 20 * S));
    expect(await paygCharged(t.container.db, user.id)).toBe(100 + 200);
    expect(await t.container.ledger.check(user.tenantId)).toEqual([]);
  });

  it('two schedulers settling at once never double-settle', async () => {
    const users = await Promise.all(Array.from({ length: 6 }, () => paygUser()));
    const insts = [];
    for (const { user } of users) for (let i = 0; i < 5; i++) insts.push(await insertInstance(t, { tenantId: user.tenantId, userId: user.id, hourly: 36_000 }));
    const t0 = clock().getTime();
    for (const i of insts) await startMeter(t, i, new Date(t0));
    const other = createMeteringService({ db: t.container.db, clock, ledger: t.container.ledger, platform });
    for (let k = 1; k <= 6; k++) {
      const now = new Date(t0 + k * 15 * S);
      // the same instant from both, and a second later from one: every row once, whoever gets it
      await Promise.all([t.container.metering.settle(now), other.settle(now), other.settle(new Date(now.getTime() + (k === 6 ? 0 : 1)))]);
    }
    const end = t0 + 90 * S;
    await Promise.all([t.container.metering.settle(new Date(end)), other.settle(new Date(end))]);
    for (const { user } of users) expect(await paygCharged(t.container.db, user.id)).toBe(5 * 900);
    for (const i of insts) {
      const b = await billsOf(t.container.db, i.id);
      expect(b.reduce((s, x) => s + x.amount, 0)).toBe(900);
    }
    expect(await t.container.ledger.check()).toEqual([]);
  });

  it('arrears: a settlement below zero stops the user’s running pay-as-you-go instances, and only those', async () => {
    const { user } = await paygUser(500); // ¥0.05
    const a = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, hourly: 36_000 });
    const b = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, hourly: 36_000 });
    const pre = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, chargeType: 'prepaid', expiresAt: at(86_400_000) });
    const { user: rich } = await paygUser();
    const c = await insertInstance(t, { tenantId: rich.tenantId, userId: rich.id, hourly: 36_000 });
    const t0 = clock();
    for (const i of [a, b, c]) await startMeter(t, i, t0);
    platform.stops.length = 0;
    const r = await t.container.metering.tick(new Date(t0.getTime() + 60 * S));
    expect(await balanceOf(t.container.db, user.id)).toBe(500 - 1200); // metering may go below zero
    expect(r.stopped.sort()).toEqual([a.id, b.id].sort());
    expect(platform.stops.filter((s) => [a.id, b.id].includes(s.id)).map((s) => s.reason)).toEqual([MeteringMessages.arrears, MeteringMessages.arrears]);
    expect(platform.stops.map((s) => s.id)).not.toContain(c.id);
    expect(platform.stops.map((s) => s.id)).not.toContain(pre.id);
    expect(await t.container.ledger.check()).toEqual([]);
    // the instance service stops them; then no more arrears stops
    for (const i of [a, b]) await stopMeter(t, i.id, new Date(t0.getTime() + 61 * S));
    platform.stops.length = 0;
    await t.container.metering.tick(new Date(t0.getTime() + 120 * S));
    expect(platform.stops.map((s) => s.id).filter((id) => [a.id, b.id].includes(id))).toEqual([]);
    expect(await balanceOf(t.container.db, user.id)).toBe(500 - 1220); // the last second before the stop
  });

  it('expiry stops prepaid instances; release time releases stopped ones', async () => {
    const { user } = await paygUser();
    const now = clock().getTime();
    const expired = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, chargeType: 'prepaid', expiresAt: new Date(now - S) });
    const current = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, chargeType: 'prepaid', expiresAt: new Date(now + 3600 * S) });
    const oldStopped = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, status: 'stopped', releaseAt: new Date(now - S) });
    const oldPrepaid = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, chargeType: 'prepaid', status: 'stopped', expiresAt: new Date(now - 8 * 86_400 * S), releaseAt: new Date(now - 86_400 * S) });
    const young = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, status: 'stopped', releaseAt: new Date(now + 86_400 * S) });
    const gone = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, status: 'released', releaseAt: new Date(now - S) });
    platform.stops.length = 0;
    platform.releases.length = 0;
    await t.container.metering.tick(new Date(now));
    expect(platform.stops).toContainEqual({ id: expired.id, reason: MeteringMessages.expired });
    expect(platform.stops.map((s) => s.id)).not.toContain(current.id);
    expect(platform.releases).toContainEqual({ id: oldStopped.id, reason: MeteringMessages.releasedStopped });
    expect(platform.releases).toContainEqual({ id: oldPrepaid.id, reason: MeteringMessages.releasedExpired });
    expect(platform.releases.map((r) => r.id)).not.toContain(young.id);
    expect(platform.releases.map((r) => r.id)).not.toContain(gone.id);
  });

  it('a prepaid payment writes its one bill row', async () => {
    const { user } = await paygUser();
    const inst = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, chargeType: 'prepaid' });
    const from = clock();
    const to = new Date(from.getTime() + 86_400 * S);
    await t.container.db.transaction((tx) => t.container.metering.prepaidPaid(tx, { instanceId: inst.id, tenantId: user.tenantId, userId: user.id, orderId: '20261101080000123456', amount: 480_000, periodStart: from, periodEnd: to }));
    const b = await billsOf(t.container.db, inst.id);
    expect(b).toEqual([expect.objectContaining({ chargeType: 'prepaid', orderId: '20261101080000123456', amount: 480_000, seconds: 86_400 })]);
  });

  it('bulk ledger posting: one entry per user, chained like single postings, overdrafts left out unless allowed', async () => {
    const a = (await paygUser(10 * YUAN)).user;
    const b = (await paygUser(1 * YUAN)).user;
    const c = (await createUser(t)).user;
    const ledger = t.container.ledger;
    // interleaved with single postings, so each user's chain links bulk and single entries
    await ledger.post({ tenantId: a.tenantId, userId: a.id, kind: 'adjustment', amount: 5, ref: 'test:single-1' });
    const posted = await t.container.db.transaction((tx) =>
      ledger.postBulk(tx, 'payg_charge', [
        { tenantId: a.tenantId, userId: a.id, amount: -3 * YUAN, ref: 'test:bulk-1' },
        { tenantId: b.tenantId, userId: b.id, amount: -2 * YUAN, ref: 'test:bulk-1' }, // would overdraw: left out
        { tenantId: c.tenantId + 1000, userId: c.id, amount: 7, ref: 'test:bulk-1' }, // foreign tenant: left out
      ]),
    );
    expect(posted).toEqual([{ userId: a.id, balanceAfter: 7 * YUAN + 5 }]);
    await ledger.post({ tenantId: a.tenantId, userId: a.id, kind: 'adjustment', amount: 6, ref: 'test:single-2' });
    const allowed = await t.container.db.transaction((tx) => ledger.postBulk(tx, 'payg_charge', [{ tenantId: b.tenantId, userId: b.id, amount: -2 * YUAN, ref: 'test:bulk-2' }], { allowNegative: true }));
    expect(allowed).toEqual([{ userId: b.id, balanceAfter: -1 * YUAN }]);
    expect(await balanceOf(t.container.db, a.id)).toBe(7 * YUAN + 11);
    expect(await t.container.ledger.check()).toEqual([]);
    // one posting per user; a repeated ref fails the whole statement (and the caller's transaction)
    await expect(t.container.db.transaction((tx) => ledger.postBulk(tx, 'payg_charge', [{ tenantId: a.tenantId, userId: a.id, amount: -1, ref: 'x' }, { tenantId: a.tenantId, userId: a.id, amount: -1, ref: 'y' }]))).rejects.toThrow(/one posting per user/);
    await expect(t.container.db.transaction((tx) => ledger.postBulk(tx, 'payg_charge', [{ tenantId: a.tenantId, userId: a.id, amount: -1, ref: 'test:bulk-1' }]))).rejects.toThrow();
    expect(await balanceOf(t.container.db, a.id)).toBe(7 * YUAN + 11);
    expect(await t.container.ledger.check()).toEqual([]);
  });

  it('settlement lag: seconds since the oldest unsettled running stretch began', async () => {
    const { user } = await paygUser();
    const inst = await insertInstance(t, { tenantId: user.tenantId, userId: user.id });
    await t.container.metering.settle(clock()); // everything before is settled now
    await startMeter(t, inst, clock());
    clock.advance(42 * S);
    expect(await t.container.metering.settlementLagSeconds()).toBeCloseTo(42, 0);
    await t.container.metering.settle(clock());
    expect(await t.container.metering.settlementLagSeconds()).toBe(0);
  });
});
