import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PaymentGatewayError, type NotifyRequest, type PaymentGateway, type VerifiedNotify } from './port.ts';
import {
  createWechatGateway,
  decryptWechatResource,
  wechatAuthorization,
  wechatRequestMessage,
  wechatResponseMessage,
  wechatTime,
  type WechatPayOptions,
} from './wechat.ts';

// The merchant's API key pair (we sign requests, WeChat Pay verifies), WeChat Pay's platform key
// pair (it signs answers and notifications, we verify) and a forger's.
const rsa = () => crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const merchant = rsa();
const platform = rsa();
const forger = rsa();
const pem = (k: crypto.KeyObject, type: 'pkcs8' | 'spki') => k.export({ type, format: 'pem' }).toString();

const MCH_ID = '1230000109';
const APP_ID = 'wxd678efh567hg6787';
const MERCHANT_SERIAL = '1DDE55AD98ED71D6EDD4A4A16996DE7B47773A8C';
const PLATFORM_SERIAL = 'PUB_KEY_ID_0112300001092024060100000000000001';
const API_V3_KEY = 'a7cde1ef9a0b1c2d3e4f5a6b7c8d9e0f'; // 32 ASCII characters = 32 bytes
const NOW = new Date('2024-06-01T16:30:05.123Z');
const NOW_S = Math.floor(NOW.getTime() / 1000);

function gateway(overrides: Partial<WechatPayOptions> = {}): PaymentGateway {
  return createWechatGateway({
    mchId: MCH_ID,
    appId: APP_ID,
    merchantSerialNo: MERCHANT_SERIAL,
    merchantPrivateKeyPem: pem(merchant.privateKey, 'pkcs8'),
    apiV3Key: API_V3_KEY,
    platformPublicKeyPem: pem(platform.publicKey, 'spki'),
    platformSerialNo: PLATFORM_SERIAL,
    fetch: async () => {
      throw new Error('no HTTP call expected');
    },
    clock: () => NOW,
    nonce: () => '5K8264ILTKCH16CQ2502SI8ZNMTM67VS',
    ...overrides,
  });
}

type Signing = { timestamp?: number | string; nonce?: string; key?: crypto.KeyObject; serial?: string; signature?: string };

/** The Wechatpay-* headers WeChat Pay puts on an answer or notification carrying `body`. */
function platformHeaders(body: string, s: Signing = {}): Record<string, string> {
  const timestamp = String(s.timestamp ?? NOW_S - 3);
  const nonce = s.nonce ?? 'fdasfwqewlkja484w';
  const signature = s.signature ?? crypto.sign('sha256', Buffer.from(wechatResponseMessage(timestamp, nonce, body)), s.key ?? platform.privateKey).toString('base64');
  return { 'Wechatpay-Timestamp': timestamp, 'Wechatpay-Nonce': nonce, 'Wechatpay-Signature': signature, 'Wechatpay-Serial': s.serial ?? PLATFORM_SERIAL, 'Request-ID': '08F78BB5AF0610D302889DF35D05B86' };
}

function platformAnswer(status: number, body: unknown, s: Signing | null = {}): Response {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const headers = s ? platformHeaders(text, s) : {};
  return new Response(status === 204 ? null : text, { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });
}

/** AEAD_AES_256_GCM as WeChat Pay encrypts notification resources (tag appended to the ciphertext). */
function encryptResource(plaintext: string, opts: { key?: string; nonce?: string; aad?: string } = {}) {
  const nonce = opts.nonce ?? 'fdasflkja484';
  const aad = opts.aad ?? 'transaction';
  const cipher = crypto.createCipheriv('aes-256-gcm', Buffer.from(opts.key ?? API_V3_KEY, 'utf8'), Buffer.from(nonce, 'utf8'));
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('base64');
  return { original_type: 'transaction', algorithm: 'AEAD_AES_256_GCM', ciphertext, associated_data: aad, nonce };
}

