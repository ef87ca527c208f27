import crypto from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { alipayTime, createAlipayGateway, type AlipayOptions, loadRsaKey, parseAlipayForm } from './alipay.ts';
import { PaymentGatewayError, type PaymentGateway, type VerifiedNotify } from './port.ts';

// Two parties, as in production: the merchant application's key pair (we sign, Alipay verifies)
// and Alipay's key pair (Alipay signs answers and notifications, we verify). A third key plays
// a forger who knows the protocol but not Alipay's private key.
const rsa = () => crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const merchant = rsa();
const alipay = rsa();
const forger = rsa();
const pem = (k: crypto.KeyObject, type: 'pkcs8' | 'pkcs1' | 'spki') => k.export({ type, format: 'pem' }).toString();

// Alipay's documented canonical strings, written out here independently of the SDK the adapter uses.
/** Request content: every parameter but `sign` with a non-empty value, sorted by name, raw `k=v` joined with `&`. */
const alipaySignContent = (params: Record<string, string>) =>
  Object.keys(params)
    .filter((k) => k !== 'sign' && params[k] !== '')
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');
/** Notification content: every parameter but `sign` and `sign_type` (empty values kept unless dropEmpty). */
const alipayNotifyContent = (params: Record<string, string>, dropEmpty = false) =>
  Object.keys(params)
    .filter((k) => k !== 'sign' && k !== 'sign_type' && !(dropEmpty && params[k] === ''))
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');

const sign = (content: string, key: crypto.KeyObject = alipay.privateKey) => crypto.sign('sha256', Buffer.from(content, 'utf8'), key).toString('base64');
const verifies = (content: string, signature: string, key: crypto.KeyObject) => crypto.verify('sha256', Buffer.from(content, 'utf8'), key, Buffer.from(signature, 'base64'));

const APP_ID = '2021004100000001';
const SELLER_ID = '2088102119685838';
// 2024-06-01 16:30:05 UTC is 2024-06-02 00:30:05 in Beijing: the date rolls over, so a
// timestamp in UTC or machine time can't pass for Beijing time.
const NOW = new Date('2024-06-01T16:30:05.123Z');

type Call = { url: string; init: RequestInit | undefined };

function fakeFetch(answer: (call: Call) => Response | Promise<Response>) {
  const calls: Call[] = [];
  const fn: typeof fetch = async (input, init) => {
    const call = { url: input instanceof Request ? input.url : input.toString(), init };
    calls.push(call);
    return answer(call);
  };
  return { fn, calls };
}

const noFetch: typeof fetch = async () => {
  throw new Error('no HTTP call expected');
};

function gateway(overrides: Partial<AlipayOptions> = {}): PaymentGateway {
  return createAlipayGateway({
    appId: APP_ID,
    privateKeyPem: pem(merchant.privateKey, 'pkcs8'),
    alipayPublicKeyPem: pem(alipay.publicKey, 'spki'),
    sellerId: SELLER_ID,
    mode: 'qr',
    fetch: noFetch,
    clock: () => NOW,
    ...overrides,
  });
}

const order = {
  outTradeNo: 'R20240602003005A1B2',
  amount: 1_000_000, // ¥100.00
  subject: '算力 余额充值',
  notifyUrl: 'https://console.example.com/api/v1/payments/notify/alipay',
  returnUrl: 'https://console.example.com/recharge/success?no=R20240602003005A1B2',
  expiresAt: new Date('2024-06-01T16:45:05.000Z'),
};

/** A gateway answer as Alipay sends it: the node text verbatim, signed by `key`. */
function alipayAnswer(nodeName: string, nodeText: string, key: crypto.KeyObject | null = alipay.privateKey) {
  const signature = key ? `,"sign":${JSON.stringify(sign(nodeText, key))}` : '';
  return new Response(`{"${nodeName}":${nodeText}${signature}}`, { status: 200, headers: { 'content-type': 'text/html;charset=utf-8' } });
}

/** The form the gateway received, with query-string and body parameters merged. */
function sentParams(call: Call): Record<string, string> {
  const url = new URL(call.url);
  return { ...Object.fromEntries(url.searchParams), ...Object.fromEntries(new URLSearchParams(String(call.init?.body ?? ''))) };
}

