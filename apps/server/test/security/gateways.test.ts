import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TenantPaymentSettings } from '@suanli/contract/payment-settings';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContainer, type Container } from '../../src/container.ts';
import { tenants } from '../../src/db/schema/tenant.ts';
import { users } from '../../src/db/schema/user.ts';
import { paymentNotifications, payments } from '../../src/db/schema/wallet.ts';
import { seedDemo } from '../../src/db/seed.ts';
import { generateRsaKeys } from '../../src/lib/rsa-keys.ts';
import { issueCert, makeRootCa, rsaKeyPair } from '../fakes/certs.ts';
import { createFakeSms } from '../fakes/sms.ts';
import { createTestClock } from '../helpers/clock.ts';
import { engines, openTestDatabase } from '../helpers/db.ts';

// Item 20: WeChat Pay's side (platform keys, certificates, notifications) made here with
// node:crypto and openssl; the server reaches "WeChat Pay" only through the fetch given to it.
const API_V3_KEY = 'a7cde1ef9a0b1c2d3e4f5a6b7c8d9e0f';
const MCH_ID = '1230000109';
const WX_APP_ID = 'wxd678efh567hg6787';
const merchant = rsaKeyPair();
const platformA = rsaKeyPair();
const platformB = rsaKeyPair();
const ca = makeRootCa('/C=CN/O=Tenpay.com/CN=Tenpay.com Root CA');
const SERIAL_A = '5157F09EFDC096DE15EBE81A47057A7232F1B8E1';
const SERIAL_B = '7A1F2B3C4D5E6F708192A3B4C5D6E7F801234567';
const certA = issueCert(ca, '/CN=Tenpay.com platform A', platformA, SERIAL_A);
const certB = issueCert(ca, '/CN=Tenpay.com platform B', platformB, SERIAL_B);
const compact = (id: string) => id.replaceAll('-', '');

function gcm(plaintext: string, nonce: string, aad: string) {
  const cipher = crypto.createCipheriv('aes-256-gcm', Buffer.from(API_V3_KEY), Buffer.from(nonce));
  cipher.setAAD(Buffer.from(aad));
  return Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('base64');
}

