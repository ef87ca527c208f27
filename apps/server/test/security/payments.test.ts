import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { and, eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { MAX_OPEN_PAYMENTS } from '@suanli/contract/payment';
import { MONEY_UNITS_PER_YUAN } from '@suanli/domain/money';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines, openTestDatabase } from '../helpers/db.ts';
import { createUser, signInSeededOperator } from '../helpers/factories.ts';
import { createTestClock } from '../helpers/clock.ts';
import { createInjectFetch } from '../fakes/inject-fetch.ts';
import { createFakeSms } from '../fakes/sms.ts';
import { loadConfig } from '../../src/config.ts';
import { createContainer, type Container } from '../../src/container.ts';
import { buildApp } from '../../src/app.ts';
import { seedDemo } from '../../src/db/seed.ts';
import type { Database } from '../../src/db/client.ts';
import { generateRsaKeys } from '../../src/lib/rsa-keys.ts';
import { generateSandboxKeys, SANDBOX_NOTIFY_JOB, type SandboxKeys } from '../../src/adapters/payments/sandbox.ts';
import { paymentNotifications, payments } from '../../src/db/schema/wallet.ts';
import { jobs } from '../../src/db/schema/job.ts';
import { tenants, type TenantPaymentSettings } from '../../src/db/schema/tenant.ts';
import { createTenantRepository } from '../../src/modules/tenant/tenant.repository.ts';
import { NOTIFY_KEPT_BYTES } from '../../src/modules/payment/payment.service.ts';

const YUAN = MONEY_UNITS_PER_YUAN;
type PaymentData = { id: string; amount: number; method: string; status: string; payUrl: string | null };

/** Settings of a real gateway: enough to count as configured (no call reaches Alipay here). */
const ALIPAY: NonNullable<TenantPaymentSettings['alipay']> = { enabled: true, appId: '2021000000000001', privateKeyPem: 'k'.repeat(64), alipayPublicKeyPem: 'p'.repeat(64), mode: 'page' };

/** The cashier as a browser uses it: the page at payUrl (GET) or one of its forms (POST). */
function cashier(app: FastifyInstance, payUrl: string, action?: 'pay' | 'fail', host?: string) {
  const u = new URL(payUrl);
  const headers = { host: host ?? u.host, 'content-type': 'application/x-www-form-urlencoded' };
  if (!action) return app.inject({ method: 'GET', url: u.pathname + u.search, headers });
  return app.inject({ method: 'POST', url: `${u.pathname}/${action}`, headers, payload: new URLSearchParams({ sig: u.searchParams.get('sig') ?? '' }).toString() });
}