function expectMerchantSignature(params: Record<string, string>) {
  const { sign: signature, ...rest } = params;
  expect(signature).toBeTruthy();
  expect(verifies(alipaySignContent(rest), signature!, merchant.publicKey)).toBe(true);
}

describe('Alipay signing primitives', () => {
  it("builds the canonical string of Alipay's documentation example (sorted, raw values, sign left out)", () => {
    // The worked example of "自行实现签名" (alipay.mobile.public.menu.add).
    const biz =
      '{"button":[{"actionParam":"ZFB_HFCZ","actionType":"out","name":"话费充值"},{"name":"查询","subButton":[{"actionParam":"ZFB_YECX","actionType":"out","name":"余额查询"},{"actionParam":"ZFB_LLCX","actionType":"out","name":"流量查询"},{"actionParam":"ZFB_HFCX","actionType":"out","name":"话费查询"}]},{"actionParam":"http://m.alipay.com","actionType":"link","name":"最新优惠"}]}';
    const params = {
      method: 'alipay.mobile.public.menu.add',
      charset: 'GBK',
      sign_type: 'RSA2',
      timestamp: '2014-07-24 03:07:50',
      biz_content: biz,
      sign: 'whatever-was-there-before',
      app_id: '2014072300007148',
      version: '1.0',
    };
    expect(alipaySignContent(params)).toBe(
      `app_id=2014072300007148&biz_content=${biz}&charset=GBK&method=alipay.mobile.public.menu.add&sign_type=RSA2&timestamp=2014-07-24 03:07:50&version=1.0`,
    );
  });

  it('leaves empty values out of request content, and sign and sign_type out of notify content', () => {
    expect(alipaySignContent({ b: '2', a: '1', empty: '', sign: 'x' })).toBe('a=1&b=2');
    expect(alipayNotifyContent({ b: '2', a: '1', sign: 'x', sign_type: 'RSA2', empty: '' })).toBe('a=1&b=2&empty=');
    expect(alipayNotifyContent({ b: '2', a: '1', empty: '' }, true)).toBe('a=1&b=2');
    // ASCII order: upper case before lower case, '_' between them.
    expect(alipaySignContent({ b: '1', B: '2', a_b: '3', ab: '4' })).toBe('B=2&a_b=3&ab=4&b=1');
  });

  describe('timestamps in Beijing time', () => {
    const savedTz = process.env.TZ;
    afterEach(() => {
      if (savedTz === undefined) delete process.env.TZ;
      else process.env.TZ = savedTz;
    });

    it.each(['UTC', 'America/Los_Angeles', 'Asia/Kolkata', 'Asia/Shanghai'])('formats the same instant identically on a machine in %s', (tz) => {
      process.env.TZ = tz;
      expect(alipayTime(NOW)).toBe('2024-06-02 00:30:05');
      expect(alipayTime(new Date('2024-12-31T16:00:00Z'))).toBe('2025-01-01 00:00:00');
    });

    it('refuses an invalid date', () => {
      expect(() => alipayTime(new Date('nope'))).toThrow(RangeError);
    });
  });

  it('reads keys in every form the Alipay console and openssl hand out', () => {
    const bare = (k: crypto.KeyObject, type: 'pkcs8' | 'pkcs1' | 'spki') => k.export({ type, format: 'der' }).toString('base64');
    for (const material of [pem(merchant.privateKey, 'pkcs8'), pem(merchant.privateKey, 'pkcs1'), bare(merchant.privateKey, 'pkcs8'), bare(merchant.privateKey, 'pkcs1')]) {
      const key = loadRsaKey(material, 'private', 'test');
      expect(verifies('x', crypto.sign('sha256', Buffer.from('x'), key).toString('base64'), merchant.publicKey)).toBe(true);
    }
    for (const material of [pem(alipay.publicKey, 'spki'), pem(alipay.publicKey, 'pkcs1'), bare(alipay.publicKey, 'spki')]) {
      expect(loadRsaKey(material, 'public', 'test').export({ type: 'spki', format: 'der' })).toEqual(alipay.publicKey.export({ type: 'spki', format: 'der' }));
    }
  });

  it('refuses unusable keys when the gateway is configured, not at the first payment', () => {
    expect(() => gateway({ alipayPublicKeyPem: pem(alipay.privateKey, 'pkcs8') })).toThrow(/private key; a public key is expected/);
    expect(() => gateway({ privateKeyPem: 'not a key' })).toThrow(/Alipay application private key: not a readable RSA private key/);
    expect(() => gateway({ alipayPublicKeyPem: 'MIIBIjANBgkq' })).toThrow(/Alipay public key/);
    const ec = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    expect(() => gateway({ privateKeyPem: pem(ec.privateKey, 'pkcs8') })).toThrow(/expected an RSA key/);
  });
});