describe.each(engines)('#20 payment gateways on %s', (engine) => {
  const clock = createTestClock();
  let app: FastifyInstance;
  let container: Container;
  let certificateFetches = 0;

  const signedHeaders = (body: string, key: crypto.KeyObject, serial: string) => {
    const timestamp = String(Math.floor(clock().getTime() / 1000));
    const nonce = crypto.randomBytes(8).toString('hex');
    const signature = crypto.sign('sha256', Buffer.from(`${timestamp}\n${nonce}\n${body}\n`), key).toString('base64');
    return { host: 'localhost', 'content-type': 'application/json', 'wechatpay-timestamp': timestamp, 'wechatpay-nonce': nonce, 'wechatpay-signature': signature, 'wechatpay-serial': serial };
  };

  /** WeChat Pay's API: /v3/certificates answers both platform certificates, signed with A. */
  const wechatApi: typeof fetch = async (input) => {
    const url = new URL(input instanceof Request ? input.url : input.toString());
    if (url.pathname !== '/v3/certificates') return new Response('{"code":"NOT_FOUND"}', { status: 404 });
    certificateFetches++;
    const data = [
      { serial: SERIAL_A, pem: certA },
      { serial: SERIAL_B, pem: certB },
    ].map(({ serial, pem }) => ({ serial_no: serial, effective_time: '2026-01-01T00:00:00+08:00', expire_time: '2031-01-01T00:00:00+08:00', encrypt_certificate: { algorithm: 'AEAD_AES_256_GCM', nonce: 'c3rtn0nce123', associated_data: 'certificate', ciphertext: gcm(pem, 'c3rtn0nce123', 'certificate') } }));
    const body = JSON.stringify({ data });
    return new Response(body, { status: 200, headers: signedHeaders(body, platformA.privateKey, SERIAL_A) });
  };

  beforeAll(async () => {
    const config = loadConfig({ CAPTCHA: 'off', RATE_LIMIT: 'off', DATA_DIR: '/nonexistent-test-data', LOG_LEVEL: 'silent' });
    container = await createContainer(config, { database: await openTestDatabase(engine), sms: createFakeSms(), clock, rsaKeys: await generateRsaKeys(), fetch: wechatApi });
    await seedDemo(container.db, () => {});
    app = await buildApp(container);
    // Certificate mode, started with platform certificate A only: WeChat Pay's rotation to B is
    // what the test plays.
    const settings: TenantPaymentSettings = {
      wechat: { enabled: true, mchId: MCH_ID, appId: WX_APP_ID, merchantSerialNo: 'MERCHANT', merchantPrivateKeyPem: merchant.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), apiV3Key: API_V3_KEY, platformPublicKeyPem: certA, platformSerialNo: SERIAL_A },
    };
    const tenant = await container.tenants.resolve('localhost');
    await container.db.update(tenants).set({ paymentSettings: settings }).where(eq(tenants.id, tenant.id));
    container.tenants.invalidate();
  });
  afterAll(async () => {
    await app.close();
    await container.close();
  });

  const newWechatPayment = async () => {
    const tenant = await container.tenants.resolve('localhost');
    const [user] = await container.db.select({ id: users.id }).from(users).where(eq(users.tenantId, tenant.id)).limit(1);
    const [p] = await container.db
      .insert(payments)
      .values({ tenantId: tenant.id, userId: user!.id, method: 'wechat', amount: 1_000_000, createdAt: clock(), expiresAt: new Date(clock().getTime() + 15 * 60_000), qrCode: 'weixin://wxpay/bizpayurl?pr=test' })
      .returning();
    return p!;
  };
  const notify = (eventType: string, resource: Record<string, unknown>, key: crypto.KeyObject, serial: string) => {
    const aad = eventType.startsWith('REFUND.') ? 'refund' : 'transaction';
    const body = JSON.stringify({ id: `EV-${crypto.randomUUID()}`, create_time: '2026-11-01T08:01:00+08:00', resource_type: 'encrypt-resource', event_type: eventType, summary: eventType, resource: { original_type: aad, algorithm: 'AEAD_AES_256_GCM', ciphertext: gcm(JSON.stringify(resource), 'n0nce1234567', aad), associated_data: aad, nonce: 'n0nce1234567' } });
    return app.inject({ method: 'POST', url: '/api/v1/payments/notify/wechat', headers: signedHeaders(body, key, serial), payload: body });
  };
  const outcomes = async (paymentId: string) => (await container.db.select().from(paymentNotifications).where(eq(paymentNotifications.paymentId, paymentId))).map((n) => n.outcome);

  it('#20 a WeChat refund notify never gives 500', async () => {
    const p = await newWechatPayment();
    const refund = { mchid: MCH_ID, out_trade_no: compact(p.id), transaction_id: '4200002026110112345678901234', out_refund_no: 'RF1', refund_id: '5000', refund_status: 'SUCCESS', amount: { total: 10000, refund: 2500, payer_total: 10000, payer_refund: 2500 } };
    const ok = await notify('REFUND.SUCCESS', refund, platformA.privateKey, SERIAL_A);
    expect(ok.statusCode).toBe(204);
    expect(await outcomes(p.id)).toEqual(['refund_succeeded RF1']);
    // Abnormal, closed, for an order we don't know, or forged: received or refused, never a 5xx.
    for (const res of [
      await notify('REFUND.ABNORMAL', { ...refund, refund_status: 'ABNORMAL' }, platformA.privateKey, SERIAL_A),
      await notify('REFUND.CLOSED', { ...refund, refund_status: 'CLOSED' }, platformA.privateKey, SERIAL_A),
      await notify('REFUND.SUCCESS', { ...refund, out_trade_no: 'ffffffffffffffffffffffffffffffff' }, platformA.privateKey, SERIAL_A),
      await notify('REFUND.SUCCESS', refund, rsaKeyPair().privateKey, SERIAL_A),
      await notify('REFUND.SUCCESS', { ...refund, amount: 'lots' }, platformA.privateKey, SERIAL_A),
    ]) {
      expect(res.statusCode).toBeLessThan(500);
    }
    const [payment] = await container.db.select().from(payments).where(eq(payments.id, p.id));
    expect(payment?.status).toBe('pending');
  });

  it('#20 an unknown platform serial triggers one certificate refresh and then verifies', async () => {
    const p = await newWechatPayment();
    const tx = { mchid: MCH_ID, appid: WX_APP_ID, out_trade_no: compact(p.id), transaction_id: '4200002026110112345678909999', trade_state: 'SUCCESS', amount: { total: 10000, payer_total: 10000, currency: 'CNY' } };
    const before = certificateFetches;
    // WeChat Pay rotated to certificate B, which the settings don't name.
    const res = await notify('TRANSACTION.SUCCESS', tx, platformB.privateKey, SERIAL_B);
    expect(res.statusCode).toBe(204);
    expect(certificateFetches - before).toBe(1);
    expect(await outcomes(p.id)).toEqual(['credited']);
    // Both serials now verify without another fetch; serials nobody holds cost at most one fetch a minute.
    expect((await notify('TRANSACTION.SUCCESS', tx, platformA.privateKey, SERIAL_A)).statusCode).toBe(204);
    for (let i = 0; i < 3; i++) expect((await notify('TRANSACTION.SUCCESS', tx, platformB.privateKey, `0BADC0DE${i}`)).statusCode).toBe(400);
    expect(certificateFetches - before).toBe(1);
  });
});
