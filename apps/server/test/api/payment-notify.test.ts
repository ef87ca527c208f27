import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { createTestClock } from '../helpers/clock.ts';
import { paymentNotifications, payments } from '../../src/db/schema/wallet.ts';
import { tenants, type TenantPaymentSettings } from '../../src/db/schema/tenant.ts';
import type { SandboxNotification } from '../../src/adapters/payments/sandbox.ts';
import { alipayNotifyContent, rsa2Sign } from '../fakes/alipay-signer.ts';
import { wechatResponseMessage } from '../../src/adapters/payments/wechat.ts';

const YUAN = 10_000;
type PaymentData = { id: string; amount: number; status: string; payUrl: string | null };

const rsa = () => crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = (k: crypto.KeyObject, type: 'pkcs8' | 'spki') => k.export({ type, format: 'pem' }).toString();
const compact = (id: string) => id.replaceAll('-', '');

describe.each(engines)('payment notifications on %s', (engine) => {
  let t: TestApp;
  const clock = createTestClock();
  beforeAll(async () => {
    t = await buildTestApp({ engine, clock });
  });
  afterAll(() => t.close());

  const newPayment = async (amount = 100 * YUAN) => {
    const owner = await createUser(t);
    const res = await t.request({ method: 'POST', url: '/api/v1/payments', token: owner.token, payload: { amount, method: 'sandbox' } });
    expect(res.statusCode).toBe(200);
    return { ...owner, payment: res.json<{ data: PaymentData }>().data };
  };
  /** A notification as the sandbox gateway signs it, for `p` unless fields say otherwise. */
  const signed = (p: PaymentData, fields: Partial<SandboxNotification> = {}) =>
    t.container.sandboxGateway.sign({
      out_trade_no: compact(p.id),
      trade_no: 'SBX20261101000000001',
      amount: p.amount,
      status: 'paid',
      timestamp: clock().toISOString(),
      nonce: crypto.randomBytes(8).toString('hex'),
      ...fields,
    });
  const notify = (body: string, signature?: string, opts: { method?: string; contentType?: string } = {}) =>
    t.app.inject({
      method: 'POST',
      url: `/api/v1/payments/notify/${opts.method ?? 'sandbox'}`,
      headers: { host: 'localhost', 'content-type': opts.contentType ?? 'application/json', ...(signature !== undefined ? { 'x-sandbox-signature': signature } : {}) },
      payload: body,
    });
  const balance = async (token: string) => (await t.request({ method: 'GET', url: '/api/v1/account/balance', token })).json<{ data: { balance: number } }>().data.balance;
  const row = async (id: string) => (await t.container.db.select().from(payments).where(eq(payments.id, id)))[0];
  const logOf = (body: string) => t.container.db.select().from(paymentNotifications).where(eq(paymentNotifications.body, body));

  it('credits a verified notification once and answers "success" after the commit', async () => {
    const { token, user, payment } = await newPayment(100 * YUAN);
    const { body, signature } = signed(payment);
    const res = await notify(body, signature);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.body).toBe('success');
    expect(await row(payment.id)).toMatchObject({ status: 'paid', gatewayTradeNo: 'SBX20261101000000001', flagged: false, paidAt: clock() });
    expect(await balance(token)).toBe(100 * YUAN);
    expect(await logOf(body)).toEqual([expect.objectContaining({ method: 'sandbox', paymentId: payment.id, verified: true, outcome: 'credited' })]);
    expect((await logOf(body))[0]?.headers['x-sandbox-signature']).toBe(signature);
    expect(await t.container.ledger.check(user.tenantId)).toEqual([]);
  });

  it('takes the raw body whatever its content type (the encrypted text/plain parser stays out)', async () => {
    const { token, payment } = await newPayment(3 * YUAN);
    const { body, signature } = signed(payment);
    const res = await notify(body, signature, { contentType: 'text/plain;charset=utf-8' });
    expect(res.body).toBe('success');
    expect(await balance(token)).toBe(3 * YUAN);
  });

  it('a replayed notification is acknowledged and credits nothing more', async () => {
    const { token, payment } = await newPayment(50 * YUAN);
    const { body, signature } = signed(payment);
    expect((await notify(body, signature)).body).toBe('success');
    expect((await notify(body, signature)).body).toBe('success');
    expect(await balance(token)).toBe(50 * YUAN);
    expect((await logOf(body)).map((n) => n.outcome)).toEqual(['credited', 'duplicate']);
  });

  it('refuses forged notifications: another key, no signature, an altered body, an old one', async () => {
    const { token, payment } = await newPayment(80 * YUAN);
    const forger = rsa();
    const genuine = signed(payment);
    const forgedSig = crypto.sign('sha256', Buffer.from(genuine.body), forger.privateKey).toString('base64');
    const altered = genuine.body.replace(`"amount":${80 * YUAN}`, `"amount":${8000 * YUAN}`);
    const old = signed(payment, { timestamp: new Date(clock().getTime() - 10 * 60_000).toISOString() });
    const cases: [string, string | undefined, string][] = [
      [genuine.body, forgedSig, 'rejected: bad signature'],
      [genuine.body, undefined, 'rejected: missing signature header'],
      [genuine.body, 'bm90IGEgc2lnbmF0dXJl', 'rejected: bad signature'],
      [altered, genuine.signature, 'rejected: bad signature'],
      [old.body, old.signature, `rejected: stale timestamp ${JSON.parse(old.body).timestamp as string}`],
    ];
    for (const [body, signature, outcome] of cases) {
      const res = await notify(body, signature);
      expect(res.statusCode).toBe(400);
      expect(res.body).toBe('fail');
      const logged = await logOf(body);
      expect(logged.at(-1)).toMatchObject({ verified: false, outcome, paymentId: null });
    }
    expect((await row(payment.id))?.status).toBe('pending');
    expect(await balance(token)).toBe(0);
  });

  it('refuses a wrong amount without crediting; the right one still goes through', async () => {
    const { token, payment } = await newPayment(100 * YUAN);
    const wrong = signed(payment, { amount: 1 * YUAN });
    const res = await notify(wrong.body, wrong.signature);
    expect(res.statusCode).toBe(400);
    expect(res.body).toBe('fail');
    expect(await logOf(wrong.body)).toEqual([expect.objectContaining({ verified: true, outcome: 'amount_mismatch', paymentId: payment.id })]);
    expect((await row(payment.id))?.status).toBe('pending');
    expect(await balance(token)).toBe(0);
    const right = signed(payment);
    expect((await notify(right.body, right.signature)).body).toBe('success');
    expect(await balance(token)).toBe(100 * YUAN);
  });

  it('refuses a notification for an unknown order', async () => {
    const unknown = signed({ id: crypto.randomUUID(), amount: 10 * YUAN, status: 'pending', payUrl: null });
    const res = await notify(unknown.body, unknown.signature);
    expect(res.statusCode).toBe(400);
    expect(await logOf(unknown.body)).toEqual([expect.objectContaining({ verified: true, outcome: 'unknown_order', paymentId: null })]);
    const notAnId = signed({ id: 'R20261101000001', amount: 10 * YUAN, status: 'pending', payUrl: null });
    expect((await notify(notAnId.body, notAnId.signature)).body).toBe('fail');
    expect((await logOf(notAnId.body))[0]?.outcome).toBe('unknown_order');
  });

  it('credits a payment that expired before its money arrived, and flags it for the operator', async () => {
    const { token, payment } = await newPayment(60 * YUAN);
    clock.advanceMinutes(16);
    expect((await t.request({ method: 'GET', url: `/api/v1/payments/${payment.id}`, token })).json().data.status).toBe('expired');
    const late = signed(payment);
    expect((await notify(late.body, late.signature)).body).toBe('success');
    expect(await row(payment.id)).toMatchObject({ status: 'paid', flagged: true });
    expect(await balance(token)).toBe(60 * YUAN);
    expect((await logOf(late.body))[0]?.outcome).toBe('credited_late');
    expect((await t.request({ method: 'GET', url: `/api/v1/payments/${payment.id}`, token })).json().data.status).toBe('paid');
  });

  it('marks a payment failed on a failure notification, and ignores a late one for a paid payment', async () => {
    const { token, payment } = await newPayment(10 * YUAN);
    const failed = signed(payment, { status: 'failed' });
    expect((await notify(failed.body, failed.signature)).body).toBe('success');
    expect((await row(payment.id))?.status).toBe('failed');
    expect((await logOf(failed.body))[0]?.outcome).toBe('failed');
    const other = await newPayment(10 * YUAN);
    const paid = signed(other.payment);
    await notify(paid.body, paid.signature);
    const lateFailure = signed(other.payment, { status: 'failed' });
    expect((await notify(lateFailure.body, lateFailure.signature)).body).toBe('success');
    expect((await row(other.payment.id))?.status).toBe('paid');
    expect(await balance(token)).toBe(0);
    expect(await balance(other.token)).toBe(10 * YUAN);
  });

  it('answers 404 for an unknown method and refuses gateways the installation has not set up', async () => {
    const { payment } = await newPayment();
    const { body, signature } = signed(payment);
    const unknown = await notify(body, signature, { method: 'paypal' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 404, msg: '资源不存在' });
    const alipay = await notify(`out_trade_no=${compact(payment.id)}&trade_status=TRADE_SUCCESS&total_amount=100.00`, undefined, {
      method: 'alipay',
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(alipay.statusCode).toBe(400);
    expect((await row(payment.id))?.status).toBe('pending');
    const logged = await t.container.db.select().from(paymentNotifications).where(eq(paymentNotifications.method, 'alipay'));
    expect(logged.at(-1)).toMatchObject({ verified: false, outcome: expect.stringMatching(/^rejected: no gateway/) });
  });

  it('50 concurrent duplicate notifications credit exactly once, and ledger == balance', async () => {
    const { token, user, payment } = await newPayment(100 * YUAN);
    const { body, signature } = signed(payment);
    const answers = await Promise.all(Array.from({ length: 50 }, () => notify(body, signature)));
    expect(answers.map((a) => `${a.statusCode} ${a.body}`)).toEqual(Array.from({ length: 50 }, () => '200 success'));
    expect(await balance(token)).toBe(100 * YUAN);
    const outcomes = (await logOf(body)).map((n) => n.outcome);
    expect(outcomes.filter((o) => o === 'credited')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'duplicate')).toHaveLength(49);
    expect(await t.container.ledger.check(user.tenantId)).toEqual([]);
  }, 60_000);
});