describe('Alipay page pay', () => {
  it('builds a gateway URL signed with the merchant key over the documented canonical string', async () => {
    const result = await gateway({ mode: 'page' }).createPayment(order);
    expect(result.qrCode).toBeUndefined();
    const url = new URL(result.payUrl!);
    expect(url.origin + url.pathname).toBe('https://openapi.alipay.com/gateway.do');

    const params = Object.fromEntries(url.searchParams);
    const biz = JSON.stringify({
      out_trade_no: 'R20240602003005A1B2',
      total_amount: '100.00',
      subject: '算力 余额充值',
      time_expire: '2024-06-02 00:45:05',
      product_code: 'FAST_INSTANT_TRADE_PAY',
    });
    expect(params).toEqual({
      app_id: APP_ID,
      method: 'alipay.trade.page.pay',
      format: 'JSON',
      charset: 'utf-8',
      sign_type: 'RSA2',
      timestamp: '2024-06-02 00:30:05',
      version: '1.0',
      notify_url: order.notifyUrl,
      return_url: order.returnUrl,
      biz_content: biz,
      sign: expect.any(String),
    });
    // Written out by hand rather than with alipaySignContent, so a bug there can't hide here.
    const canonical =
      `app_id=${APP_ID}&biz_content=${biz}&charset=utf-8&format=JSON&method=alipay.trade.page.pay` +
      `&notify_url=${order.notifyUrl}&return_url=${order.returnUrl}&sign_type=RSA2&timestamp=2024-06-02 00:30:05&version=1.0`;
    expect(verifies(canonical, params.sign!, merchant.publicKey)).toBe(true);
    expect(verifies(canonical, params.sign!, forger.publicKey)).toBe(false);
    // Spaces travel as %20 and every reserved character is escaped, so nothing is decoded twice.
    expect(result.payUrl).toContain('timestamp=2024-06-02%2000%3A30%3A05');
    expect(result.payUrl).not.toMatch(/[+ ]/);
  });

  it('signs with a PKCS#1 key as well and keeps a custom gateway URL with its own query', async () => {
    const sandbox = 'https://openapi-sandbox.dl.alipaydev.com/gateway.do?charset=utf-8';
    const { payUrl } = await gateway({ mode: 'page', privateKeyPem: pem(merchant.privateKey, 'pkcs1'), gatewayUrl: sandbox }).createPayment(order);
    expect(payUrl!.startsWith(`${sandbox}&`)).toBe(true);
    const params = Object.fromEntries(new URL(payUrl!).searchParams);
    expectMerchantSignature(params);
  });

  it('refuses amounts a gateway cannot charge', async () => {
    const g = gateway({ mode: 'page' });
    await expect(g.createPayment({ ...order, amount: 1_000_050 })).rejects.toThrow(/whole number of fen/);
    await expect(g.createPayment({ ...order, amount: 0 })).rejects.toThrow(/positive/);
    await expect(g.createPayment({ ...order, amount: -100 })).rejects.toThrow(RangeError);
  });
});

