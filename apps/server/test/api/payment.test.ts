import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { createTestClock } from '../helpers/clock.ts';
import { createInjectFetch } from '../fakes/inject-fetch.ts';
import { paymentNotifications, payments } from '../../src/db/schema/wallet.ts';
import { jobs } from '../../src/db/schema/job.ts';
import { tenants } from '../../src/db/schema/tenant.ts';
import { SANDBOX_NOTIFY_JOB } from '../../src/adapters/payments/sandbox.ts';

const YUAN = 10_000;
type PaymentData = { id: string; amount: number; method: string; status: string; payUrl: string | null; qrCode: string | null; createdAt: string; expiresAt: string; paidAt: string | null };

describe.each(engines)('recharge payments on %s', (engine) => {
  let t: TestApp;
  const clock = createTestClock();
  let net: ReturnType<typeof createInjectFetch>;

  beforeAll(async () => {
    t = await buildTestApp({ engine, clock });
    // The sandbox posts its notifications with the global fetch: here they reach the app through inject.
    net = createInjectFetch(t.app);
    vi.stubGlobal('fetch', net);
  });
  afterAll(async () => {
    vi.unstubAllGlobals();
    await t.close();
  });

  const create = (token: string, payload: unknown, headers: Record<string, string> = {}) => t.request({ method: 'POST', url: '/api/v1/payments', token, payload: payload as object, headers });
  const created = async (token: string, amount = 100 * YUAN) => {
    const res = await create(token, { amount, method: 'sandbox' });
    expect(res.statusCode).toBe(200);
    return res.json<{ data: PaymentData }>().data;
  };
  const fetchPayment = async (token: string, id: string) => (await t.request({ method: 'GET', url: `/api/v1/payments/${id}`, token })).json<{ data: PaymentData }>().data;
  const balance = async (token: string) => (await t.request({ method: 'GET', url: '/api/v1/account/balance', token })).json<{ data: { balance: number } }>().data.balance;
  const transactions = async (token: string) =>
    (await t.request({ method: 'POST', url: '/api/v1/transactions/list', token, payload: {} })).json<{ data: { list: { kind: string; amount: number; ref: string; memo: string }[] } }>().data.list;
  const notifications = (paymentId: string) => t.container.db.select().from(paymentNotifications).where(eq(paymentNotifications.paymentId, paymentId));
  const sandboxJobs = async (paymentId: string) =>
    (await t.container.db.select().from(jobs).where(eq(jobs.kind, SANDBOX_NOTIFY_JOB))).filter((j) => j.payload.out_trade_no === paymentId.replaceAll('-', ''));

  /** The cashier as a browser uses it: the page at payUrl, then one of its forms. */
  const cashierPage = (payUrl: string) => {
    const u = new URL(payUrl);
    return t.app.inject({ method: 'GET', url: u.pathname + u.search, headers: { host: u.host } });
  };
  const choose = (payUrl: string, action: 'pay' | 'fail' | 'abandon', sig = new URL(payUrl).searchParams.get('sig') ?? '') => {
    const u = new URL(payUrl);
    return t.app.inject({
      method: 'POST',
      url: `${u.pathname}/${action}`,
      headers: { host: u.host, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ sig }).toString(),
    });
  };

  it('lists the tenant’s enabled methods, sandbox by default', async () => {
    const { token } = await createUser(t);
    const res = await t.request({ method: 'GET', url: '/api/v1/payments/methods', token });
    expect(res.json()).toEqual({ code: 200, msg: '操作成功', data: [{ method: 'sandbox', name: '沙箱支付' }] });
    expect((await t.request({ method: 'GET', url: '/api/v1/payments/methods' })).statusCode).toBe(401);
  });

  it('refuses bad amounts and methods with the contract’s messages', async () => {
    const { token, user } = await createUser(t);
    const msg = async (payload: unknown) => {
      const res = await create(token, payload);
      expect(res.statusCode).toBe(400);
      return res.json<{ msg: string }>().msg;
    };
    expect(await msg({ amount: 9_900, method: 'sandbox' })).toBe('单次充值金额不能低于 ¥1'); // ¥0.99
    expect(await msg({ amount: 1_000_000_100, method: 'sandbox' })).toBe('单次充值金额不能超过 ¥100,000'); // ¥100,000.01
    expect(await msg({ amount: 10_000.5, method: 'sandbox' })).toBe('充值金额必须是整数（单位 0.0001 元）');
    expect(await msg({ amount: -10_000, method: 'sandbox' })).toBe('单次充值金额不能低于 ¥1');
    expect(await msg({ amount: '10000', method: 'sandbox' })).toBe('充值金额必须是数字');
    expect(await msg({ amount: 10_050, method: 'sandbox' })).toBe('充值金额最小单位为分'); // ¥1.005
    expect(await msg({ amount: 10_000, method: 'paypal' })).toBe('支付方式不正确');
    expect(await msg({ amount: 10_000, method: 'sandbox', userId: 1 })).toBe('不支持的参数：userId');
    expect(await t.container.db.select().from(payments).where(eq(payments.userId, user.id))).toEqual([]);
    // the limits themselves are accepted
    expect((await create(token, { amount: 1 * YUAN, method: 'sandbox' })).statusCode).toBe(200);
    expect((await create(token, { amount: 100_000 * YUAN, method: 'sandbox' })).statusCode).toBe(200);
    expect((await t.request({ method: 'POST', url: '/api/v1/payments', payload: { amount: 10_000, method: 'sandbox' } })).statusCode).toBe(401);
  });

  it('creates a pending payment with a cashier link on the request’s own origin, expiring in 15 minutes', async () => {
    const { token } = await createUser(t);
    const p = await created(token, 100 * YUAN);
    expect(p).toMatchObject({ amount: 100 * YUAN, method: 'sandbox', status: 'pending', qrCode: null, paidAt: null });
    expect(p.payUrl).toMatch(new RegExp(`^http://localhost/sandbox/cashier/${p.id.replaceAll('-', '')}\\?sig=[\\w-]+$`));
    expect(Date.parse(p.expiresAt) - Date.parse(p.createdAt)).toBe(15 * 60_000);
    expect(p.createdAt).toBe(clock().toISOString());
    expect(await fetchPayment(token, p.id)).toEqual(p);
  });

  it('replays an Idempotency-Key instead of creating a second payment', async () => {
    const { token, user } = await createUser(t);
    const key = crypto.randomUUID();
    const first = await create(token, { amount: 5 * YUAN, method: 'sandbox' }, { 'idempotency-key': key });
    const again = await create(token, { amount: 5 * YUAN, method: 'sandbox' }, { 'idempotency-key': key });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().data.id).toBe(first.json().data.id);
    expect(await t.container.db.select().from(payments).where(eq(payments.userId, user.id))).toHaveLength(1);
  });

  it('answers another user’s or tenant’s payment exactly like a missing one', async () => {
    const owner = await createUser(t);
    const p = await created(owner.token);
    const other = await createUser(t);
    const foreign = await t.request({ method: 'GET', url: `/api/v1/payments/${p.id}`, token: other.token });
    const missing = await t.request({ method: 'GET', url: `/api/v1/payments/${crypto.randomUUID()}`, token: other.token });
    expect(foreign.statusCode).toBe(404);
    expect(missing.statusCode).toBe(404);
    expect({ ...foreign.json(), requestId: 0 }).toEqual({ ...missing.json(), requestId: 0 });
    const elsewhere = await createUser(t, { host: '127.0.0.1' });
    expect((await t.request({ method: 'GET', url: `/api/v1/payments/${p.id}`, token: elsewhere.token, host: '127.0.0.1' })).statusCode).toBe(404);
    const bad = await t.request({ method: 'GET', url: '/api/v1/payments/not-a-uuid', token: owner.token });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().msg).toBe('支付单号格式不正确');
    expect((await t.request({ method: 'GET', url: `/api/v1/payments/${p.id}` })).statusCode).toBe(401);
  });

  it('pays through the sandbox cashier: redirect, signed notification over HTTP, one credit', async () => {
    const { token, user } = await createUser(t);
    const p = await created(token, 100 * YUAN);
    const payUrl = p.payUrl ?? '';

    const page = await cashierPage(payUrl);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('¥100.00');
    expect(page.body).toContain(p.id);
    expect(page.body).toContain('确认支付');
    expect(page.body).toContain('模拟支付失败');
    expect(page.body).toContain('放弃支付');
    const [tenant] = await t.container.db.select().from(tenants).where(eq(tenants.id, user.tenantId));
    expect(page.body).toContain(tenant?.title);

    const paid = await choose(payUrl, 'pay');
    expect(paid.statusCode).toBe(303);
    expect(paid.headers.location).toBe(`http://localhost/recharge/success?id=${p.id}`);
    // The browser is back before the notification: the success page sees pending, and nothing is credited by coming back.
    expect((await fetchPayment(token, p.id)).status).toBe('pending');
    expect(await balance(token)).toBe(0);

    const before = net.calls.length;
    await t.container.jobs.runDue();
    const delivered = net.calls.slice(before);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({ method: 'POST', url: 'http://localhost/api/v1/payments/notify/sandbox', status: 200, answer: 'success' });
    expect(delivered[0]?.headers['x-sandbox-signature']).toBeTruthy();
    expect(JSON.parse(delivered[0]?.body ?? '{}')).toMatchObject({ out_trade_no: p.id.replaceAll('-', ''), amount: 100 * YUAN, status: 'paid' });

    const after = await fetchPayment(token, p.id);
    expect(after).toMatchObject({ status: 'paid', paidAt: clock().toISOString() });
    expect(await balance(token)).toBe(100 * YUAN);
    expect(await transactions(token)).toEqual([expect.objectContaining({ kind: 'recharge', amount: 100 * YUAN, ref: `payment:${p.id}`, memo: 'recharge:sandbox' })]);
    expect(await t.container.ledger.check(user.tenantId)).toEqual([]);
    expect((await notifications(p.id)).map((n) => [n.verified, n.outcome])).toEqual([[true, 'credited']]);

    // Paying again, or the gateway sending its notification again, changes nothing.
    expect((await choose(payUrl, 'pay')).headers.location).toBe(`http://localhost/recharge/success?id=${p.id}`);
    expect(await sandboxJobs(p.id)).toHaveLength(1);
    const [job] = await sandboxJobs(p.id);
    await t.container.sandboxGateway.deliver(job?.payload ?? {});
    expect(await balance(token)).toBe(100 * YUAN);
    expect((await notifications(p.id)).map((n) => n.outcome)).toEqual(['credited', 'duplicate']);
    expect((await cashierPage(payUrl)).body).toContain('该订单已支付成功');
  });

  it('a credit forgets the cached balance once, after its transaction committed', async () => {
    const { token, user } = await createUser(t);
    expect(await balance(token)).toBe(0); // cached now
    const p = await created(token, 30 * YUAN);
    await choose(p.payUrl ?? '', 'pay');
    const calls: number[] = [];
    const original = t.container.wallet.forgetBalance.bind(t.container.wallet);
    const spy = vi.spyOn(t.container.wallet, 'forgetBalance').mockImplementation((userId: number) => {
      calls.push(userId);
      original(userId);
    });
    try {
      await t.container.jobs.runDue();
    } finally {
      spy.mockRestore();
    }
    // One invalidation (not one inside the transaction and another after it).
    expect(calls).toEqual([user.id]);
    expect(await balance(token)).toBe(30 * YUAN);
  });

  it('a failed payment at the cashier ends failed and credits nothing', async () => {
    const { token } = await createUser(t);
    const p = await created(token, 20 * YUAN);
    const payUrl = p.payUrl ?? '';
    const failed = await choose(payUrl, 'fail');
    expect(failed.statusCode).toBe(303);
    expect(failed.headers.location).toBe(`http://localhost/recharge/failure?id=${p.id}`);
    await t.container.jobs.runDue();
    expect((await fetchPayment(token, p.id)).status).toBe('failed');
    expect(await balance(token)).toBe(0);
    expect(await transactions(token)).toEqual([]);
    expect((await notifications(p.id)).map((n) => [n.verified, n.outcome])).toEqual([[true, 'failed']]);
    // The first choice stands: "pay" after "fail" goes to the failure page and sends nothing new.
    expect((await choose(payUrl, 'pay')).headers.location).toBe(`http://localhost/recharge/failure?id=${p.id}`);
    expect(await t.container.jobs.runDue()).toBe(0);
    expect(await balance(token)).toBe(0);
    expect((await cashierPage(payUrl)).body).toContain('该订单已支付失败');
  });

  it('an abandoned payment stays pending, then expires after 15 minutes and can no longer be paid', async () => {
    const { token } = await createUser(t);
    const p = await created(token, 30 * YUAN);
    const payUrl = p.payUrl ?? '';
    const abandoned = await choose(payUrl, 'abandon');
    expect(abandoned.statusCode).toBe(303);
    expect(abandoned.headers.location).toBe('http://localhost/recharge/index');
    expect(await sandboxJobs(p.id)).toEqual([]);
    expect((await fetchPayment(token, p.id)).status).toBe('pending');
    clock.advanceMinutes(14);
    expect((await fetchPayment(token, p.id)).status).toBe('pending');
    clock.advanceMinutes(1);
    expect((await fetchPayment(token, p.id)).status).toBe('expired');
    const [row] = await t.container.db.select().from(payments).where(eq(payments.id, p.id));
    expect(row).toMatchObject({ status: 'expired', closedAt: clock() });
    // The cashier knows too: no paying an expired order, the payer is sent to the timeout page.
    expect((await cashierPage(payUrl)).body).toContain('该订单已超时关闭');
    expect((await choose(payUrl, 'pay')).headers.location).toBe(`http://localhost/recharge/timeout?id=${p.id}`);
    expect(await sandboxJobs(p.id)).toEqual([]);
    expect(await balance(token)).toBe(0);
  });

  it('refuses cashier links that were not issued for that payment', async () => {
    const { token } = await createUser(t);
    const a = await created(token);
    const b = await created(token);
    const sigOfA = new URL(a.payUrl ?? '').searchParams.get('sig') ?? '';
    const forged = `${new URL(b.payUrl ?? '').origin}${new URL(b.payUrl ?? '').pathname}?sig=${sigOfA}`;
    const page = await cashierPage(forged);
    expect(page.statusCode).toBe(404);
    expect(page.body).toContain('支付链接无效');
    expect((await cashierPage(`http://localhost/sandbox/cashier/${b.id.replaceAll('-', '')}`)).statusCode).toBe(404);
    expect((await choose(b.payUrl ?? '', 'pay', sigOfA)).statusCode).toBe(404);
    expect((await choose(b.payUrl ?? '', 'pay', '')).statusCode).toBe(404);
    expect((await cashierPage(`http://localhost/sandbox/cashier/nope?sig=${sigOfA}`)).statusCode).toBe(404);
    // The cashier's form parser is its own: the API still takes JSON only.
    const form = await t.request({ method: 'POST', url: '/api/v1/transactions/list', token, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'page=1' });
    expect(form.statusCode).toBe(415);
    expect(await sandboxJobs(b.id)).toEqual([]);
    expect((await fetchPayment(token, b.id)).status).toBe('pending');
  });

  it('keeps retrying an unacknowledged notification, and reconciliation credits the payment meanwhile', async () => {
    const { token, user } = await createUser(t);
    const p = await created(token, 40 * YUAN);
    await choose(p.payUrl ?? '', 'pay');
    net.failNext(1);
    await t.container.jobs.runDue();
    const [job] = await sandboxJobs(p.id);
    expect(job).toMatchObject({ status: 'queued', attempts: 1 });
    expect(job?.lastError).toContain('not acknowledged: HTTP 502');
    expect((await fetchPayment(token, p.id)).status).toBe('pending');

    // Reconciliation leaves payments younger than a minute to their notification…
    expect((await t.container.payments.reconcile()).credited).toBe(0);
    clock.advanceMinutes(2);
    // …then asks the gateway, which knows the trade was paid.
    const summary = await t.container.payments.reconcile();
    expect(summary.credited).toBe(1);
    expect(await fetchPayment(token, p.id)).toMatchObject({ status: 'paid' });
    expect(await balance(token)).toBe(40 * YUAN);
    expect((await notifications(p.id)).map((n) => n.outcome)).toEqual(['credited']);

    // The retried notification arrives later: acknowledged, not credited again.
    await t.container.sandboxGateway.deliver(job?.payload ?? {});
    expect(await balance(token)).toBe(40 * YUAN);
    expect((await notifications(p.id)).map((n) => n.outcome)).toEqual(['credited', 'duplicate']);
    expect(await t.container.ledger.check(user.tenantId)).toEqual([]);
  });

  it('the reconciliation job expires unpaid payments and is scheduled once at a time', async () => {
    const { token } = await createUser(t);
    const p = await created(token, 10 * YUAN);
    clock.advanceMinutes(16);
    expect(await t.container.payments.scheduleReconcile()).toBe(true);
    expect(await t.container.payments.scheduleReconcile()).toBe(false);
    await t.container.jobs.runDue();
    const [row] = await t.container.db.select().from(payments).where(eq(payments.id, p.id));
    expect(row?.status).toBe('expired');
    expect(await t.container.payments.scheduleReconcile()).toBe(true);
    await t.container.jobs.runDue();
  });

  it('offers only what the tenant enabled', async () => {
    const host = '127.0.0.2';
    const { token, user } = await createUser(t, { host });
    await t.container.db.update(tenants).set({ paymentSettings: { sandbox: { enabled: false } } }).where(eq(tenants.id, user.tenantId));
    t.container.tenants.invalidate();
    try {
      expect((await t.request({ method: 'GET', url: '/api/v1/payments/methods', token, host })).json().data).toEqual([]);
      const res = await t.request({ method: 'POST', url: '/api/v1/payments', token, host, payload: { amount: 10 * YUAN, method: 'sandbox' } });
      expect(res.statusCode).toBe(400);
      expect(res.json().msg).toBe('该支付方式暂不可用');
      const alipay = await t.request({ method: 'POST', url: '/api/v1/payments', token, host, payload: { amount: 10 * YUAN, method: 'alipay' } });
      expect(alipay.json().msg).toBe('该支付方式暂不可用');
    } finally {
      await t.container.db.update(tenants).set({ paymentSettings: { sandbox: { enabled: true } } }).where(eq(tenants.id, user.tenantId));
      t.container.tenants.invalidate();
    }
  });
});

