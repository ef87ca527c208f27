import type crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Aes, Formatter, Rsa } from 'wechatpay-axios-plugin';
import WechatPayV3 from 'wechatpay-node-v3';
import { issueCert, makeRootCa, rsaKeyPair } from '../../../test/fakes/certs.ts';
import type { NotifyRequest } from './port.ts';
import { createWechatGateway, WECHATPAY_CERT_RETRY_MS, type WechatPayOptions } from './wechat.ts';

// WeChat Pay's side is played by the official libraries (wechatpay-axios-plugin,
// wechatpay-node-v3): they sign answers and notifications, encrypt resources and certificates,
// and check what our adapter signs. Nothing here uses the adapter's own helpers.
const merchant = rsaKeyPair();
const platformA = rsaKeyPair();
const platformB = rsaKeyPair();
const wechatPublic = rsaKeyPair();
const forger = rsaKeyPair();
const pem = (k: crypto.KeyObject, type: 'pkcs8' | 'spki') => k.export({ type, format: 'pem' }).toString();

const MCH_ID = '1230000109';
const APP_ID = 'wxd678efh567hg6787';
const MERCHANT_SERIAL = '1DDE55AD98ED71D6EDD4A4A16996DE7B47773A8C';
const PUB_KEY_ID = 'PUB_KEY_ID_0112300001092024060100000000000001';
const API_V3_KEY = 'a7cde1ef9a0b1c2d3e4f5a6b7c8d9e0f';
const ca = makeRootCa('/C=CN/O=Tenpay.com/CN=Tenpay.com Root CA');
const SERIAL_A = '5157F09EFDC096DE15EBE81A47057A7232F1B8E1';
const SERIAL_B = '7A1F2B3C4D5E6F708192A3B4C5D6E7F801234567';
const certA = issueCert(ca, '/C=CN/O=Tenpay.com/CN=Tenpay.com platform A', platformA, SERIAL_A);
const certB = issueCert(ca, '/C=CN/O=Tenpay.com/CN=Tenpay.com platform B', platformB, SERIAL_B);

type Clock = { now: Date };
const nowS = (c: Clock) => Math.floor(c.now.getTime() / 1000);

type Sent = { url: string; method: string; headers: Record<string, string>; body: string };

/** WeChat Pay's side of an answer or notification: headers signed by `key` with the plugin's Formatter and Rsa. */
function signed(body: string, key: crypto.KeyObject, serial: string, c: Clock): Record<string, string> {
  const timestamp = String(nowS(c) - 2);
  const nonce = Formatter.nonce();
  return { 'Wechatpay-Timestamp': timestamp, 'Wechatpay-Nonce': nonce, 'Wechatpay-Signature': Rsa.sign(Formatter.response(timestamp, nonce, body), key), 'Wechatpay-Serial': serial };
}

function certificatesAnswer(certs: { serial: string; pem: string }[]) {
  return {
    data: certs.map(({ serial, pem: certPem }) => {
      const nonce = Formatter.nonce(12);
      return {
        serial_no: serial,
        effective_time: '2024-01-01T00:00:00+08:00',
        expire_time: '2029-01-01T00:00:00+08:00',
        encrypt_certificate: { algorithm: 'AEAD_AES_256_GCM', nonce, associated_data: 'certificate', ciphertext: Aes.AesGcm.encrypt(certPem, API_V3_KEY, nonce, 'certificate') },
      };
    }),
  };
}

/** A fake WeChat Pay API: records requests, answers /v3/certificates with `certs` signed by `signer`. */
function fakeWechat(c: Clock, opts: { certs?: { serial: string; pem: string }[]; signer?: { key: crypto.KeyObject; serial: string }; answer?: (s: Sent) => Response } = {}) {
  const sent: Sent[] = [];
  const fn: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : input.toString();
    const s: Sent = { url, method: init?.method ?? 'GET', headers: Object.fromEntries(Object.entries((init?.headers ?? {}) as Record<string, string>)), body: typeof init?.body === 'string' ? init.body : '' };
    sent.push(s);
    if (new URL(url).pathname === '/v3/certificates') {
      const text = JSON.stringify(certificatesAnswer(opts.certs ?? []));
      const signer = opts.signer ?? { key: platformA.privateKey, serial: SERIAL_A };
      return new Response(text, { status: 200, headers: { 'content-type': 'application/json', ...signed(text, signer.key, signer.serial, c) } });
    }
    if (opts.answer) return opts.answer(s);
    throw new Error(`unexpected ${s.method} ${url}`);
  };
  return { fn, sent, certificateFetches: () => sent.filter((s) => new URL(s.url).pathname === '/v3/certificates').length };
}

