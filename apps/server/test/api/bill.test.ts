import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { createTestClock } from '../helpers/clock.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { createFakePlatform } from '../fakes/metering.ts';
import { insertInstance, recharge, startMeter, stopMeter } from '../helpers/metering.ts';
import type { BillItem, DailyBillItem } from '@suanli/contract/bill';

const S = 1000;

describe.each(engines)('bills on %s', (engine) => {
  let t: TestApp;
  // 2026-11-01 23:58 in Shanghai: the run crosses midnight there.
  const clock = createTestClock(new Date('2026-11-01T23:58:00+08:00'));
  let token: string;
  let instA: { id: string };
  let instB: { id: string };
  beforeAll(async () => {
    t = await buildTestApp({ engine, clock, overrides: { platform: createFakePlatform() } });
    const { user, token: tk } = await createUser(t);
    token = tk;
    await recharge(t, user, 1_000_000);
    instA = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, hourly: 36_000, name: '训练机' });
    instB = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, chargeType: 'prepaid', name: '包月机' });
    const t0 = clock().getTime();
    await startMeter(t, { ...instA, tenantId: user.tenantId, userId: user.id, chargeType: 'payg', hourly: 36_000 }, new Date(t0));
    for (let k = 1; k <= 4; k++) await t.container.metering.settle(new Date(t0 + k * 60 * S)); // 23:59, 00:00, 00:01, 00:02
    await stopMeter(t, instA.id, new Date(t0 + 4 * 60 * S + 30 * S));
    await t.container.metering.settle(new Date(t0 + 5 * 60 * S));
    await t.container.db.transaction((tx) =>
      t.container.metering.prepaidPaid(tx, { instanceId: instB.id, tenantId: user.tenantId, userId: user.id, orderId: '20261102000000000001', amount: 12_000_000, periodStart: new Date(t0 + 3 * 60 * S), periodEnd: new Date(t0 + 3 * 60 * S + 30 * 86_400 * S) }),
    );
  });
  afterAll(() => t.close());

  const post = (url: string, payload: object, tk: string | undefined = token) => t.request({ method: 'POST', url, token: tk, payload });

  it('lists one row per settled period, newest first, with totals', async () => {
    const res = await post('/api/v1/bills/list', {});
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json().data as { list: BillItem[]; total: number; totalAmount: number };
    expect(page.total).toBe(6);
    // 4.5 minutes at ¥3.60/h = ¥0.27 = 2,700 units, plus the prepaid month
    expect(page.totalAmount).toBe(2_700 + 12_000_000);
    const payg = page.list.filter((b) => b.chargeType === 'payg');
    expect(payg.map((b) => b.amount)).toEqual([300, 600, 600, 600, 600]);
    expect(payg.map((b) => b.seconds)).toEqual([30, 60, 60, 60, 60]);
    expect(payg[0]).toMatchObject({ instanceId: instA.id, instanceName: '训练机', orderId: null });
    expect(page.list.find((b) => b.chargeType === 'prepaid')).toMatchObject({ instanceName: '包月机', orderId: '20261102000000000001', amount: 12_000_000, seconds: 30 * 86_400 });
  });

  it('filters by instance, charge type and time, and pages', async () => {
    const byInst = (await post('/api/v1/bills/list', { instanceId: instB.id })).json().data;
    expect(byInst.total).toBe(1);
    expect((await post('/api/v1/bills/list', { chargeType: 'payg' })).json().data.total).toBe(5);
    const window = (await post('/api/v1/bills/list', { startTime: '2026-11-02T00:00:30+08:00', endTime: '2026-11-02T00:01:30+08:00' })).json().data as { list: BillItem[] };
    expect(window.list.filter((b) => b.chargeType === 'payg').map((b) => b.periodStart)).toEqual(['2026-11-01T16:01:00.000Z', '2026-11-01T16:00:00.000Z']);
    const p2 = (await post('/api/v1/bills/list', { page: 2, pageSize: 4 })).json().data;
    expect([p2.list.length, p2.total]).toEqual([2, 6]);
  });

  it('daily bills sum per day in Asia/Shanghai and per instance', async () => {
    const res = await post('/api/v1/bills/daily_bill/list', {});
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json().data as { list: DailyBillItem[]; total: number; totalAmount: number };
    const rows = page.list.map((d) => [d.day, d.instanceName, d.chargeType, d.seconds, d.amount]);
    expect(rows).toEqual(
      expect.arrayContaining([
        ['2026-11-01', '训练机', 'payg', 120, 1_200],
        ['2026-11-02', '训练机', 'payg', 150, 1_500],
        ['2026-11-02', '包月机', 'prepaid', 30 * 86_400, 12_000_000],
      ]),
    );
    expect(page.total).toBe(3);
    expect(page.totalAmount).toBe(2_700 + 12_000_000);
    expect(page.list[page.list.length - 1]?.day).toBe('2026-11-01');
    const one = (await post('/api/v1/bills/daily_bill/list', { instanceId: instA.id, pageSize: 1 })).json().data;
    expect([one.list.length, one.total]).toEqual([1, 2]);
  });

  it('shows nobody else’s bills; refuses bad input with a clear message; needs a session', async () => {
    const other = (await createUser(t)).token;
    expect((await post('/api/v1/bills/list', {}, other)).json().data).toEqual({ list: [], total: 0, totalAmount: 0 });
    expect((await post('/api/v1/bills/list', { instanceId: instA.id }, other)).json().data.total).toBe(0);
    expect((await post('/api/v1/bills/daily_bill/list', {}, other)).json().data.total).toBe(0);
    for (const [payload, msg] of [
      [{ instanceId: 'nope' }, '实例 ID 格式不正确'],
      [{ startTime: '2026-11-03T00:00:00+08:00', endTime: '2026-11-01T00:00:00+08:00' }, '开始时间不能晚于结束时间'],
      [{ startTime: 'yesterday' }, '开始时间格式不正确'],
      [{ pageSize: 500 }, '每页最多 100 条'],
      [{ chargeType: 'free' }, '计费方式'],
    ] as const) {
      const res = await post('/api/v1/bills/list', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().msg).toContain(msg);
      expect((await post('/api/v1/bills/daily_bill/list', payload)).statusCode).toBe(400);
    }
    expect((await t.request({ method: 'POST', url: '/api/v1/bills/list', payload: {} })).statusCode).toBe(401);
  });
});