describe('Alipay QR pre-create', () => {
  const precreateOk = '{"code":"10000","msg":"Success","out_trade_no":"R20240602003005A1B2","qr_code":"https://qr.alipay.com/bax03431ljhokirwl38f00a7"}';

  it('posts a signed alipay.trade.precreate and returns the verified qr_code', async () => {
    const f = fakeFetch(() => alipayAnswer('alipay_trade_precreate_response', precreateOk));
    const result = await gateway({ fetch: f.fn }).createPayment({ ...order, clientIp: '203.0.113.9' });
    expect(result).toEqual({ qrCode: 'https://qr.alipay.com/bax03431ljhokirwl38f00a7' });

    expect(f.calls).toHaveLength(1);
    const call = f.calls[0]!;
    expect(call.url).toBe('https://openapi.alipay.com/gateway.do');
    expect(call.init?.method).toBe('POST');
    expect(new Headers(call.init?.headers).get('content-type')).toMatch(/^application\/x-www-form-urlencoded/);
    const params = sentParams(call);
    expect(params).toMatchObject({ app_id: APP_ID, method: 'alipay.trade.precreate', charset: 'utf-8', sign_type: 'RSA2', timestamp: '2024-06-02 00:30:05', notify_url: order.notifyUrl });
    expect(params.return_url).toBeUndefined();
    expect(JSON.parse(params.biz_content!)).toEqual({ out_trade_no: order.outTradeNo, total_amount: '100.00', subject: order.subject, time_expire: '2024-06-02 00:45:05' });
    expectMerchantSignature(params);
  });

  it('verifies the node text exactly as sent (spacing, escapes, member order), not a re-serialization', async () => {
    const node = '{ "code" : "10000", "msg":"Success",\n "qr_code":"https:\\/\\/qr.alipay.com\\/bax0\\u0031", "out_trade_no":"R20240602003005A1B2" }';
    const f = fakeFetch(() => new Response(`{"alipay_trade_precreate_response":${node},\n"sign":${JSON.stringify(sign(node))}}`));
    await expect(gateway({ fetch: f.fn }).createPayment(order)).resolves.toEqual({ qrCode: 'https://qr.alipay.com/bax01' });
  });

  it("accepts a node whose '/' Alipay escaped after signing the unescaped text, like its SDKs do", async () => {
    const signed = '{"code":"10000","msg":"Success","out_trade_no":"R20240602003005A1B2","qr_code":"https://qr.alipay.com/bax1"}';
    const sent = signed.replaceAll('/', '\\/');
    const f = fakeFetch(() => new Response(`{"alipay_trade_precreate_response":${sent},"sign":${JSON.stringify(sign(signed))}}`));
    await expect(gateway({ fetch: f.fn }).createPayment(order)).resolves.toEqual({ qrCode: 'https://qr.alipay.com/bax1' });
  });

  it('throws when the answer is signed by another key', async () => {
    const f = fakeFetch(() => alipayAnswer('alipay_trade_precreate_response', precreateOk, forger.privateKey));
    const err = await gateway({ fetch: f.fn }).createPayment(order).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaymentGatewayError);
    expect((err as PaymentGatewayError).message).toMatch(/signature does not verify/);
  });

  it('throws when the QR code was swapped after signing', async () => {
    const f = fakeFetch(() => {
      const tampered = precreateOk.replace('bax03431ljhokirwl38f00a7', 'attacker0000000000000000');
      return new Response(`{"alipay_trade_precreate_response":${tampered},"sign":${JSON.stringify(sign(precreateOk))}}`);
    });
    await expect(gateway({ fetch: f.fn }).createPayment(order)).rejects.toThrow(/signature does not verify/);
  });

  it('throws on an unsigned success answer', async () => {
    const f = fakeFetch(() => alipayAnswer('alipay_trade_precreate_response', precreateOk, null));
    await expect(gateway({ fetch: f.fn }).createPayment(order)).rejects.toThrow(/success without a signature/);
  });

  it('takes the top-level sign after the node, whatever the node nests', async () => {
    // Members named "sign" inside the node: only the top-level member after it counts.
    const node = '{"code":"10000","msg":"Success","out_trade_no":"R20240602003005A1B2","qr_code":"https://qr.alipay.com/x","ext":{"sign":"inner"},"note":"\\",\\"sign\\":\\"y"}';
    const f = fakeFetch(() => new Response(`{"alipay_trade_precreate_response":${node},"sign":${JSON.stringify(sign(node))}}`));
    await expect(gateway({ fetch: f.fn }).createPayment(order)).resolves.toEqual({ qrCode: 'https://qr.alipay.com/x' });
  });

  it("throws Alipay's sub_msg for a signed business error", async () => {
    const node = '{"code":"40004","msg":"Business Failed","sub_code":"ACQ.TOTAL_FEE_EXCEED","sub_msg":"订单金额超过限额"}';
    const f = fakeFetch(() => alipayAnswer('alipay_trade_precreate_response', node));
    const err = await gateway({ fetch: f.fn }).createPayment(order).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaymentGatewayError);
    expect((err as PaymentGatewayError).message).toContain('订单金额超过限额');
    expect((err as PaymentGatewayError).code).toBe('ACQ.TOTAL_FEE_EXCEED');
  });

  it('throws the error of an unsigned error_response (Alipay could not identify the app)', async () => {
    const node = '{"code":"40002","msg":"Invalid Arguments","sub_code":"isv.invalid-app-id","sub_msg":"无效的AppID参数"}';
    const f = fakeFetch(() => alipayAnswer('error_response', node, null));
    await expect(gateway({ fetch: f.fn }).createPayment(order)).rejects.toThrow(/无效的AppID参数 \(isv\.invalid-app-id\) \(unsigned answer\)/);
  });

  it('throws when a signed answer is about another order', async () => {
    const f = fakeFetch(() => alipayAnswer('alipay_trade_precreate_response', precreateOk.replace('R20240602003005A1B2', 'R-OTHER')));
    await expect(gateway({ fetch: f.fn }).createPayment(order)).rejects.toThrow(/another order/);
  });

  it('throws on HTTP errors, non-JSON answers and network failures', async () => {
    await expect(gateway({ fetch: fakeFetch(() => new Response('busy', { status: 502 })).fn }).createPayment(order)).rejects.toThrow(/HTTP 502/);
    await expect(gateway({ fetch: fakeFetch(() => new Response('<html>')).fn }).createPayment(order)).rejects.toThrow(/not JSON/);
    await expect(gateway({ fetch: fakeFetch(() => new Response('{"other":1}')).fn }).createPayment(order)).rejects.toThrow(/no alipay_trade_precreate_response/);
    const down = fakeFetch(() => {
      throw new TypeError('fetch failed');
    });
    await expect(gateway({ fetch: down.fn }).createPayment(order)).rejects.toThrow(/Alipay unreachable: fetch failed/);
  });

  it('gives up on a gateway that never answers', async () => {
    const hanging: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
      });
    await expect(gateway({ fetch: hanging, timeoutMs: 20 }).createPayment(order)).rejects.toThrow(PaymentGatewayError);
  });
});