// Two tenants' own merchant setups, shared by both engines (RSA key generation is slow): Alipay's
// key pair (Alipay signs), the application's, WeChat Pay's platform key pair (it signs) and the merchant's.
const partner = { host: '127.0.0.2', alipay: rsa(), app: rsa(), platform: rsa(), merchant: rsa(), serial: 'PUB_KEY_ID_PARTNER', appId: '2021000000000002' };
const starlake = { host: '127.0.0.1', alipay: rsa(), app: rsa(), platform: rsa(), merchant: rsa(), serial: 'PUB_KEY_ID_STARLAKE', appId: '2021000000000001' };

describe.each(engines)('Alipay and WeChat Pay notifications reach the right tenant on %s', (engine) => {
  let t: TestApp;
  const clock = createTestClock();
  const API_V3_KEY = 'a7cde1ef9a0b1c2d3e4f5a6b7c8d9e0f';
  const MCH_ID = '1230000109';
  const WX_APP_ID = 'wxd678efh567hg6787';
  const settingsOf = (s: typeof partner): TenantPaymentSettings => ({
    sandbox: { enabled: true },
    alipay: { enabled: true, appId: s.appId, privateKeyPem: pem(s.app.privateKey, 'pkcs8'), alipayPublicKeyPem: pem(s.alipay.publicKey, 'spki'), mode: 'page' },
    wechat: {
      enabled: true,
      mchId: MCH_ID,
      appId: WX_APP_ID,
      merchantSerialNo: 'MERCHANT',
      merchantPrivateKeyPem: pem(s.merchant.privateKey, 'pkcs8'),
      apiV3Key: API_V3_KEY,
      platformPublicKeyPem: pem(s.platform.publicKey, 'spki'),
      platformSerialNo: s.serial,
    },
  });

  beforeAll(async () => {
    t = await buildTestApp({ engine, clock });
    for (const s of [partner, starlake]) {
      const tenant = await t.container.tenants.resolve(s.host);
      await t.container.db.update(tenants).set({ paymentSettings: settingsOf(s) }).where(eq(tenants.id, tenant.id));
    }
    t.container.tenants.invalidate();
  });
  afterAll(() => t.close());

  const balance = async (token: string, host: string) => (await t.request({ method: 'GET', url: '/api/v1/account/balance', token, host })).json<{ data: { balance: number } }>().data.balance;

  /** An Alipay asynchronous notification (form-urlencoded), signed RSA2 with `key`. */
  const alipayNotify = (s: typeof partner, outTradeNo: string, amountYuan: string, key = s.alipay.privateKey) => {
    const params: Record<string, string> = {
      notify_time: '2026-11-01 08:01:00',
      notify_type: 'trade_status_sync',
      notify_id: crypto.randomUUID(),
      charset: 'utf-8',
      version: '1.0',
      app_id: s.appId,
      out_trade_no: outTradeNo,
      trade_no: '2026110122001400000000000001',
      trade_status: 'TRADE_SUCCESS',
      total_amount: amountYuan,
      sign_type: 'RSA2',
    };
    params.sign = rsa2Sign(alipayNotifyContent(params), key);
    return new URLSearchParams(params).toString();
  };

  it('lists the methods each tenant configured, real gateways first, the sandbox beside them only when asked for', async () => {
    const { token, user } = await createUser(t, { host: partner.host });
    const methods = async () => (await t.request({ method: 'GET', url: '/api/v1/payments/methods', token, host: partner.host })).json<{ data: unknown }>().data;
    // `sandbox: { enabled: true }` next to a real gateway is not enough: free money needs an explicit yes.
    expect(await methods()).toEqual([
      { method: 'alipay', name: '支付宝' },
      { method: 'wechat', name: '微信支付' },
    ]);
    const both = { ...settingsOf(partner), sandbox: { enabled: true, alongsideRealGateways: true } };
    await t.container.db.update(tenants).set({ paymentSettings: both }).where(eq(tenants.id, user.tenantId));
    t.container.tenants.invalidate();
    expect(await methods()).toEqual([
      { method: 'alipay', name: '支付宝' },
      { method: 'wechat', name: '微信支付' },
      { method: 'sandbox', name: '沙箱支付' },
    ]);
    await t.container.db.update(tenants).set({ paymentSettings: settingsOf(partner) }).where(eq(tenants.id, user.tenantId));
    t.container.tenants.invalidate();
  });

  it('verifies an Alipay notification with the paying tenant’s Alipay key, and credits once', async () => {
    const { token } = await createUser(t, { host: partner.host });
    const res = await t.request({ method: 'POST', url: '/api/v1/payments', token, host: partner.host, payload: { amount: 100 * YUAN, method: 'alipay' } });
    expect(res.statusCode).toBe(200);
    const p = res.json<{ data: PaymentData }>().data;
    expect(p.payUrl).toMatch(/^https:\/\/openapi\.alipay\.com\/gateway\.do\?/);
    const payUrl = new URL(p.payUrl ?? '');
    expect(payUrl.searchParams.get('notify_url')).toBe('http://127.0.0.2/api/v1/payments/notify/alipay');
    expect(payUrl.searchParams.get('return_url')).toBe(`http://127.0.0.2/recharge/success?id=${p.id}`);
    expect(JSON.parse(payUrl.searchParams.get('biz_content') ?? '{}')).toMatchObject({ out_trade_no: compact(p.id), total_amount: '100.00' });

    const post = (body: string) => t.app.inject({ method: 'POST', url: '/api/v1/payments/notify/alipay', headers: { host: partner.host, 'content-type': 'application/x-www-form-urlencoded;charset=utf-8' }, payload: body });
    // Signed by another tenant's Alipay key (a merchant of this installation, but not this payment's): refused.
    const foreign = alipayNotify(partner, compact(p.id), '100.00', starlake.alipay.privateKey);
    expect((await post(foreign)).body).toBe('failure');
    const good = alipayNotify(partner, compact(p.id), '100.00');
    expect((await post(good)).body).toBe('success');
    expect((await post(good)).body).toBe('success');
    expect(await balance(token, partner.host)).toBe(100 * YUAN);
    const logged = await t.container.db.select().from(paymentNotifications).where(eq(paymentNotifications.method, 'alipay'));
    expect(logged.map((n) => [n.verified, n.outcome])).toEqual([
      [false, 'rejected: bad signature'],
      [true, 'credited'],
      [true, 'duplicate'],
    ]);
  });

  it('finds the tenant of a WeChat Pay notification by its platform key, decrypts it and credits once', async () => {
    const { token, user } = await createUser(t, { host: starlake.host });
    // WeChat's create call goes out over HTTP; the order is inserted as it would be after it.
    const [p] = await t.container.db
      .insert(payments)
      .values({ tenantId: user.tenantId, userId: user.id, method: 'wechat', amount: 100 * YUAN, createdAt: clock(), expiresAt: new Date(clock().getTime() + 15 * 60_000), qrCode: 'weixin://wxpay/bizpayurl?pr=test' })
      .returning();
    const id = p?.id ?? '';
    const tx = { mchid: MCH_ID, appid: WX_APP_ID, out_trade_no: compact(id), transaction_id: '4200002026110112345678901234', trade_state: 'SUCCESS', amount: { total: 10000, payer_total: 10000, currency: 'CNY' } };
    const nonce = 'fdasflkja484';
    const cipher = crypto.createCipheriv('aes-256-gcm', Buffer.from(API_V3_KEY, 'utf8'), Buffer.from(nonce, 'utf8'));
    cipher.setAAD(Buffer.from('transaction', 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(tx), 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('base64');
    const body = JSON.stringify({
      id: 'EV-2026110100000001',
      create_time: '2026-11-01T08:01:00+08:00',
      resource_type: 'encrypt-resource',
      event_type: 'TRANSACTION.SUCCESS',
      summary: '支付成功',
      resource: { original_type: 'transaction', algorithm: 'AEAD_AES_256_GCM', ciphertext, associated_data: 'transaction', nonce },
    });
    const headersFor = (s: typeof partner) => {
      const timestamp = String(Math.floor(clock().getTime() / 1000));
      const signature = crypto.sign('sha256', Buffer.from(wechatResponseMessage(timestamp, 'n0nce', body)), s.platform.privateKey).toString('base64');
      return { host: 'localhost', 'content-type': 'application/json', 'wechatpay-timestamp': timestamp, 'wechatpay-nonce': 'n0nce', 'wechatpay-signature': signature, 'wechatpay-serial': s.serial };
    };
    const post = (headers: Record<string, string>) => t.app.inject({ method: 'POST', url: '/api/v1/payments/notify/wechat', headers, payload: body });

    // Signed by the partner tenant's platform key, for a starlake payment: it is not the partner's order.
    const wrongTenant = await post(headersFor(partner));
    expect(wrongTenant.statusCode).toBe(400);
    const good = await post(headersFor(starlake));
    expect(good.statusCode).toBe(204);
    expect((await post(headersFor(starlake))).statusCode).toBe(204);
    expect(await balance(token, starlake.host)).toBe(100 * YUAN);
    const logged = await t.container.db.select().from(paymentNotifications).where(eq(paymentNotifications.method, 'wechat'));
    expect(logged.map((n) => [n.verified, n.outcome])).toEqual([
      [true, 'unknown_order'],
      [true, 'credited'],
      [true, 'duplicate'],
    ]);
  });

  it('answers 503 when the gateway can’t be reached, and leaves no pending payment behind', async () => {
    const { token, user } = await createUser(t, { host: starlake.host });
    const qr = settingsOf(starlake);
    if (qr.alipay) qr.alipay.mode = 'qr';
    await t.container.db.update(tenants).set({ paymentSettings: qr }).where(eq(tenants.id, user.tenantId));
    t.container.tenants.invalidate();
    // QR mode pre-creates the order over HTTP; the adapter is built on first use with the global fetch.
    vi.stubGlobal('fetch', async () => {
      throw new TypeError('fetch failed');
    });
    try {
      const res = await t.request({ method: 'POST', url: '/api/v1/payments', token, host: starlake.host, payload: { amount: 10 * YUAN, method: 'alipay' } });
      expect(res.statusCode).toBe(503);
      expect(res.json().msg).toBe('支付渠道暂时不可用，请稍后重试或更换支付方式');
      const rows = await t.container.db.select().from(payments).where(eq(payments.userId, user.id));
      expect(rows.map((r) => r.status)).toEqual(['failed']);
    } finally {
      vi.unstubAllGlobals();
      await t.container.db.update(tenants).set({ paymentSettings: settingsOf(starlake) }).where(eq(tenants.id, user.tenantId));
      t.container.tenants.invalidate();
    }
  });
});