/** The decrypted transaction of the documented payment-success notification, for our order. */
const transaction = (fields: Record<string, unknown> = {}) => ({
  transaction_id: '4200002024060212345678901234',
  amount: { payer_total: 10000, total: 10000, currency: 'CNY', payer_currency: 'CNY' },
  mchid: MCH_ID,
  trade_state: 'SUCCESS',
  bank_type: 'OTHERS',
  promotion_detail: [],
  success_time: '2024-06-02T00:30:59+08:00',
  payer: { openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' },
  out_trade_no: 'R20240602003005A1B2',
  appid: APP_ID,
  trade_state_desc: '支付成功',
  trade_type: 'NATIVE',
  attach: '',
  scene_info: { device_id: '' },
  ...fields,
});

function notification(tx: unknown = transaction(), opts: { envelope?: Record<string, unknown>; signing?: Signing; encrypt?: { key?: string; nonce?: string; aad?: string } } = {}): NotifyRequest {
  const body = JSON.stringify({
    id: 'EV-2018022511223320873',
    create_time: '2024-06-02T00:31:03+08:00',
    resource_type: 'encrypt-resource',
    event_type: 'TRANSACTION.SUCCESS',
    summary: '支付成功',
    resource: encryptResource(typeof tx === 'string' ? tx : JSON.stringify(tx), opts.encrypt),
    ...opts.envelope,
  });
  return { headers: { 'content-type': 'application/json', ...platformHeaders(body, opts.signing) }, rawBody: body };
}

async function accepted(g: PaymentGateway, req: NotifyRequest): Promise<VerifiedNotify> {
  const result = await g.verifyNotify(req);
  if (!result.ok) throw new Error(`refused: ${result.reason}`);
  if (result.kind === 'refund') throw new Error('a refund notification, not a payment');
  return result.notify;
}

async function refused(g: PaymentGateway, req: NotifyRequest): Promise<string> {
  const result = await g.verifyNotify(req);
  if (result.ok) throw new Error('accepted a notification that must be refused');
  return result.reason;
}

type Call = { url: URL; init: RequestInit | undefined };

function fakeFetch(answer: (call: Call) => Response | Promise<Response>) {
  const calls: Call[] = [];
  const fn: typeof fetch = async (input, init) => {
    const call = { url: new URL(input instanceof Request ? input.url : input.toString()), init };
    calls.push(call);
    return answer(call);
  };
  return { fn, calls };
}

/** Parses our Authorization header and checks its signature the way WeChat Pay does. */
function checkAuthorization(call: Call, body: string) {
  const auth = new Headers(call.init?.headers).get('authorization') ?? '';
  const m = /^WECHATPAY2-SHA256-RSA2048 mchid="([^"]*)",nonce_str="([^"]*)",signature="([^"]*)",timestamp="([^"]*)",serial_no="([^"]*)"$/.exec(auth);
  expect(m, auth).not.toBeNull();
  const [, mchid, nonce, signature, timestamp, serial] = m!;
  expect({ mchid, nonce, timestamp, serial }).toEqual({ mchid: MCH_ID, nonce: '5K8264ILTKCH16CQ2502SI8ZNMTM67VS', timestamp: String(NOW_S), serial: MERCHANT_SERIAL });
  // Built by hand from the request actually sent: method, path with query, timestamp, nonce, body.
  const message = `${call.init?.method}\n${call.url.pathname}${call.url.search}\n${timestamp}\n${nonce}\n${body}\n`;
  expect(crypto.verify('sha256', Buffer.from(message), merchant.publicKey, Buffer.from(signature!, 'base64'))).toBe(true);
}

const order = {
  outTradeNo: 'R20240602003005A1B2',
  amount: 1_000_000, // ¥100.00 = 10000 fen
  subject: '算力 余额充值',
  notifyUrl: 'https://console.example.com/api/v1/payments/notify/wechat',
  returnUrl: 'https://console.example.com/recharge/success',
  expiresAt: new Date('2024-06-01T16:45:05.000Z'),
};