describe('Alipay trade query', () => {
  const queryNode = (fields: Record<string, string>) =>
    JSON.stringify({ code: '10000', msg: 'Success', buyer_logon_id: '159****5620', out_trade_no: 'R1', trade_no: '2024060222001400001234567890', total_amount: '100.00', ...fields });

  it.each([
    ['TRADE_SUCCESS', 'paid'],
    ['TRADE_FINISHED', 'paid'],
    ['WAIT_BUYER_PAY', 'pending'],
    ['TRADE_CLOSED', 'closed'],
  ] as const)('maps %s to %s', async (tradeStatus, status) => {
    const f = fakeFetch(() => alipayAnswer('alipay_trade_query_response', queryNode({ trade_status: tradeStatus })));
    await expect(gateway({ fetch: f.fn }).queryPayment('R1')).resolves.toEqual({ status, amount: 1_000_000, gatewayTradeNo: '2024060222001400001234567890' });
    const params = sentParams(f.calls[0]!);
    expect(params.method).toBe('alipay.trade.query');
    expect(JSON.parse(params.biz_content!)).toEqual({ out_trade_no: 'R1' });
    expectMerchantSignature(params);
  });

  it('answers not_found for a signed ACQ.TRADE_NOT_EXIST (a page-pay order never opened)', async () => {
    const node = '{"code":"40004","msg":"Business Failed","sub_code":"ACQ.TRADE_NOT_EXIST","sub_msg":"交易不存在","buyer_pay_amount":"0.00","invoice_amount":"0.00","out_trade_no":"R1","point_amount":"0.00","receipt_amount":"0.00"}';
    const f = fakeFetch(() => alipayAnswer('alipay_trade_query_response', node));
    await expect(gateway({ fetch: f.fn }).queryPayment('R1')).resolves.toEqual({ status: 'not_found' });
  });

  it('does not take "not found" from a forged answer', async () => {
    const node = '{"code":"40004","msg":"Business Failed","sub_code":"ACQ.TRADE_NOT_EXIST","sub_msg":"交易不存在"}';
    const forged = fakeFetch(() => alipayAnswer('alipay_trade_query_response', node, forger.privateKey));
    await expect(gateway({ fetch: forged.fn }).queryPayment('R1')).rejects.toThrow(/signature does not verify/);
    const unsigned = fakeFetch(() => alipayAnswer('alipay_trade_query_response', node, null));
    await expect(gateway({ fetch: unsigned.fn }).queryPayment('R1')).rejects.toThrow(/交易不存在/);
  });

  it('throws on a forged paid answer, an unknown status, a malformed amount or another order', async () => {
    const forged = fakeFetch(() => alipayAnswer('alipay_trade_query_response', queryNode({ trade_status: 'TRADE_SUCCESS' }), forger.privateKey));
    await expect(gateway({ fetch: forged.fn }).queryPayment('R1')).rejects.toThrow(/signature does not verify/);
    const unknown = fakeFetch(() => alipayAnswer('alipay_trade_query_response', queryNode({ trade_status: 'TRADE_PENDING' })));
    await expect(gateway({ fetch: unknown.fn }).queryPayment('R1')).rejects.toThrow(/unknown trade_status TRADE_PENDING/);
    const amount = fakeFetch(() => alipayAnswer('alipay_trade_query_response', queryNode({ trade_status: 'TRADE_SUCCESS', total_amount: '100.0001' })));
    await expect(gateway({ fetch: amount.fn }).queryPayment('R1')).rejects.toThrow(/malformed total_amount/);
    const other = fakeFetch(() => alipayAnswer('alipay_trade_query_response', queryNode({ trade_status: 'TRADE_SUCCESS', out_trade_no: 'R2' })));
    await expect(gateway({ fetch: other.fn }).queryPayment('R1')).rejects.toThrow(/another order/);
  });

  it('throws other errors with their sub_msg', async () => {
    const node = '{"code":"20000","msg":"Service Currently Unavailable","sub_code":"isp.unknow-error","sub_msg":"系统繁忙"}';
    const f = fakeFetch(() => alipayAnswer('alipay_trade_query_response', node));
    await expect(gateway({ fetch: f.fn }).queryPayment('R1')).rejects.toThrow(/系统繁忙 \(isp\.unknow-error\)/);
  });
});