function gateway(c: Clock, overrides: Partial<WechatPayOptions> = {}) {
  return createWechatGateway({
    mchId: MCH_ID,
    appId: APP_ID,
    merchantSerialNo: MERCHANT_SERIAL,
    merchantPrivateKeyPem: pem(merchant.privateKey, 'pkcs8'),
    apiV3Key: API_V3_KEY,
    clock: () => c.now,
    fetch: async () => {
      throw new Error('no HTTP call expected');
    },
    ...overrides,
  });
}

const transaction = { appid: APP_ID, mchid: MCH_ID, out_trade_no: 'R20240602003005A1B2', transaction_id: '4200002024060212345678901234', trade_state: 'SUCCESS', amount: { total: 10000, currency: 'CNY' } };
const refundResource = {
  mchid: MCH_ID,
  out_trade_no: 'R20240602003005A1B2',
  transaction_id: '4200002024060212345678901234',
  out_refund_no: 'RF20240602A1',
  refund_id: '50000000382019052709732678859',
  refund_status: 'SUCCESS',
  success_time: '2024-06-02T10:00:00+08:00',
  user_received_account: '招商银行信用卡0403',
  amount: { total: 10000, refund: 2500, payer_total: 10000, payer_refund: 2500 },
};

/** A notification as WeChat Pay sends it: resource encrypted with the plugin's AES-GCM, body signed with `key`. */
function notification(resource: unknown, eventType: string, key: crypto.KeyObject, serial: string, c: Clock): NotifyRequest & { body: string } {
  const nonce = Formatter.nonce(12);
  const aad = eventType.startsWith('REFUND.') ? 'refund' : 'transaction';
  const body = JSON.stringify({
    id: 'EV-2018022511223320873',
    create_time: '2024-06-02T00:31:03+08:00',
    resource_type: 'encrypt-resource',
    event_type: eventType,
    summary: eventType,
    resource: { original_type: aad, algorithm: 'AEAD_AES_256_GCM', ciphertext: Aes.AesGcm.encrypt(JSON.stringify(resource), API_V3_KEY, nonce, aad), associated_data: aad, nonce },
  });
  return { headers: signed(body, key, serial, c), rawBody: body, body };
}