describe('WeChat Pay v3 signing primitives', () => {
  it("builds the signature message and Authorization header of WeChat Pay's documented example", () => {
    // "签名生成" example: GET /v3/certificates at 1554208460 with nonce 593BEC0C930BF1AFEB40B4A08C8FB242.
    expect(wechatRequestMessage('GET', '/v3/certificates', '1554208460', '593BEC0C930BF1AFEB40B4A08C8FB242', '')).toBe(
      'GET\n/v3/certificates\n1554208460\n593BEC0C930BF1AFEB40B4A08C8FB242\n\n',
    );
    const signature =
      'uOVRnA4qG/MNnYzdQxJanN+zU+lTgIcnU9BxGw5dKjK+VdEUz2FeIoC+D5sB/LN+nGzX3hfZg6r5wT1pl2ZobmIc6p0ldN7J6yDgUzbX8Uk3sD4a4eZVPTBvqNDoUqcYMlZ9uuDdCvNv4TM3c1WzsXUrExwVkI1XO5jCNbgDJ25nkT/c1gIFvqoogl7MdSFGc4W4xZsqCItnqbypR3RuGIlR9h9vlRsy7zJR9PBI83X8alLDIfR1ukt1P7tMnmogZ0cuDY8cZsd8ZlCgLadmvej58SLsIkVxFJ8XyUgx9FmutKSYTmYtWBZ0+tNvfGmbXU7cob8H/4nLBiCwIUFluw==';
    expect(wechatAuthorization({ mchId: '1900009191', nonce: '593BEC0C930BF1AFEB40B4A08C8FB242', signature, timestamp: '1554208460', serialNo: '1DDE55AD98ED71D6EDD4A4A16996DE7B47773A8C' })).toBe(
      `WECHATPAY2-SHA256-RSA2048 mchid="1900009191",nonce_str="593BEC0C930BF1AFEB40B4A08C8FB242",signature="${signature}",timestamp="1554208460",serial_no="1DDE55AD98ED71D6EDD4A4A16996DE7B47773A8C"`,
    );
    expect(wechatResponseMessage('1554209980', 'c5ac7061fccab6bf3e254dcf98995b8c', '{"data":[]}')).toBe('1554209980\nc5ac7061fccab6bf3e254dcf98995b8c\n{"data":[]}\n');
  });

  it('writes time_expire as RFC 3339 in Beijing time whatever the machine zone', () => {
    expect(wechatTime(new Date('2024-06-01T16:45:05.999Z'))).toBe('2024-06-02T00:45:05+08:00');
    expect(wechatTime(new Date('2018-06-08T02:34:56Z'))).toBe('2018-06-08T10:34:56+08:00');
    expect(() => wechatTime(new Date(Number.NaN))).toThrow(RangeError);
  });

  it('decrypts an AEAD_AES_256_GCM resource and refuses any altered part', () => {
    const resource = encryptResource('{"hello":"世界"}');
    expect(decryptWechatResource(resource, API_V3_KEY)).toBe('{"hello":"世界"}');
    const bytes = Buffer.from(resource.ciphertext, 'base64');
    const flipTag = Buffer.from(bytes);
    flipTag[flipTag.length - 1]! ^= 1;
    const flipBody = Buffer.from(bytes);
    flipBody[0]! ^= 1;
    expect(() => decryptWechatResource({ ...resource, ciphertext: flipTag.toString('base64') }, API_V3_KEY)).toThrow();
    expect(() => decryptWechatResource({ ...resource, ciphertext: flipBody.toString('base64') }, API_V3_KEY)).toThrow();
    expect(() => decryptWechatResource({ ...resource, associated_data: 'refund' }, API_V3_KEY)).toThrow();
    expect(() => decryptWechatResource({ ...resource, nonce: 'fdasflkja485' }, API_V3_KEY)).toThrow();
    expect(() => decryptWechatResource(resource, 'b7cde1ef9a0b1c2d3e4f5a6b7c8d9e0f')).toThrow();
    expect(() => decryptWechatResource({ ...resource, ciphertext: bytes.subarray(0, 16).toString('base64') }, API_V3_KEY)).toThrow(/too short/);
  });
});