describe('Alipay asynchronous notification', () => {
  // The parameters of the documented notification example (异步通知参数), for our order.
  const documented = (): Record<string, string> => ({
    gmt_create: '2024-06-02 00:30:40',
    charset: 'utf-8',
    seller_email: 'zhuzhanghu@alitest.com',
    subject: '算力 余额充值',
    buyer_id: '2088102122524333',
    invoice_amount: '100.00',
    notify_id: '2024060200222003040037671441234567',
    fund_bill_list: '[{"amount":"100.00","fundChannel":"ALIPAYACCOUNT"}]',
    notify_type: 'trade_status_sync',
    trade_status: 'TRADE_SUCCESS',
    receipt_amount: '100.00',
    app_id: APP_ID,
    buyer_pay_amount: '100.00',
    sign_type: 'RSA2',
    seller_id: SELLER_ID,
    gmt_payment: '2024-06-02 00:30:59',
    notify_time: '2024-06-02 00:31:03',
    version: '1.0',
    out_trade_no: 'R20240602003005A1B2',
    total_amount: '100.00',
    trade_no: '2024060222001424331407654321',
    auth_app_id: APP_ID,
    buyer_logon_id: 'csq***@sandbox.com',
    point_amount: '0.00',
  });

  /** Signs like Alipay (all but sign and sign_type, sorted, decoded values) and form-encodes like Java's URLEncoder. */
  function notification(params: Record<string, string>, key: crypto.KeyObject = alipay.privateKey) {
    const content = Object.keys(params)
      .filter((k) => k !== 'sign' && k !== 'sign_type')
      .sort()
      .map((k) => `${k}=${params[k]}`)
      .join('&');
    const signed = { ...params, sign: sign(content, key) };
    return { headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }, rawBody: new URLSearchParams(signed).toString(), signed };
  }

  const accepted = async (g: PaymentGateway, body: { headers: Record<string, string>; rawBody: string }): Promise<VerifiedNotify> => {
    const result = await g.verifyNotify(body);
    if (!result.ok) throw new Error(`refused: ${result.reason}`);
    if (result.kind === 'refund') throw new Error('a refund notification, not a payment');
    return result.notify;
  };

  const refused = async (g: PaymentGateway, body: { headers: Record<string, string>; rawBody: string }): Promise<string> => {
    const result = await g.verifyNotify(body);
    if (result.ok) throw new Error('accepted a notification that must be refused');
    return result.reason;
  };

  it('accepts and decodes a genuine TRADE_SUCCESS notification', async () => {
    const n = notification(documented());
    expect(n.rawBody).toContain('subject=%E7%AE%97%E5%8A%9B+%E4%BD%99%E9%A2%9D%E5%85%85%E5%80%BC'); // '+' for the space, as Alipay sends
    const notify = await accepted(gateway(), n);
    expect(notify).toEqual({
      outTradeNo: 'R20240602003005A1B2',
      amount: 1_000_000,
      gatewayTradeNo: '2024060222001424331407654321',
      status: 'paid',
      raw: expect.objectContaining({ notify_id: '2024060200222003040037671441234567', subject: '算力 余额充值', fund_bill_list: '[{"amount":"100.00","fundChannel":"ALIPAYACCOUNT"}]' }),
    });
  });

  it.each([
    ['TRADE_FINISHED', 'paid'],
    ['TRADE_CLOSED', 'failed'],
    ['WAIT_BUYER_PAY', 'pending'],
  ] as const)('maps trade_status %s to %s', async (tradeStatus, status) => {
    const notify = await accepted(gateway(), notification({ ...documented(), trade_status: tradeStatus }));
    expect(notify.status).toBe(status);
  });

  it('reads amounts exactly', async () => {
    // '0.57', '19.99' and '0.07' come out wrong through `Number(yuan) * 10000`.
    for (const [yuan, units] of [['0.01', 100], ['1.10', 11_000], ['0.57', 5_700], ['19.99', 199_900], ['0.07', 700], ['100000.00', 1_000_000_000]] as const) {
      expect((await accepted(gateway(), notification({ ...documented(), total_amount: yuan }))).amount).toBe(units);
    }
  });

  it('refuses a notification whose amount was raised after signing', async () => {
    const n = notification({ ...documented(), total_amount: '0.01' });
    const tampered = n.rawBody.replace('total_amount=0.01', 'total_amount=100.00');
    expect(tampered).not.toBe(n.rawBody);
    expect(await refused(gateway(), { ...n, rawBody: tampered })).toBe('bad signature');
  });

  it('refuses a notification with any other field changed, added or removed after signing', async () => {
    const n = notification(documented());
    const changed = n.rawBody.replace('out_trade_no=R20240602003005A1B2', 'out_trade_no=R20240602003005A1B3');
    expect(await refused(gateway(), { ...n, rawBody: changed })).toBe('bad signature');
    expect(await refused(gateway(), { ...n, rawBody: `${n.rawBody}&extra=1` })).toBe('bad signature');
    expect(await refused(gateway(), { ...n, rawBody: n.rawBody.replace(/&point_amount=0\.00/, '') })).toBe('bad signature');
  });

  it('refuses a notification signed by another key', async () => {
    expect(await refused(gateway(), notification(documented(), forger.privateKey))).toBe('bad signature');
    // Our own merchant key is not Alipay's either.
    expect(await refused(gateway(), notification(documented(), merchant.privateKey))).toBe('bad signature');
  });

  it('refuses a notification without a sign, with an empty one, or with a garbled one', async () => {
    const n = notification(documented());
    const params = new URLSearchParams(n.rawBody);
    params.delete('sign');
    expect(await refused(gateway(), { ...n, rawBody: params.toString() })).toBe('missing sign');
    params.set('sign', '');
    expect(await refused(gateway(), { ...n, rawBody: params.toString() })).toBe('missing sign');
    params.set('sign', 'WECHATPAY/SIGNTEST/not-base64!');
    expect(await refused(gateway(), { ...n, rawBody: params.toString() })).toBe('bad signature');
  });

  it('refuses a downgrade to sign_type RSA (SHA1)', async () => {
    const n = notification({ ...documented(), sign_type: 'RSA' });
    expect(await refused(gateway(), n)).toMatch(/unsupported sign_type RSA/);
  });

  it('refuses a genuine notification for another app or another seller', async () => {
    expect(await refused(gateway(), notification({ ...documented(), app_id: '2021009999999999' }))).toBe('app_id mismatch (2021009999999999)');
    const withoutAppId = documented();
    delete withoutAppId.app_id;
    expect(await refused(gateway(), notification(withoutAppId))).toBe('app_id mismatch (missing)');
    expect(await refused(gateway(), notification({ ...documented(), seller_id: '2088000000000000' }))).toBe('seller_id mismatch (2088000000000000)');
  });

  it('checks seller_id only when one is configured', async () => {
    const n = notification({ ...documented(), seller_id: '2088000000000000' });
    await expect(accepted(gateway({ sellerId: undefined }), n)).resolves.toMatchObject({ status: 'paid' });
  });

  it.each(['100.001', '1e2', '-100.00', '100,00', ''])('refuses a signed but malformed total_amount %j', async (amount) => {
    expect(await refused(gateway(), notification({ ...documented(), total_amount: amount }))).toMatch(/^malformed total_amount/);
  });

  it('refuses an unknown trade_status and missing order numbers', async () => {
    expect(await refused(gateway(), notification({ ...documented(), trade_status: 'TRADE_PAID' }))).toBe('unknown trade_status TRADE_PAID');
    expect(await refused(gateway(), notification({ ...documented(), out_trade_no: '' }))).toBe('missing out_trade_no');
    expect(await refused(gateway(), notification({ ...documented(), trade_no: '' }))).toBe('missing trade_no');
  });

  it('verifies a notification with an empty parameter under either reading of the rule', async () => {
    const params = { ...documented(), passback_params: '' };
    await expect(accepted(gateway(), notification(params))).resolves.toMatchObject({ status: 'paid' });
    // Signed with empty values dropped, as Alipay's request-side rule reads.
    const content = alipaySignContent(Object.fromEntries(Object.entries(params).filter(([k]) => k !== 'sign_type')));
    const rawBody = new URLSearchParams({ ...params, sign: sign(content) }).toString();
    await expect(accepted(gateway(), { headers: {}, rawBody })).resolves.toMatchObject({ status: 'paid' });
  });

  it('decodes a GBK notification in its own charset before verifying', async () => {
    const params = { ...documented(), charset: 'GBK', subject: '你好' };
    const n = notification(params);
    // Java's URLEncoder in GBK: 你好 = C4E3 BAC3.
    const rawBody = n.rawBody.replace(`subject=${encodeURIComponent('你好')}`, 'subject=%C4%E3%BA%C3');
    expect(rawBody).not.toBe(n.rawBody);
    await expect(accepted(gateway(), { ...n, rawBody })).resolves.toMatchObject({ raw: expect.objectContaining({ subject: '你好' }) });
  });

  it.each([
    ['a repeated parameter', (body: string) => `${body}&total_amount=100.00`, /appears twice/],
    ['a broken percent-escape', (body: string) => `${body}&x=%E4%B`, /bad percent-escape/],
    ['invalid UTF-8', (body: string) => `${body}&x=%FF`, /malformed notification/],
    ['an unknown charset', (body: string) => body.replace('charset=utf-8', 'charset=klingon'), /unsupported charset/],
  ])('refuses %s without throwing', async (_name, mutate, reason) => {
    const n = notification(documented());
    expect(await refused(gateway(), { ...n, rawBody: mutate(n.rawBody) })).toMatch(reason);
  });

  it('never throws, whatever arrives', async () => {
    for (const rawBody of ['', '&&&', '=', 'sign', '{"json":true}', '%', 'sign=%ZZ', 'a=1&a=2']) {
      const result = await gateway().verifyNotify({ headers: {}, rawBody });
      expect(result.ok).toBe(false);
    }
    const result = await gateway().verifyNotify({ headers: {}, rawBody: undefined as unknown as string });
    expect(result).toMatchObject({ ok: false });
  });

  it('parses form bodies the way Alipay encodes them', () => {
    expect(parseAlipayForm('a=1+2&b=%2B%26%3D&c=&d')).toEqual({ a: '1 2', b: '+&=', c: '', d: '' });
  });

  it('acknowledges with the plain-text words Alipay looks for', () => {
    const g = gateway();
    expect(g.notifyAck(true)).toEqual({ status: 200, contentType: 'text/plain', body: 'success' });
    expect(g.notifyAck(false)).toEqual({ status: 200, contentType: 'text/plain', body: 'failure' });
  });
});