describe('payments: security of issue #7', () => {
  let t: TestApp;
  const clock = createTestClock();
  let net: ReturnType<typeof createInjectFetch>;

  beforeAll(async () => {
    t = await buildTestApp({ clock });
    net = createInjectFetch(t.app);
    vi.stubGlobal('fetch', net);
  });
  afterAll(async () => {
    vi.unstubAllGlobals();
    await t.close();
  });

  const setSettings = async (tenantId: number, settings: TenantPaymentSettings) => {
    await t.container.db.update(tenants).set({ paymentSettings: settings }).where(eq(tenants.id, tenantId));
    t.container.tenants.invalidate();
  };
  const create = (token: string, opts: { host?: string; amount?: number; method?: string; headers?: Record<string, string> } = {}) =>
    t.request({ method: 'POST', url: '/api/v1/payments', token, host: opts.host, headers: opts.headers, payload: { amount: opts.amount ?? 100 * YUAN, method: opts.method ?? 'sandbox' } });
  const created = async (token: string, opts: { host?: string; amount?: number; headers?: Record<string, string> } = {}) => {
    const res = await create(token, opts);
    expect(res.statusCode).toBe(200);
    return res.json<{ data: PaymentData }>().data;
  };
  const balance = async (token: string, host?: string) => (await t.request({ method: 'GET', url: '/api/v1/account/balance', token, host })).json<{ data: { balance: number } }>().data.balance;
  const sandboxJob = async (paymentId: string) =>
    (await t.container.db.select().from(jobs).where(eq(jobs.kind, SANDBOX_NOTIFY_JOB))).find((j) => j.payload.out_trade_no === paymentId.replaceAll('-', ''));
  const outcomes = async (paymentId: string) => (await t.container.db.select().from(paymentNotifications).where(eq(paymentNotifications.paymentId, paymentId))).map((n) => n.outcome);

  it('#2 a tenant with a real gateway configured has no sandbox unless the operator turns it on beside it', async () => {
    const host = '127.0.0.1';
    const { token, user } = await createUser(t, { host });
    // What every tenant had by default, plus a real gateway: the sandbox is not offered nor accepted.
    await setSettings(user.tenantId, { sandbox: { enabled: true }, alipay: ALIPAY });
    try {
      const methods = await t.request({ method: 'GET', url: '/api/v1/payments/methods', token, host });
      expect(methods.json<{ data: { method: string }[] }>().data.map((m) => m.method)).toEqual(['alipay']);
      const res = await create(token, { host });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 400, msg: '该支付方式暂不可用' });
      expect(await t.container.db.select().from(payments).where(eq(payments.userId, user.id))).toEqual([]);

      // The operator's explicit yes for this tenant brings it back.
      await setSettings(user.tenantId, { sandbox: { enabled: true, alongsideRealGateways: true }, alipay: ALIPAY });
      expect((await create(token, { host })).statusCode).toBe(200);
    } finally {
      await setSettings(user.tenantId, { sandbox: { enabled: true } });
    }
  });

  it('#2 a new tenant has no sandbox; the seeded demo tenants keep theirs and are named as sandboxed', async () => {
    const tenant = await createTenantRepository(t.container.db).insert(
      { code: 'fresh', title: '新租户', settings: { primaryColor: '#1677ff', contactPhone: '', contactEmail: '', companyName: '', icp: '' } },
      ['fresh.example.com'],
    );
    expect(tenant.paymentSettings).toEqual({});
    const { token } = await createUser(t, { host: 'fresh.example.com' });
    expect((await t.request({ method: 'GET', url: '/api/v1/payments/methods', token, host: 'fresh.example.com' })).json().data).toEqual([]);
    expect((await create(token, { host: 'fresh.example.com' })).statusCode).toBe(400);
    expect((await t.container.payments.sandboxTenants()).map((s) => s.code)).toEqual(['demo', 'starlake', 'partner']);
  });

  it('#2 switching a tenant’s sandbox off refuses its earlier payments: cashier, notification and reconciliation credit nothing', async () => {
    const host = '127.0.0.2';
    const { token, user } = await createUser(t, { host });
    const paidAtCashier = await created(token, { host, amount: 100_000 * YUAN });
    const stillOpen = await created(token, { host, amount: 100_000 * YUAN });
    // The payer chose "pay" while the sandbox was on; its notification is still on its way.
    net.failNext(1);
    expect((await cashier(t.app, paidAtCashier.payUrl ?? '', 'pay')).statusCode).toBe(303);
    await t.container.jobs.runDue();

    await setSettings(user.tenantId, {});
    try {
      // The cashier refuses to show or take the open one.
      expect((await cashier(t.app, stillOpen.payUrl ?? '')).statusCode).toBe(404);
      expect((await cashier(t.app, stillOpen.payUrl ?? '', 'pay')).statusCode).toBe(404);
      expect(await sandboxJob(stillOpen.id)).toBeUndefined();
      // The signed notification arrives: verified, refused, not credited.
      const job = await sandboxJob(paidAtCashier.id);
      await expect(t.container.sandboxGateway.deliver(job?.payload ?? {})).rejects.toThrow(/not acknowledged/);
      expect(await outcomes(paidAtCashier.id)).toEqual(['sandbox_disabled']);
      // Reconciliation doesn't find the money by asking either; both simply expire.
      clock.advanceMinutes(16);
      expect((await t.container.payments.reconcile()).credited).toBe(0);
      expect(await balance(token, host)).toBe(0);
      const rows = await t.container.db.select().from(payments).where(eq(payments.userId, user.id));
      expect(rows.map((r) => r.status)).toEqual(['expired', 'expired']);
    } finally {
      await setSettings(user.tenantId, { sandbox: { enabled: true } });
    }
  });

  it('#6 a forged Host header never becomes a notify URL, a job target or a redirect', async () => {
    const callsBefore = net.calls.length;
    const { token } = await createUser(t);
    // An unknown host gets the default tenant (localhost); its port must not come along either.
    const p = await created(token, { headers: { host: 'attacker.example:6379' } });
    expect(p.payUrl).toMatch(/^http:\/\/localhost\/sandbox\/cashier\//);
    const paid = await cashier(t.app, p.payUrl ?? '', 'pay', 'internal.example:25');
    expect(paid.headers.location).toBe(`http://localhost/recharge/success?id=${p.id}`);
    expect((await sandboxJob(p.id))?.payload.notify_url).toBe('http://localhost/api/v1/payments/notify/sandbox');

    // A configured tenant host is kept, but a port typed into Host is not.
    const other = await createUser(t, { host: '127.0.0.1' });
    const q = await created(other.token, { headers: { host: '127.0.0.1:9200' } });
    expect(q.payUrl).toMatch(/^http:\/\/127\.0\.0\.1\/sandbox\/cashier\//);
    await cashier(t.app, q.payUrl ?? '', 'pay', '127.0.0.1:9200');
    expect((await sandboxJob(q.id))?.payload.notify_url).toBe('http://127.0.0.1/api/v1/payments/notify/sandbox');
    // The notifications go where the tenants are served, and nowhere else.
    await t.container.jobs.runDue();
    const sent = net.calls.slice(callsBefore).map((c) => c.url);
    expect(sent).toContain('http://localhost/api/v1/payments/notify/sandbox');
    expect(sent).toContain('http://127.0.0.1/api/v1/payments/notify/sandbox');
    // (an earlier test's retried notification may go out too: to its own tenant's host)
    for (const url of sent) expect(new URL(url).host).toMatch(/^(localhost|127\.0\.0\.[12])$/);
  });

  it('#8 an unverified notification is stored bounded (hash and first KiB); bodies past 64 KiB are refused unread', async () => {
    const body = JSON.stringify({ out_trade_no: 'x', junk: 'A'.repeat(60 * 1024) });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/payments/notify/sandbox', headers: { host: 'localhost', 'content-type': 'application/json', 'x-sandbox-signature': 'bad' }, payload: body });
    expect(res.statusCode).toBe(400);
    const [row] = await t.container.db
      .select()
      .from(paymentNotifications)
      .where(and(eq(paymentNotifications.verified, false), eq(paymentNotifications.bodySha256, crypto.createHash('sha256').update(body).digest('hex'))));
    expect(row).toBeDefined();
    expect(Buffer.byteLength(row?.body ?? '')).toBeLessThanOrEqual(NOTIFY_KEPT_BYTES);
    expect(body.startsWith(row?.body ?? '-')).toBe(true);
    expect(row?.bodyBytes).toBe(Buffer.byteLength(body));

    const before = (await t.container.db.select().from(paymentNotifications)).length;
    const huge = await t.app.inject({ method: 'POST', url: '/api/v1/payments/notify/alipay', headers: { host: 'localhost', 'content-type': 'application/x-www-form-urlencoded' }, payload: `a=${'b'.repeat(64 * 1024)}` });
    expect(huge.statusCode).toBe(413);
    expect((await t.container.db.select().from(paymentNotifications)).length).toBe(before);
  });

  it('#13 a user has at most 10 open payments at once: the 11th gets a clear 429, an expired one frees a place', async () => {
    const { token } = await createUser(t);
    for (let i = 0; i < MAX_OPEN_PAYMENTS; i++) await created(token, { amount: YUAN });
    const res = await create(token, { amount: YUAN });
    expect(res.statusCode).toBe(429);
    expect(res.json()).toMatchObject({ code: 429, msg: `您有 ${MAX_OPEN_PAYMENTS} 笔待支付的充值单，请先完成支付或等待其超时（15 分钟）后再试`, data: null });
    // Another user is not affected.
    expect((await create((await createUser(t)).token, { amount: YUAN })).statusCode).toBe(200);
    clock.advanceMinutes(16);
    expect((await create(token, { amount: YUAN })).statusCode).toBe(200);
  });

  it('#13 operators see the payments credited after their expiry; users and other tenants do not', async () => {
    const { token, user } = await createUser(t);
    const p = await created(token, { amount: 7 * YUAN });
    clock.advanceMinutes(16);
    await t.container.payments.reconcile();
    const { body, signature } = t.container.sandboxGateway.sign({ out_trade_no: p.id.replaceAll('-', ''), trade_no: 'SBX-LATE-1', amount: p.amount, status: 'paid', timestamp: clock().toISOString(), nonce: 'late' });
    const ack = await t.app.inject({ method: 'POST', url: '/api/v1/payments/notify/sandbox', headers: { host: 'localhost', 'content-type': 'application/json', 'x-sandbox-signature': signature }, payload: body });
    expect(ack.body).toBe('success');

    const operator = await signInSeededOperator(t);
    const list = await t.request({ method: 'GET', url: '/api/v1/operate/payments?flag=late', token: operator.token });
    expect(list.statusCode).toBe(200);
    const data = list.json<{ data: { list: Record<string, unknown>[]; total: number } }>().data;
    expect(data.list).toContainEqual(expect.objectContaining({ id: p.id, amount: 7 * YUAN, method: 'sandbox', status: 'paid', flag: 'late', userId: user.id, userPhone: user.phone, gatewayTradeNo: 'SBX-LATE-1' }));
    expect(data.total).toBeGreaterThanOrEqual(1);

    expect((await t.request({ method: 'GET', url: '/api/v1/operate/payments?flag=late', token })).statusCode).toBe(403);
    const otherOperator = await signInSeededOperator(t, '127.0.0.1');
    const other = await t.request({ method: 'GET', url: '/api/v1/operate/payments?flag=late', token: otherOperator.token, host: '127.0.0.1' });
    expect(other.json<{ data: { list: { id: string }[] } }>().data.list.map((x) => x.id)).not.toContain(p.id);
    for (const query of ['flag=lost', 'page=1e20', 'pageSize=1000', 'page=x']) {
      const bad = await t.request({ method: 'GET', url: `/api/v1/operate/payments?${query}`, token: operator.token });
      expect(bad.statusCode).toBe(400);
      expect(bad.json<{ msg: string }>().msg).toMatch(/[\u4e00-\u9fff]/);
    }
  });
});