describe('WeChat Pay configuration', () => {
  // A self-signed stand-in for a platform certificate (openssl, serial set to a WeChat-style one).
  const CERT = `-----BEGIN CERTIFICATE-----
MIIDuTCCAqGgAwIBAgIUUVfwnv3Alt4V6+gaRwV6cjLzQhUwDQYJKoZIhvcNAQEL
BQAwazELMAkGA1UEBhMCQ04xEzARBgNVBAoMClRlbnBheS5jb20xHTAbBgNVBAsM
FFRlbnBheS5jb20gQ0EgQ2VudGVyMSgwJgYDVQQDDB9UZW5wYXkuY29tIFJvb3Qg
Q0EgdGVzdCBmaXh0dXJlMCAXDTI2MTEyMjAxMjgxN1oYDzIxMjYxMDI5MDEyODE3
WjBrMQswCQYDVQQGEwJDTjETMBEGA1UECgwKVGVucGF5LmNvbTEdMBsGA1UECwwU
VGVucGF5LmNvbSBDQSBDZW50ZXIxKDAmBgNVBAMMH1RlbnBheS5jb20gUm9vdCBD
QSB0ZXN0IGZpeHR1cmUwggEiMA0GCSqGSIb3DQEBAQUAA4IBDwAwggEKAoIBAQCp
9p1W3SfwyTloN4Pfm5PpKnCuDVC33UW20ieKBYIYnZYehj/AcZRmRzC50zEZDt0o
UOmr58zPgWaLw+VnTjRCuOi2F79KM4oTCZ3lpHGzPLXRJqUlaCe15fjzhwtw5GA6
A7A+5z3SobefwrgRDWnxvUPZ+7K6qBWAa8kGfeVwt5i2Euv+lGXTRGam4M2lBZNw
4bxjaNZ3/+QkFQ2z52I2XZ08zfTbhgvbJxAYCNuuEIC/orcIhHlT948GbKTmNxMf
cFpjz2xdZPTUIPR1Wwi+3h5zOzT8iYeCX2DEjo5HKA+CDEEgKq+WW8m4GakoKSZE
cqj/KgIYwL77ZI3qftpLAgMBAAGjUzBRMB0GA1UdDgQWBBSOO5Q8avMQYgUNRIzY
ILK7ewuYCzAfBgNVHSMEGDAWgBSOO5Q8avMQYgUNRIzYILK7ewuYCzAPBgNVHRMB
Af8EBTADAQH/MA0GCSqGSIb3DQEBCwUAA4IBAQBeSt+zUZfRzRSAsc9o7Jb0UIaP
HWObJuOOfo1Ud47ZJASsG5EDrnQe4xHTraqxEfdW1uQTOuJOui5rLW9Q/IXdGc3f
70dK3tqDRrana2BlAS6bhB315Uw40wZ0TGjCbZwgwaVdcVSAdWmD4LxueQNPs6L7
H8BqKY81DnNPBpjr45gNoePCkU0aJIj4looI5w1uCqXaCCk3UbPTI5m488YZ78m/
NiWcyR/+sW4fTETVGWXhkCjqfzOgrX9f9PjV8grFl3P1uvUdeqHhWXEEkYE5F3zu
iRjmoNOxw3sd6OmFtSzMw1f6F/MwA83fCWGr4F55Ql/cCgj8kqHiXrIAI3mq
-----END CERTIFICATE-----`;
  const CERT_SERIAL = '5157F09EFDC096DE15EBE81A47057A7232F34215';

  it('takes a platform certificate instead of a public key, when its serial is the configured one', async () => {
    const g = gateway({ platformPublicKeyPem: CERT, platformSerialNo: CERT_SERIAL.toLowerCase() });
    // Our platform test key is not the certificate's: its notifications no longer verify.
    expect(await refused(g, notification(transaction(), { signing: { serial: CERT_SERIAL } }))).toBe('bad signature');
    expect(() => gateway({ platformPublicKeyPem: CERT, platformSerialNo: PLATFORM_SERIAL })).toThrow(/certificate's serial 5157F09E.* is not platformSerialNo/);
  });

  it('refuses unusable settings when the gateway is configured', () => {
    expect(() => gateway({ apiV3Key: 'short' })).toThrow(/32 bytes/);
    expect(() => gateway({ apiV3Key: `${API_V3_KEY}x` })).toThrow(/32 bytes/);
    expect(() => gateway({ platformPublicKeyPem: pem(platform.privateKey, 'pkcs8') })).toThrow(/private key/);
    expect(() => gateway({ platformPublicKeyPem: 'garbage' })).toThrow(/WeChat Pay platform key/);
    expect(() => gateway({ merchantPrivateKeyPem: pem(merchant.publicKey, 'spki') })).toThrow(/merchant private key/);
    const ec = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    expect(() => gateway({ merchantPrivateKeyPem: pem(ec.privateKey, 'pkcs8') })).toThrow(/expected an RSA key/);
  });
});

describe('WeChat Pay Native order', () => {
  const codeUrl = { code_url: 'weixin://wxpay/bizpayurl?pr=p4lpSuKzz' };

  it('posts a signed /v3/pay/transactions/native and returns the verified code_url', async () => {
    const f = fakeFetch(() => platformAnswer(200, codeUrl));
    await expect(gateway({ fetch: f.fn }).createPayment({ ...order, clientIp: '203.0.113.9' })).resolves.toEqual({ qrCode: 'weixin://wxpay/bizpayurl?pr=p4lpSuKzz' });

    expect(f.calls).toHaveLength(1);
    const call = f.calls[0]!;
    expect(call.url.toString()).toBe('https://api.mch.weixin.qq.com/v3/pay/transactions/native');
    expect(call.init?.method).toBe('POST');
    const headers = new Headers(call.init?.headers);
    expect(headers.get('content-type')).toBe('application/json');
    expect(headers.get('accept')).toBe('application/json');
    expect(headers.get('user-agent')).toBeTruthy();
    const body = String(call.init?.body);
    expect(JSON.parse(body)).toEqual({
      appid: APP_ID,
      mchid: MCH_ID,
      description: '算力 余额充值',
      out_trade_no: 'R20240602003005A1B2',
      time_expire: '2024-06-02T00:45:05+08:00',
      notify_url: order.notifyUrl,
      amount: { total: 10000, currency: 'CNY' },
      scene_info: { payer_client_ip: '203.0.113.9' },
    });
    checkAuthorization(call, body);
  });

  it('uses a configured base URL and leaves scene_info out without a client IP', async () => {
    const f = fakeFetch(() => platformAnswer(200, codeUrl));
    await gateway({ fetch: f.fn, baseUrl: 'https://api2.mch.weixin.qq.com/' }).createPayment(order);
    expect(f.calls[0]!.url.toString()).toBe('https://api2.mch.weixin.qq.com/v3/pay/transactions/native');
    expect(JSON.parse(String(f.calls[0]!.init?.body))).not.toHaveProperty('scene_info');
  });

  it.each([
    ['signed by another key', { key: forger.privateKey }, /bad signature/],
    ['signed under another serial', { serial: 'PUB_KEY_ID_0000000000000000000000000000000000' }, /unknown Wechatpay-Serial/],
    ['a WECHATPAY/SIGNTEST probe', { signature: 'WECHATPAY/SIGNTEST/Q2hlY2sgeW91ciBzaWduYXR1cmUgdmVyaWZpY2F0aW9u' }, /SIGNTEST probe/],
    ['signed 10 minutes ago', { timestamp: NOW_S - 600 }, /stale Wechatpay-Timestamp/],
  ] as const)('refuses an answer %s', async (_name, signing, reason) => {
    const f = fakeFetch(() => platformAnswer(200, codeUrl, signing));
    const err = await gateway({ fetch: f.fn }).createPayment(order).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaymentGatewayError);
    expect((err as Error).message).toMatch(reason);
  });

  it('refuses an unsigned answer and one whose code_url was swapped after signing', async () => {
    const unsigned = fakeFetch(() => platformAnswer(200, codeUrl, null));
    await expect(gateway({ fetch: unsigned.fn }).createPayment(order)).rejects.toThrow(/missing Wechatpay-/);
    const swapped = fakeFetch(() => {
      const genuine = platformHeaders(JSON.stringify(codeUrl));
      return new Response(JSON.stringify({ code_url: 'weixin://wxpay/bizpayurl?pr=attacker' }), { status: 200, headers: genuine });
    });
    await expect(gateway({ fetch: swapped.fn }).createPayment(order)).rejects.toThrow(/bad signature/);
  });

  it("throws WeChat Pay's message for a refusal", async () => {
    const f = fakeFetch(() => platformAnswer(400, { code: 'PARAM_ERROR', message: '参数错误', detail: { field: '/amount/total', issue: '金额必须大于0' } }));
    const err = await gateway({ fetch: f.fn }).createPayment(order).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaymentGatewayError);
    expect((err as PaymentGatewayError).message).toBe('WeChat Pay native order refused: 参数错误 (PARAM_ERROR)');
    expect((err as PaymentGatewayError).code).toBe('PARAM_ERROR');
    // WeChat Pay can't sign its answer to a request it could not authenticate.
    const sign = fakeFetch(() => platformAnswer(401, { code: 'SIGN_ERROR', message: '签名错误' }, null));
    await expect(gateway({ fetch: sign.fn }).createPayment(order)).rejects.toThrow(/签名错误 \(SIGN_ERROR\)/);
  });

  it('throws on a non-JSON error page, a missing code_url and a network failure', async () => {
    await expect(gateway({ fetch: fakeFetch(() => new Response('<html>502</html>', { status: 502 })).fn }).createPayment(order)).rejects.toThrow(/HTTP 502/);
    await expect(gateway({ fetch: fakeFetch(() => platformAnswer(200, { prepay_id: 'x' })).fn }).createPayment(order)).rejects.toThrow(/without code_url/);
    const down = fakeFetch(() => {
      throw new TypeError('fetch failed');
    });
    await expect(gateway({ fetch: down.fn }).createPayment(order)).rejects.toThrow(/WeChat Pay unreachable: fetch failed/);
  });

  it('refuses amounts that are not whole fen', async () => {
    await expect(gateway().createPayment({ ...order, amount: 1_000_001 })).rejects.toThrow(/whole number of fen/);
    await expect(gateway().createPayment({ ...order, amount: 0 })).rejects.toThrow(/positive/);
  });

  it('signs each request with a fresh nonce by default', async () => {
    const f = fakeFetch(() => platformAnswer(200, codeUrl));
    const g = gateway({ fetch: f.fn, nonce: undefined });
    await g.createPayment(order);
    await g.createPayment(order);
    const nonces = f.calls.map((c) => /nonce_str="([^"]+)"/.exec(new Headers(c.init?.headers).get('authorization') ?? '')?.[1]);
    expect(nonces[0]).toMatch(/^[0-9A-F]{32}$/);
    expect(nonces[0]).not.toBe(nonces[1]);
  });
});