describe('recharge payments behind PUBLIC_URL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { PUBLIC_URL: 'https://console.example.com/' } });
  });
  afterAll(() => t.close());

  it('sends the gateway and the payer to PUBLIC_URL, whatever Host the request had', async () => {
    const { token } = await createUser(t);
    const res = await t.request({ method: 'POST', url: '/api/v1/payments', token, payload: { amount: 10 * YUAN, method: 'sandbox' } });
    const p = res.json<{ data: PaymentData }>().data;
    expect(p.payUrl).toMatch(/^https:\/\/console\.example\.com\/sandbox\/cashier\/[0-9a-f]{32}\?sig=/);
    const u = new URL(p.payUrl ?? '');
    const paid = await t.app.inject({
      method: 'POST',
      url: `${u.pathname}/pay`,
      headers: { host: 'localhost', 'content-type': 'application/x-www-form-urlencoded' },
      payload: `sig=${u.searchParams.get('sig') ?? ''}`,
    });
    expect(paid.headers.location).toBe(`https://console.example.com/recharge/success?id=${p.id}`);
    const [job] = (await t.container.db.select().from(jobs).where(eq(jobs.kind, SANDBOX_NOTIFY_JOB)));
    expect(job?.payload.notify_url).toBe('https://console.example.com/api/v1/payments/notify/sandbox');
  });
});

describe('an installation with the sandbox switched off (SANDBOX_PAYMENTS=off)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { SANDBOX_PAYMENTS: 'off' } });
  });
  afterAll(() => t.close());

  it('neither offers nor accepts the free sandbox, whatever the tenant settings say', async () => {
    const { token } = await createUser(t);
    const methods = await t.request({ method: 'GET', url: '/api/v1/payments/methods', token });
    expect(methods.json().data.map((m: { method: string }) => m.method)).not.toContain('sandbox');
    const create = await t.request({ method: 'POST', url: '/api/v1/payments', token, payload: { amount: 100 * 10_000, method: 'sandbox' } });
    expect(create.statusCode).toBe(400);
    expect(create.json().msg).toBe('该支付方式暂不可用');
  });
});