describe.each(engines)('#13 the open-payment cap under concurrency on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ engine });
  });
  afterAll(() => t.close());

  it('#13 parallel creations by one user can’t exceed the cap', async () => {
    const { token, user } = await createUser(t);
    const answers = await Promise.all(
      Array.from({ length: 3 * MAX_OPEN_PAYMENTS }, () => t.request({ method: 'POST', url: '/api/v1/payments', token, payload: { amount: YUAN, method: 'sandbox' } })),
    );
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(MAX_OPEN_PAYMENTS);
    expect(answers.filter((r) => r.statusCode === 429)).toHaveLength(2 * MAX_OPEN_PAYMENTS);
    const open = await t.container.db.select().from(payments).where(and(eq(payments.userId, user.id), eq(payments.status, 'pending')));
    expect(open).toHaveLength(MAX_OPEN_PAYMENTS);
  });
});

describe('#2 SANDBOX_PAYMENTS=off after a restart', () => {
  let database: Database;
  let keys: SandboxKeys;
  const clock = createTestClock();
  const started: { app: FastifyInstance; container: Container }[] = [];

  /** One server process over the shared database; a second call is the same installation restarted. */
  async function start(env: Record<string, string>) {
    const config = loadConfig({ CAPTCHA: 'off', RATE_LIMIT: 'off', DATA_DIR: '/nonexistent-test-data', LOG_LEVEL: 'silent', PORT: '80', ...env });
    const container = await createContainer(config, { database, sms: createFakeSms(), clock, rsaKeys: await generateRsaKeys(), sandboxKeys: keys });
    const app = await buildApp(container);
    started.push({ app, container });
    return { app, container };
  }

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    keys = await generateSandboxKeys();
    await seedDemo(database.db, () => {});
  });
  afterAll(async () => {
    for (const s of started) await s.app.close();
    await database.close();
  });

  it('#2 refuses sandbox payments made before the switch: cashier, notification and reconciliation', async () => {
    const before = await start({});
    const t = { container: before.container, app: before.app } as unknown as TestApp;
    const { token, user } = await createUser(t);
    const create = () => before.app.inject({ method: 'POST', url: '/api/v1/payments', headers: { host: 'localhost', authorization: `Bearer ${token}` }, payload: { amount: 100_000 * YUAN, method: 'sandbox' } });
    const paid = (await create()).json<{ data: PaymentData }>().data;
    const open = (await create()).json<{ data: PaymentData }>().data;
    // Paid at the cashier before the restart; the notification hasn't been delivered yet.
    expect((await cashier(before.app, paid.payUrl ?? '', 'pay')).statusCode).toBe(303);
    const job = (await database.db.select().from(jobs).where(eq(jobs.kind, SANDBOX_NOTIFY_JOB)))[0];

    const after = await start({ SANDBOX_PAYMENTS: 'off' });
    expect(await after.container.payments.sandboxTenants()).toEqual([]);
    expect((await cashier(after.app, open.payUrl ?? '')).statusCode).toBe(404);
    expect((await cashier(after.app, open.payUrl ?? '', 'pay')).statusCode).toBe(404);
    const n = JSON.parse(JSON.stringify(job?.payload)) as { out_trade_no: string; trade_no: string; amount: number };
    const { body, signature } = after.container.sandboxGateway.sign({ out_trade_no: n.out_trade_no, trade_no: n.trade_no, amount: n.amount, status: 'paid', timestamp: clock().toISOString(), nonce: 'restart' });
    const ack = await after.app.inject({ method: 'POST', url: '/api/v1/payments/notify/sandbox', headers: { host: 'localhost', 'content-type': 'application/json', 'x-sandbox-signature': signature }, payload: body });
    expect(ack.body).toBe('fail');
    clock.advanceMinutes(16);
    expect((await after.container.payments.reconcile()).credited).toBe(0);
    const rows = await database.db.select().from(payments).where(eq(payments.userId, user.id));
    expect(rows.map((r) => r.status).sort()).toEqual(['expired', 'expired']);
    const bal = await after.app.inject({ method: 'GET', url: '/api/v1/account/balance', headers: { host: 'localhost', authorization: `Bearer ${token}` } });
    expect(bal.json<{ data: { balance: number } }>().data.balance).toBe(0);
  });
});

describe('#2 the server warns at start while a sandbox is on', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-pay-sec-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('#2 logs a warning naming the sandboxed tenants', async () => {
    const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: serverDir,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', WEB_DIST: '/nonexistent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const warned = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no sandbox warning:\n${out}`)), 60_000);
      const onData = (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.split('\n').find((l) => l.includes('SANDBOX PAYMENTS ARE ON'));
        if (line) {
          clearTimeout(timer);
          resolve(line);
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${out}`)));
    }).finally(() => child.kill('SIGTERM'));
    const entry = JSON.parse(warned) as { level: number; tenants: string[]; msg: string };
    expect(entry.level).toBe(40); // pino's warn
    expect(entry.tenants).toEqual(['demo', 'starlake', 'partner']);
    expect(entry.msg).toContain('SANDBOX_PAYMENTS=off');
  }, 90_000);
});