describe('WeChat Pay order query', () => {
  const queried = (fields: Record<string, unknown> = {}) => {
    const { payer: _payer, promotion_detail: _promotions, ...tx } = transaction(fields);
    return tx;
  };

  it.each([
    ['SUCCESS', 'paid'],
    ['REFUND', 'paid'],
    ['NOTPAY', 'pending'],
    ['USERPAYING', 'pending'],
    ['CLOSED', 'closed'],
    ['REVOKED', 'closed'],
    ['PAYERROR', 'closed'],
  ] as const)('maps trade_state %s to %s', async (tradeState, status) => {
    const f = fakeFetch(() => platformAnswer(200, queried({ trade_state: tradeState })));
    await expect(gateway({ fetch: f.fn }).queryPayment('R20240602003005A1B2')).resolves.toEqual({ status, amount: 1_000_000, gatewayTradeNo: '4200002024060212345678901234' });
    const call = f.calls[0]!;
    expect(call.init?.method).toBe('GET');
    expect(call.url.toString()).toBe('https://api.mch.weixin.qq.com/v3/pay/transactions/out-trade-no/R20240602003005A1B2?mchid=1230000109');
    expect(call.init?.body).toBeUndefined();
    checkAuthorization(call, ''); // the signed path includes ?mchid=
  });

  it('answers for an unpaid order without a transaction id', async () => {
    const { transaction_id: _id, ...tx } = queried({ trade_state: 'NOTPAY', amount: { total: 10000, currency: 'CNY' } });
    const f = fakeFetch(() => platformAnswer(200, tx));
    await expect(gateway({ fetch: f.fn }).queryPayment('R20240602003005A1B2')).resolves.toEqual({ status: 'pending', amount: 1_000_000, gatewayTradeNo: undefined });
  });

  it('answers not_found for a signed 404 ORDER_NOT_EXIST, and only for a signed one', async () => {
    const notFound = { code: 'ORDER_NOT_EXIST', message: '订单不存在' };
    const f = fakeFetch(() => platformAnswer(404, notFound));
    await expect(gateway({ fetch: f.fn }).queryPayment('R1')).resolves.toEqual({ status: 'not_found' });
    const unsigned = fakeFetch(() => platformAnswer(404, notFound, null));
    await expect(gateway({ fetch: unsigned.fn }).queryPayment('R1')).rejects.toThrow(/ORDER_NOT_EXIST without a valid signature/);
    const forged = fakeFetch(() => platformAnswer(404, notFound, { key: forger.privateKey }));
    await expect(gateway({ fetch: forged.fn }).queryPayment('R1')).rejects.toThrow(/ORDER_NOT_EXIST without a valid signature/);
  });

  it('encodes the order number in the path it signs', async () => {
    const f = fakeFetch(() => platformAnswer(404, { code: 'ORDER_NOT_EXIST', message: '订单不存在' }));
    await gateway({ fetch: f.fn }).queryPayment('R 1/2');
    expect(f.calls[0]!.url.pathname).toBe('/v3/pay/transactions/out-trade-no/R%201%2F2');
    checkAuthorization(f.calls[0]!, '');
  });

  it('refuses a forged paid answer and answers about another order, merchant or app', async () => {
    const forged = fakeFetch(() => platformAnswer(200, queried(), { key: forger.privateKey }));
    await expect(gateway({ fetch: forged.fn }).queryPayment('R20240602003005A1B2')).rejects.toThrow(/bad signature/);
    for (const [fields, reason] of [
      [{ out_trade_no: 'R-OTHER' }, /another order/],
      [{ mchid: '1900000001' }, /another merchant/],
      [{ appid: 'wx0000000000000000' }, /another appid/],
      [{ trade_state: 'WHATEVER' }, /unknown trade_state/],
      [{ amount: { total: 100.5, currency: 'CNY' } }, /malformed amount.total/],
    ] as const) {
      const f = fakeFetch(() => platformAnswer(200, queried(fields)));
      await expect(gateway({ fetch: f.fn }).queryPayment('R20240602003005A1B2')).rejects.toThrow(reason);
    }
  });

  it('throws other refusals with their message', async () => {
    const f = fakeFetch(() => platformAnswer(429, { code: 'FREQUENCY_LIMITED', message: '频率超限' }));
    await expect(gateway({ fetch: f.fn }).queryPayment('R1')).rejects.toThrow(/频率超限 \(FREQUENCY_LIMITED\)/);
  });
});