describe('WeChat Pay v3 against wechatpay-axios-plugin and wechatpay-node-v3', () => {
  it('signs requests exactly as both libraries do (message, signature, Authorization header)', async () => {
    const c = { now: new Date() };
    const api = fakeWechat(c, { answer: () => new Response(JSON.stringify({ code_url: 'weixin://wxpay/bizpayurl?pr=x' }), { status: 200, headers: signed(JSON.stringify({ code_url: 'weixin://wxpay/bizpayurl?pr=x' }), wechatPublic.privateKey, PUB_KEY_ID, c) }) });
    const g = gateway(c, { publicKeyId: PUB_KEY_ID, publicKeyPem: pem(wechatPublic.publicKey, 'spki'), fetch: api.fn });
    await g.createPayment({ outTradeNo: 'R1', amount: 1_000_000, subject: '充值', notifyUrl: 'https://x.example/n', returnUrl: 'https://x.example/r', expiresAt: new Date(c.now.getTime() + 900_000) });
    const s = api.sent[0]!;
    const auth = /^WECHATPAY2-SHA256-RSA2048 mchid="(.+)",nonce_str="(.+)",signature="(.+)",timestamp="(\d+)",serial_no="(.+)"$/.exec(s.headers.authorization!);
    expect(auth).not.toBeNull();
    const [, mchid, nonce, signature, timestamp, serial] = auth!;
    const uri = new URL(s.url).pathname;
    // wechatpay-axios-plugin: the same header, and the signature verifies over its request message.
    // (the order of the parameters is free; the scheme and each parameter must be the same)
    const params = (h: string) => Object.fromEntries([...h.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const theirs = Formatter.authorization(mchid!, nonce!, signature!, timestamp!, serial!);
    expect(theirs.split(' ')[0]).toBe(s.headers.authorization!.split(' ')[0]);
    expect(params(s.headers.authorization!)).toEqual(params(theirs));
    expect(Rsa.verify(Formatter.request('POST', uri, timestamp!, nonce!, s.body), signature!, merchant.publicKey)).toBe(true);
    expect(Rsa.sign(Formatter.request('POST', uri, timestamp!, nonce!, s.body), merchant.privateKey)).toBe(signature);
    // wechatpay-node-v3: the same signature for the same request.
    const v3 = new WechatPayV3({ appid: APP_ID, mchid: MCH_ID, serial_no: MERCHANT_SERIAL, publicKey: Buffer.from(pem(merchant.publicKey, 'spki')), privateKey: Buffer.from(pem(merchant.privateKey, 'pkcs8')) });
    expect(v3.getSignature('POST', nonce!, timestamp!, uri, s.body)).toBe(signature);
    expect(mchid).toBe(MCH_ID);
    expect(serial).toBe(MERCHANT_SERIAL);
  });

  it('verifies notifications in public-key mode exactly when wechatpay-node-v3 does, and decrypts what the plugin encrypts', async () => {
    const c = { now: new Date() };
    const g = gateway(c, { publicKeyId: PUB_KEY_ID, publicKeyPem: pem(wechatPublic.publicKey, 'spki') });
    const v3 = new WechatPayV3({ appid: APP_ID, mchid: MCH_ID, serial_no: MERCHANT_SERIAL, publicKey: Buffer.from('x'), privateKey: Buffer.from(pem(merchant.privateKey, 'pkcs8')) });
    (WechatPayV3 as unknown as { certificates: Record<string, string> }).certificates[PUB_KEY_ID] = pem(wechatPublic.publicKey, 'spki');
    const genuine = notification(transaction, 'TRANSACTION.SUCCESS', wechatPublic.privateKey, PUB_KEY_ID, c);
    const forged = notification(transaction, 'TRANSACTION.SUCCESS', forger.privateKey, PUB_KEY_ID, c);
    const tampered = { ...genuine, rawBody: genuine.rawBody.replace('TRANSACTION.SUCCESS', 'TRANSACTION.SUCCESS ') };
    for (const [n, expected] of [
      [genuine, true],
      [forged, false],
      [tampered, false],
    ] as const) {
      const h = n.headers;
      const theirs = await v3.verifySign({ timestamp: h['Wechatpay-Timestamp']!, nonce: h['Wechatpay-Nonce']!, body: n.rawBody, serial: h['Wechatpay-Serial']!, signature: h['Wechatpay-Signature']! });
      expect(theirs).toBe(expected);
      expect((await g.verifyNotify(n)).ok).toBe(expected);
    }
    const r = JSON.parse(genuine.rawBody) as { resource: { ciphertext: string; associated_data: string; nonce: string } };
    expect(v3.decipher_gcm(r.resource.ciphertext, r.resource.associated_data, r.resource.nonce, API_V3_KEY)).toEqual(transaction);
    const result = await g.verifyNotify(genuine);
    expect(result.ok && result.kind !== 'refund' && result.notify).toMatchObject({ outTradeNo: transaction.out_trade_no, amount: 1_000_000, status: 'paid' });
  });

  it('holds platform keys as a set: notifications under either of two serials verify', async () => {
    const c = { now: new Date() };
    const api = fakeWechat(c, { certs: [{ serial: SERIAL_A, pem: certA }, { serial: SERIAL_B, pem: certB }] });
    const g = gateway(c, { fetch: api.fn });
    expect((await g.verifyNotify(notification(transaction, 'TRANSACTION.SUCCESS', platformA.privateKey, SERIAL_A, c))).ok).toBe(true);
    expect((await g.verifyNotify(notification(transaction, 'TRANSACTION.SUCCESS', platformB.privateKey, SERIAL_B, c))).ok).toBe(true);
    // B's serial with A's key: the key must be the one the serial names.
    expect(await g.verifyNotify(notification(transaction, 'TRANSACTION.SUCCESS', platformA.privateKey, SERIAL_B, c))).toEqual({ ok: false, reason: 'bad signature' });
    expect(api.certificateFetches()).toBe(1);
  });

  it('fetches certificates for an unknown serial once, then verifies; a further unknown serial within a minute fetches nothing', async () => {
    const c = { now: new Date() };
    const certs = [{ serial: SERIAL_A, pem: certA }];
    const api = fakeWechat(c, { certs });
    const g = gateway(c, { fetch: api.fn, platformPublicKeyPem: certA, platformSerialNo: SERIAL_A });
    expect((await g.verifyNotify(notification(transaction, 'TRANSACTION.SUCCESS', platformA.privateKey, SERIAL_A, c))).ok).toBe(true);
    expect(api.certificateFetches()).toBe(0);
    // WeChat Pay rotates to B: the first notification under B fetches the certificates once.
    certs.push({ serial: SERIAL_B, pem: certB });
    expect((await g.verifyNotify(notification(transaction, 'TRANSACTION.SUCCESS', platformB.privateKey, SERIAL_B, c))).ok).toBe(true);
    expect(api.certificateFetches()).toBe(1);
    // A forger naming serials we don't hold can't make us fetch more than once a minute.
    for (let i = 0; i < 5; i++) {
      expect(await g.verifyNotify(notification(transaction, 'TRANSACTION.SUCCESS', forger.privateKey, `DEADBEEF0${i}`, c))).toEqual({ ok: false, reason: `unknown Wechatpay-Serial DEADBEEF0${i}` });
    }
    expect(api.certificateFetches()).toBe(1);
    c.now = new Date(c.now.getTime() + WECHATPAY_CERT_RETRY_MS + 1000);
    await g.verifyNotify(notification(transaction, 'TRANSACTION.SUCCESS', forger.privateKey, 'DEADBEEF10', c));
    expect(api.certificateFetches()).toBe(2);
  });

  it('refuses certificates that were not encrypted under the APIv3 key or whose answer is not signed by WeChat Pay', async () => {
    const c = { now: new Date() };
    const forgedCert = issueCert(ca, '/CN=forged', forger, SERIAL_B);
    const bad = fakeWechat(c, { certs: [{ serial: SERIAL_B, pem: forgedCert }], signer: { key: forger.privateKey, serial: 'FFFF' } });
    const g = gateway(c, { fetch: bad.fn });
    await expect(g.refreshCertificates()).rejects.toThrow(/unknown Wechatpay-Serial FFFF/);
    expect(await g.verifyNotify(notification(transaction, 'TRANSACTION.SUCCESS', forger.privateKey, SERIAL_B, c))).toMatchObject({ ok: false });
  });

  it('never downloads certificates in pure public-key mode, and refuses an unknown PUB_KEY_ID', async () => {
    const c = { now: new Date() };
    const api = fakeWechat(c);
    const g = gateway(c, { fetch: api.fn, publicKeyId: PUB_KEY_ID, publicKeyPem: pem(wechatPublic.publicKey, 'spki') });
    expect(await g.verifyNotify(notification(transaction, 'TRANSACTION.SUCCESS', wechatPublic.privateKey, 'PUB_KEY_ID_OTHER', c))).toEqual({ ok: false, reason: 'unknown Wechatpay-Serial PUB_KEY_ID_OTHER' });
    expect(api.sent).toHaveLength(0);
  });

  it('accepts a REFUND.SUCCESS notification as a refund, decrypted as wechatpay-node-v3 decrypts it', async () => {
    const c = { now: new Date() };
    const g = gateway(c, { publicKeyId: PUB_KEY_ID, publicKeyPem: pem(wechatPublic.publicKey, 'spki') });
    const n = notification(refundResource, 'REFUND.SUCCESS', wechatPublic.privateKey, PUB_KEY_ID, c);
    const v3 = new WechatPayV3({ appid: APP_ID, mchid: MCH_ID, serial_no: MERCHANT_SERIAL, publicKey: Buffer.from('x'), privateKey: Buffer.from(pem(merchant.privateKey, 'pkcs8')) });
    const r = JSON.parse(n.rawBody) as { resource: { ciphertext: string; associated_data: string; nonce: string } };
    expect(v3.decipher_gcm(r.resource.ciphertext, r.resource.associated_data, r.resource.nonce, API_V3_KEY)).toEqual(refundResource);
    expect(await g.verifyNotify(n)).toEqual({
      ok: true,
      kind: 'refund',
      refund: { outTradeNo: 'R20240602003005A1B2', outRefundNo: 'RF20240602A1', gatewayRefundNo: '50000000382019052709732678859', amount: 250_000, cumulative: false, status: 'succeeded', raw: refundResource },
    });
    const abnormal = await g.verifyNotify(notification({ ...refundResource, refund_status: 'ABNORMAL' }, 'REFUND.ABNORMAL', wechatPublic.privateKey, PUB_KEY_ID, c));
    expect(abnormal.ok && abnormal.kind === 'refund' && abnormal.refund.status).toBe('failed');
    expect((await g.verifyNotify(notification({ ...refundResource, mchid: '999' }, 'REFUND.SUCCESS', wechatPublic.privateKey, PUB_KEY_ID, c))).ok).toBe(false);
    expect((await g.verifyNotify(notification(refundResource, 'REFUND.SUCCESS', forger.privateKey, PUB_KEY_ID, c))).ok).toBe(false);
  });

  it('sends refund, refund query and close as documented, signed, and believes only signed answers', async () => {
    const c = { now: new Date() };
    const answers: Record<string, { status: number; body: unknown; key?: crypto.KeyObject }> = {
      'POST /v3/refund/domestic/refunds': { status: 200, body: { refund_id: '5000', out_refund_no: 'RF1', out_trade_no: 'R1', status: 'PROCESSING', amount: { refund: 2500, total: 10000, currency: 'CNY' } } },
      'GET /v3/refund/domestic/refunds/RF1': { status: 200, body: { refund_id: '5000', out_refund_no: 'RF1', out_trade_no: 'R1', status: 'SUCCESS', amount: { refund: 2500, total: 10000 } } },
      'GET /v3/refund/domestic/refunds/RF404': { status: 404, body: { code: 'RESOURCE_NOT_EXISTS', message: '退款单不存在' } },
      'POST /v3/pay/transactions/out-trade-no/R1/close': { status: 204, body: '' },
      'POST /v3/pay/transactions/out-trade-no/RPAID/close': { status: 400, body: { code: 'ORDERPAID', message: '订单已支付' } },
    };
    const api = fakeWechat(c, {
      answer: (s) => {
        const a = answers[`${s.method} ${new URL(s.url).pathname}`];
        if (!a) throw new Error(`unexpected ${s.method} ${s.url}`);
        const text = typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
        return new Response(a.status === 204 ? null : text, { status: a.status, headers: signed(text, a.key ?? wechatPublic.privateKey, PUB_KEY_ID, c) });
      },
    });
    const g = gateway(c, { fetch: api.fn, publicKeyId: PUB_KEY_ID, publicKeyPem: pem(wechatPublic.publicKey, 'spki') });
    expect(await g.refund({ outTradeNo: 'R1', outRefundNo: 'RF1', amount: 250_000, totalAmount: 1_000_000, reason: '用户申请', notifyUrl: 'https://x.example/api/v1/payments/notify/wechat' })).toEqual({
      outRefundNo: 'RF1',
      status: 'processing',
      amount: 250_000,
      gatewayRefundNo: '5000',
    });
    expect(JSON.parse(api.sent[0]!.body)).toEqual({ out_trade_no: 'R1', out_refund_no: 'RF1', reason: '用户申请', notify_url: 'https://x.example/api/v1/payments/notify/wechat', amount: { refund: 2500, total: 10000, currency: 'CNY' } });
    expect(await g.queryRefund('R1', 'RF1')).toMatchObject({ status: 'succeeded', amount: 250_000 });
    expect(await g.queryRefund('R1', 'RF404')).toEqual({ outRefundNo: 'RF404', status: 'not_found' });
    await expect(g.closePayment('R1')).resolves.toBeUndefined();
    expect(JSON.parse(api.sent[3]!.body)).toEqual({ mchid: MCH_ID });
    await expect(g.closePayment('RPAID')).rejects.toThrow(/ORDERPAID/);
    // Every request is signed over exactly what was sent, as the plugin computes it.
    for (const s of api.sent) {
      const [, nonce, signature, timestamp] = /nonce_str="(.+)",signature="(.+)",timestamp="(\d+)"/.exec(s.headers.authorization!)!;
      const u = new URL(s.url);
      expect(Rsa.verify(Formatter.request(s.method, u.pathname + u.search, timestamp!, nonce!, s.body), signature!, merchant.publicKey)).toBe(true);
    }
    // A forged "succeeded" is not believed.
    answers['GET /v3/refund/domestic/refunds/RF1']!.key = forger.privateKey;
    await expect(g.queryRefund('R1', 'RF1')).rejects.toThrow(/bad signature/);
  });
});
