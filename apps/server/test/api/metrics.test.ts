import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { createTestClock } from '../helpers/clock.ts';
import { engines } from '../helpers/db.ts';
import { createUser, signInSeededOperator } from '../helpers/factories.ts';
import { createFakePlatform } from '../fakes/metering.ts';
import { insertInstance, recharge, startMeter } from '../helpers/metering.ts';
import { enqueueJob } from '../../src/jobs/queue.ts';

describe.each(engines)('GET /metrics on %s', (engine) => {
  let t: TestApp;
  const clock = createTestClock();
  beforeAll(async () => {
    t = await buildTestApp({ engine, clock, overrides: { platform: createFakePlatform() } });
  });
  afterAll(() => t.close());

  const scrape = (opts: { remoteAddress?: string; headers?: Record<string, string>; token?: string } = {}) =>
    t.request({ method: 'GET', url: '/metrics', remoteAddress: opts.remoteAddress ?? '127.0.0.1', headers: opts.headers, token: opts.token });

  it('answers a direct loopback connection or an operator token, and 404 to anyone else', async () => {
    const ok = await scrape();
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect((await scrape({ remoteAddress: '::1' })).statusCode).toBe(200);
    // through a proxy on this host, or from elsewhere: not without an operator
    const proxied: Record<string, string>[] = [{ 'x-forwarded-for': '203.0.113.9' }, { forwarded: 'for=203.0.113.9' }, { 'x-real-ip': '203.0.113.9' }];
    for (const headers of proxied) {
      const res = await scrape({ headers });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 404, data: null });
    }
    expect((await scrape({ remoteAddress: '203.0.113.9' })).statusCode).toBe(404);
    const user = (await createUser(t)).token;
    expect((await scrape({ remoteAddress: '203.0.113.9', token: user })).statusCode).toBe(404);
    expect((await scrape({ remoteAddress: '203.0.113.9', token: 'not-a-token' })).statusCode).toBe(404);
    const op = (await signInSeededOperator(t)).token;
    expect((await scrape({ remoteAddress: '203.0.113.9', token: op, headers: { 'x-forwarded-for': '203.0.113.9' } })).statusCode).toBe(200);
  });

  it('reports HTTP latency by route pattern, job queue depth, instances, settlement lag, ledger postings and payment notifications', async () => {
    const { user, token } = await createUser(t);
    await recharge(t, user, 50_000);
    await t.request({ method: 'GET', url: '/api/v1/machine/disk?machineId=99999', token }); // a 404 on a route with a query
    await t.request({ method: 'GET', url: '/no/such/route' });
    const inst = await insertInstance(t, { tenantId: user.tenantId, userId: user.id, hourly: 36_000 });
    await insertInstance(t, { tenantId: user.tenantId, userId: user.id, status: 'stopped' });
    await t.container.metering.settle(clock());
    await startMeter(t, inst, clock());
    clock.advance(75_000);
    await enqueueJob(t.container.db, 'test.metrics', { n: 1 });
    await t.request({ method: 'POST', url: '/api/v1/payments/notify/sandbox', payload: 'garbage', headers: { 'content-type': 'text/plain' } });
    await t.container.metering.settle(new Date(clock().getTime() - 15_000)); // 60 s settled, 15 s pending

    const text = (await scrape()).body;
    expect(text).toMatch(/suanli_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/machine\/disk",status="4xx"\} 1/);
    expect(text).toMatch(/suanli_http_request_duration_seconds_count\{method="GET",route="unmatched",status="\dxx"\} 1/);
    expect(text).not.toContain('machineId=');
    expect(text).toMatch(/suanli_job_queue_depth\{kind="test.metrics",state="queued"\} 1/);
    expect(text).toMatch(/suanli_instances\{state="running",driver="local"\} \d+/);
    expect(text).toMatch(/suanli_instances\{state="stopped",driver="local"\} \d+/);
    const lag = Number(/^suanli_settlement_lag_seconds (\S+)$/m.exec(text)?.[1]);
    expect(lag).toBeCloseTo(15, 0);
    expect(text).toMatch(/suanli_ledger_postings_total\{kind="recharge"\} \d+/);
    expect(text).toMatch(/suanli_ledger_postings_total\{kind="payg_charge"\} 1/);
    expect(text).toMatch(/suanli_payment_notifications_total\{method="sandbox",outcome="rejected"\} 1/);
  });

  it('counts job attempts by kind and outcome', async () => {
    await enqueueJob(t.container.db, 'payment.reconcile', {}, clock());
    await t.container.jobs.runDue();
    const text = (await scrape()).body;
    expect(text).toMatch(/suanli_job_duration_seconds_count\{kind="payment.reconcile",outcome="done"\} 1/);
  });
});