describe('WeChat Pay notification', () => {
  it('accepts, decrypts and decodes a genuine payment notification', async () => {
    const notify = await accepted(gateway(), notification());
    expect(notify).toEqual({
      outTradeNo: 'R20240602003005A1B2',
      amount: 1_000_000,
      gatewayTradeNo: '4200002024060212345678901234',
      status: 'paid',
      raw: expect.objectContaining({ trade_state: 'SUCCESS', success_time: '2024-06-02T00:30:59+08:00', payer: { openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' } }),
    });
  });

  it('reads header names in any case', async () => {
    const n = notification();
    const lower = Object.fromEntries(Object.entries(n.headers).map(([k, v]) => [k.toLowerCase(), v]));
    await expect(accepted(gateway(), { ...n, headers: lower })).resolves.toMatchObject({ status: 'paid' });
  });

  it.each([
    ['SUCCESS', 'paid'],
    ['CLOSED', 'failed'],
    ['PAYERROR', 'failed'],
    ['REVOKED', 'failed'],
    ['NOTPAY', 'pending'],
    ['USERPAYING', 'pending'],
  ] as const)('maps trade_state %s to %s', async (tradeState, status) => {
    expect((await accepted(gateway(), notification(transaction({ trade_state: tradeState })))).status).toBe(status);
  });

  it('refuses a body changed after signing (a raised amount in the envelope, a swapped resource)', async () => {
    const n = notification(transaction({ amount: { total: 1, currency: 'CNY' } }));
    const richer = notification();
    // A genuine resource for ¥100 spliced into the signed envelope of a ¥0.01 one.
    const spliced = JSON.stringify({ ...(JSON.parse(n.rawBody) as object), resource: (JSON.parse(richer.rawBody) as { resource: unknown }).resource });
    expect(await refused(gateway(), { ...n, rawBody: spliced })).toBe('bad signature');
    expect(await refused(gateway(), { ...n, rawBody: n.rawBody.replace('支付成功', '支付成功 ') })).toBe('bad signature');
    expect(await refused(gateway(), { ...n, rawBody: `${n.rawBody}\n` })).toBe('bad signature');
  });

  it('refuses a notification signed by another key', async () => {
    expect(await refused(gateway(), notification(transaction(), { signing: { key: forger.privateKey } }))).toBe('bad signature');
    expect(await refused(gateway(), notification(transaction(), { signing: { key: merchant.privateKey } }))).toBe('bad signature');
  });

  it("refuses WeChat Pay's deliberate WECHATPAY/SIGNTEST probe", async () => {
    const reason = await refused(gateway(), notification(transaction(), { signing: { signature: 'WECHATPAY/SIGNTEST/fUz1IjfKoKkC3i2ZWKRbvqVLT6UIr4WSpcTrzhI0mRrsiZfTsY6hf0WsaIMv3cyVK2YDlEjFeX3UdDE9ZoHaQ6UkUdO0gPVyEoA4d/zc+dhpV6ZdhTWP63O0wHaBeqrTmzKV+e4K4gOcXDEy8nNhcnT4CmWg6DCTBvbJVoBDpD3Lqi8vr2b/I6wyNSQ3WPdqn91kwv/aHlWIXNWhwkq5afIr+LMXPBV28U5JzgHldD8OXfB3Wlhy5y8W9ENvoBqnLMZjFp0qBdXcqMHTR6jyQEulQaw/hdV4BRs5DaUbqaGvKMqrtEn0a9mWWRKdhcN6O3xR1Tf7gK1+KjnQH/2frQ==' } }));
    expect(reason).toMatch(/SIGNTEST probe/);
  });

  it('refuses a notification without the signature headers, or naming another key', async () => {
    const n = notification();
    for (const header of ['Wechatpay-Timestamp', 'Wechatpay-Nonce', 'Wechatpay-Signature', 'Wechatpay-Serial']) {
      const headers = { ...n.headers };
      delete headers[header];
      expect(await refused(gateway(), { ...n, headers })).toMatch(/^missing Wechatpay-/);
    }
    expect(await refused(gateway(), notification(transaction(), { signing: { serial: '5157F09EFDC096DE15EBE81A47057A7232F34215' } }))).toBe('unknown Wechatpay-Serial 5157F09EFDC096DE15EBE81A47057A7232F34215');
  });

  it('refuses a genuine notification replayed more than 5 minutes later (or dated ahead)', async () => {
    expect(await refused(gateway(), notification(transaction(), { signing: { timestamp: NOW_S - 301 } }))).toBe('stale Wechatpay-Timestamp (301 s from now)');
    expect(await refused(gateway(), notification(transaction(), { signing: { timestamp: NOW_S + 400 } }))).toMatch(/^stale/);
    await expect(accepted(gateway(), notification(transaction(), { signing: { timestamp: NOW_S - 299 } }))).resolves.toMatchObject({ status: 'paid' });
    // The same genuine message, received in time and replayed ten minutes later.
    const n = notification();
    await expect(accepted(gateway(), n)).resolves.toMatchObject({ status: 'paid' });
    const later = gateway({ clock: () => new Date(NOW.getTime() + 10 * 60_000) });
    expect(await refused(later, n)).toMatch(/^stale/);
    expect(await refused(gateway(), notification(transaction(), { signing: { timestamp: '1717259405.5' } }))).toMatch(/malformed Wechatpay-Timestamp/);
  });

  it('refuses a signed notification whose resource does not authenticate (bad GCM tag, wrong key)', async () => {
    // WeChat Pay's signature is fine; the resource was sealed with another APIv3 key.
    expect(await refused(gateway(), notification(transaction(), { encrypt: { key: 'ffffffffffffffffffffffffffffffff' } }))).toMatch(/decryption failed/);
    // A flipped tag byte, re-signed so that only the GCM check can catch it.
    const genuine = JSON.parse(notification().rawBody) as { resource: { ciphertext: string } };
    const bytes = Buffer.from(genuine.resource.ciphertext, 'base64');
    bytes[bytes.length - 1]! ^= 0x80;
    const body = JSON.stringify({ ...genuine, resource: { ...genuine.resource, ciphertext: bytes.toString('base64') } });
    expect(await refused(gateway(), { headers: platformHeaders(body), rawBody: body })).toBe('resource decryption failed (GCM tag does not authenticate)');
  });

  it('refuses a genuine notification for another merchant or app', async () => {
    expect(await refused(gateway(), notification(transaction({ mchid: '1900000001' })))).toBe('mchid mismatch (1900000001)');
    expect(await refused(gateway(), notification(transaction({ appid: 'wx0000000000000000' })))).toBe('appid mismatch (wx0000000000000000)');
    const { mchid: _m, ...noMchid } = transaction();
    expect(await refused(gateway(), notification(noMchid))).toBe('mchid mismatch (missing)');
  });

  it.each([
    [{ total: 100.5, currency: 'CNY' }, /malformed amount.total 100.5/],
    [{ total: '10000', currency: 'CNY' }, /malformed amount.total "10000"/],
    [{ total: -1, currency: 'CNY' }, /malformed amount.total -1/],
    [{ currency: 'CNY' }, /malformed amount.total null/],
    [{ total: 10000, currency: 'USD' }, /unexpected currency USD/],
  ])('refuses a signed notification with amount %j', async (amount, reason) => {
    expect(await refused(gateway(), notification(transaction({ amount })))).toMatch(reason);
  });

  it('refuses unknown events, a transaction dressed as a refund, other algorithms and undecodable contents', async () => {
    expect(await refused(gateway(), notification(transaction(), { envelope: { event_type: 'MCHTRANSFER.BILL.FINISHED' } }))).toBe('not a payment or refund notification (event_type MCHTRANSFER.BILL.FINISHED)');
    expect(await refused(gateway(), notification(transaction(), { envelope: { event_type: 'REFUND.SUCCESS' } }))).toBe('missing out_trade_no or out_refund_no');
    const n = notification();
    const envelope = JSON.parse(n.rawBody) as { resource: Record<string, unknown> };
    const other = JSON.stringify({ ...envelope, resource: { ...envelope.resource, algorithm: 'AEAD_SM4_GCM' } });
    expect(await refused(gateway(), { headers: platformHeaders(other), rawBody: other })).toBe('unsupported resource algorithm AEAD_SM4_GCM');
    expect(await refused(gateway(), notification('not json'))).toBe('decrypted resource is not JSON');
    expect(await refused(gateway(), notification(transaction({ trade_state: 'PAID' })))).toBe('unknown trade_state PAID');
    expect(await refused(gateway(), notification(transaction({ out_trade_no: '' })))).toBe('missing out_trade_no');
    expect(await refused(gateway(), notification(transaction({ transaction_id: undefined })))).toBe('missing transaction_id');
    const notJson = 'hello';
    expect(await refused(gateway(), { headers: platformHeaders(notJson), rawBody: notJson })).toBe('body is not JSON');
    const noResource = '{"id":"EV-1","event_type":"TRANSACTION.SUCCESS"}';
    expect(await refused(gateway(), { headers: platformHeaders(noResource), rawBody: noResource })).toBe('no resource in the notification');
  });

  it('never throws, whatever arrives', async () => {
    const g = gateway();
    for (const req of [
      { headers: {}, rawBody: '' },
      { headers: platformHeaders('x', { signature: '!!!' }), rawBody: 'x' },
      { headers: platformHeaders('', { timestamp: 'abc' }), rawBody: '' },
      { headers: {}, rawBody: undefined as unknown as string },
    ]) {
      expect((await g.verifyNotify(req)).ok).toBe(false);
    }
  });

  it('acknowledges with 204 and refuses with a 4xx FAIL body (WeChat Pay retries on 4xx or 5xx), never a 500', () => {
    const g = gateway();
    expect(g.notifyAck(true)).toEqual({ status: 204, contentType: 'text/plain', body: '' });
    const refusal = g.notifyAck(false);
    expect(refusal.status).toBe(400);
    expect(refusal.contentType).toBe('application/json');
    expect(JSON.parse(refusal.body)).toEqual({ code: 'FAIL', message: '失败' });
  });
});
