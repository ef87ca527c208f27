import crypto from 'node:crypto';
import { AlipaySdk } from 'alipay-sdk';
import { describe, expect, it } from 'vitest';
import { alipayNotifyContent, rsa2Sign } from '../../../test/fakes/alipay-signer.ts';
import { issueCert, makeRootCa, rsaKeyPair } from '../../../test/fakes/certs.ts';
import { createAlipayGateway, type AlipayOptions } from './alipay.ts';

// Alipay's side is played by independent code: a second AlipaySdk instance (configured as the
// merchant would configure it, to compare what it signs) and hand-made signatures with Alipay's
// key (answers, notifications). The certificate chain is made with openssl.
const merchant = rsaKeyPair();
const alipay = rsaKeyPair();
const forger = rsaKeyPair();
const pem = (k: crypto.KeyObject, type: 'pkcs8' | 'pkcs1' | 'spki') => k.export({ type, format: 'pem' }).toString();
const APP_ID = '2021004100000001';
const SELLER_ID = '2088102119685838';

const root = makeRootCa('/C=CN/O=Ant Financial/OU=Certification Authority/CN=Ant Financial Certification Authority R1');
const alipayCert = issueCert(root, '/C=CN/O=Alipay.com/OU=Alipay/CN=2088000000000001', alipay, '2019082200555B6D6F1D9B2A');
const appCert = issueCert(root, `/C=CN/O=Test Merchant/OU=Alipay/CN=${APP_ID}`, merchant, '201908220055AB');
const certOptions = { appCertPem: appCert, alipayPublicCertPem: alipayCert, alipayRootCertPem: root.cert };

/** Alipay's certificate serial rule, written out: md5(issuer DN, attributes in reverse order, `k=v` joined by ',' + the serial in decimal). */
function alipayCertSn(certPem: string, issuerRdns: string[]): string {
  const serial = BigInt(`0x${new crypto.X509Certificate(certPem).serialNumber}`).toString(10);
  return crypto.createHash('md5').update([...issuerRdns].reverse().join(',') + serial, 'utf8').digest('hex');
}
const ROOT_RDNS = ['C=CN', 'O=Ant Financial', 'OU=Certification Authority', 'CN=Ant Financial Certification Authority R1'];

type Call = { url: string; body: string };
function fakeAlipay(answer: (params: Record<string, string>) => string) {
  const calls: Call[] = [];
  const fn: typeof fetch = async (input, init) => {
    const call = { url: input instanceof Request ? input.url : input.toString(), body: String(init?.body ?? '') };
    calls.push(call);
    return new Response(answer(Object.fromEntries(new URLSearchParams(call.body))), { status: 200 });
  };
  return { fn, calls, params: (i: number) => Object.fromEntries(new URLSearchParams(calls[i]!.body)) };
}
const signedAnswer = (nodeName: string, node: unknown, extra = '', key = alipay.privateKey) => {
  const text = JSON.stringify(node);
  return `{"${nodeName}":${text}${extra},"sign":"${rsa2Sign(text, key)}"}`;
};

const NOW = new Date();
function gateway(overrides: Partial<AlipayOptions> = {}) {
  return createAlipayGateway({
    appId: APP_ID,
    privateKeyPem: pem(merchant.privateKey, 'pkcs1'),
    alipayPublicKeyPem: pem(alipay.publicKey, 'spki'),
    sellerId: SELLER_ID,
    mode: 'page',
    clock: () => NOW,
    fetch: async () => {
      throw new Error('no HTTP call expected');
    },
    ...overrides,
  });
}
const order = { outTradeNo: 'R20240602003005A1B2', amount: 1_000_000, subject: '算力 余额充值', notifyUrl: 'https://c.example/api/v1/payments/notify/alipay', returnUrl: 'https://c.example/recharge/success?id=1', expiresAt: new Date(NOW.getTime() + 900_000) };

function notifyBody(fields: Record<string, string>, key = alipay.privateKey) {
  const params: Record<string, string> = { app_id: APP_ID, seller_id: SELLER_ID, charset: 'utf-8', version: '1.0', notify_type: 'trade_status_sync', notify_id: 'ac05099524730693a8b330c5ecf72da9786', notify_time: '2024-06-02 00:31:00', out_trade_no: order.outTradeNo, trade_no: '2024060222001400000000000001', trade_status: 'TRADE_SUCCESS', total_amount: '100.00', ...fields };
  params.sign = rsa2Sign(alipayNotifyContent(params), key);
  params.sign_type = 'RSA2';
  return { params, req: { headers: { 'content-type': 'application/x-www-form-urlencoded' }, rawBody: new URLSearchParams(params).toString() } };
}

const modes: [string, Partial<AlipayOptions>][] = [
  ['public-key mode', {}],
  ['certificate mode', { alipayPublicKeyPem: undefined, ...certOptions }],
];
describe.each(modes)('Alipay against alipay-sdk, %s', (_mode, modeOptions) => {
  const theirs = new AlipaySdk({ appId: APP_ID, privateKey: pem(merchant.privateKey, 'pkcs1'), ...(modeOptions.appCertPem ? { appCertContent: appCert, alipayPublicCertContent: alipayCert, alipayRootCertContent: root.cert } : { alipayPublicKey: pem(alipay.publicKey, 'spki') }) });

  it('signs a page-pay request exactly as the SDK signs the same parameters', async () => {
    const { payUrl } = await gateway(modeOptions).createPayment(order);
    const ours = Object.fromEntries(new URL(payUrl!).searchParams);
    const { sign, ...unsigned } = ours;
    const { method, app_id: _a, charset: _c, version: _v, sign_type: _s, app_cert_sn: _acs, alipay_root_cert_sn: _rcs, biz_content: biz, ...rest } = unsigned;
    const again = Object.fromEntries(new URLSearchParams(theirs.sdkExecute(method!, { ...rest, bizContent: JSON.parse(biz!) as Record<string, unknown> }, { bizContentAutoSnakeCase: false })));
    expect(again).toEqual(ours);
    expect(crypto.verify('sha256', Buffer.from(Object.keys(unsigned).sort().map((k) => `${k}=${unsigned[k]}`).join('&')), merchant.publicKey, Buffer.from(sign!, 'base64'))).toBe(true);
    if (modeOptions.appCertPem) {
      expect(ours.app_cert_sn).toBe(alipayCertSn(appCert, ROOT_RDNS));
      expect(ours.alipay_root_cert_sn).toBe(alipayCertSn(root.cert, ROOT_RDNS));
    } else {
      expect(ours.app_cert_sn).toBeUndefined();
    }
  });

  it('accepts and refuses notifications exactly as the SDK does', async () => {
    const g = gateway(modeOptions);
    const genuine = notifyBody({});
    const cases = [
      genuine,
      notifyBody({ total_amount: '100.00' }, forger.privateKey),
      { params: { ...genuine.params, total_amount: '1000.00' }, req: { headers: {}, rawBody: new URLSearchParams({ ...genuine.params, total_amount: '1000.00' }).toString() } },
      notifyBody({ body: '含 空格 & = 符号', passback_params: 'a%2Bb' }),
    ];
    for (const c of cases) {
      const expected = theirs.checkNotifySignV2(c.params);
      expect((await g.verifyNotify(c.req)).ok).toBe(expected);
    }
    expect(theirs.checkNotifySignV2(genuine.params)).toBe(true);
  });

  it('verifies answers exactly as the SDK checks them, and acts only on the signed node', async () => {
    const node = { code: '10000', msg: 'Success', out_trade_no: order.outTradeNo, qr_code: 'https://qr.alipay.com/bax01' };
    const certSn = modeOptions.appCertPem ? `,"alipay_cert_sn":"${alipayCertSn(alipayCert, ROOT_RDNS)}"` : '';
    for (const [text, ok] of [
      [signedAnswer('alipay_trade_precreate_response', node, certSn), true],
      [signedAnswer('alipay_trade_precreate_response', node, certSn, forger.privateKey), false],
      [signedAnswer('alipay_trade_precreate_response', node, certSn).replace('bax01', 'evil1'), false],
    ] as const) {
      const sdkSays = (() => {
        try {
          theirs.checkResponseSign(text, 'alipay_trade_precreate_response', (JSON.parse(text) as { sign: string }).sign, 'trace');
          return true;
        } catch {
          return false;
        }
      })();
      expect(sdkSays).toBe(ok);
      const f = fakeAlipay(() => text);
      const result = gateway({ ...modeOptions, mode: 'qr', fetch: f.fn }).createPayment(order);
      if (ok) await expect(result).resolves.toEqual({ qrCode: 'https://qr.alipay.com/bax01' });
      else await expect(result).rejects.toThrow(/signature does not verify/);
    }
  });

  it('sends refund, refund query and close as documented, and believes only signed answers', async () => {
    const f = fakeAlipay((p) => {
      const m = p.method!;
      const node = m.replaceAll('.', '_') + '_response';
      if (m === 'alipay.trade.refund') return signedAnswer(node, { code: '10000', msg: 'Success', trade_no: '2024060222001400000000000001', out_trade_no: order.outTradeNo, buyer_logon_id: 'tes***@example.com', fund_change: 'Y', refund_fee: '25.00' });
      if (m === 'alipay.trade.fastpay.refund.query') return signedAnswer(node, { code: '10000', msg: 'Success', trade_no: '2024060222001400000000000001', out_trade_no: order.outTradeNo, out_request_no: 'RF1', refund_amount: '25.00', total_amount: '100.00', refund_status: 'REFUND_SUCCESS' });
      if (m === 'alipay.trade.close') return signedAnswer(node, { code: '10000', msg: 'Success', trade_no: '2024060222001400000000000001', out_trade_no: order.outTradeNo });
      throw new Error(m);
    });
    const g = gateway({ ...modeOptions, fetch: f.fn });
    expect(await g.refund({ outTradeNo: order.outTradeNo, outRefundNo: 'RF1', amount: 250_000, totalAmount: 1_000_000, reason: '用户申请' })).toEqual({ outRefundNo: 'RF1', status: 'succeeded', amount: 250_000, gatewayRefundNo: '2024060222001400000000000001' });
    expect(f.params(0).method).toBe('alipay.trade.refund');
    expect(JSON.parse(f.params(0).biz_content!)).toEqual({ out_trade_no: order.outTradeNo, refund_amount: '25.00', out_request_no: 'RF1', refund_reason: '用户申请' });
    expect(await g.queryRefund(order.outTradeNo, 'RF1')).toEqual({ outRefundNo: 'RF1', status: 'succeeded', amount: 250_000, gatewayRefundNo: '2024060222001400000000000001' });
    expect(JSON.parse(f.params(1).biz_content!)).toEqual({ out_trade_no: order.outTradeNo, out_request_no: 'RF1' });
    await expect(g.closePayment(order.outTradeNo)).resolves.toBeUndefined();
    expect(f.params(2).method).toBe('alipay.trade.close');
    // Every request is the SDK's signature over exactly what was sent.
    for (let i = 0; i < 3; i++) {
      const { sign, ...rest } = f.params(i);
      const { method, app_id: _a, charset: _c, version: _v, sign_type: _s, app_cert_sn: _acs, alipay_root_cert_sn: _rcs, biz_content: biz, ...others } = rest;
      const again = Object.fromEntries(new URLSearchParams(theirs.sdkExecute(method!, { ...others, bizContent: JSON.parse(biz!) as Record<string, unknown> }, { bizContentAutoSnakeCase: false })));
      expect(again.sign).toBe(sign);
    }
  });

  it('takes a notification carrying refund fields as a refund, never as the payment failing', async () => {
    const g = gateway(modeOptions);
    const full = notifyBody({ trade_status: 'TRADE_CLOSED', refund_fee: '100.00', gmt_refund: '2024-06-03 10:00:00.123', out_biz_no: 'RF2' });
    expect(theirs.checkNotifySignV2(full.params)).toBe(true);
    expect(await g.verifyNotify(full.req)).toMatchObject({ ok: true, kind: 'refund', refund: { outTradeNo: order.outTradeNo, outRefundNo: 'RF2', amount: 1_000_000, cumulative: true, status: 'succeeded' } });
  });
});

describe('Alipay certificate mode checks', () => {
  it('refuses an app certificate for another key, an Alipay certificate outside the root, and half a configuration', () => {
    const otherRoot = makeRootCa('/CN=Other Root');
    const stray = issueCert(otherRoot, '/CN=stray', alipay, '01');
    const base = { alipayPublicKeyPem: undefined };
    expect(() => gateway({ ...base, ...certOptions, appCertPem: issueCert(root, '/CN=other app', forger, '02') })).toThrow(/does not hold the public key of the configured application private key/);
    expect(() => gateway({ ...base, ...certOptions, alipayPublicCertPem: stray })).toThrow(/does not chain to the configured Alipay root certificate/);
    expect(() => gateway({ ...base, appCertPem: appCert })).toThrow(/needs appCertPem, alipayPublicCertPem and alipayRootCertPem/);
    expect(() => gateway({ ...certOptions })).toThrow(/not both/);
    expect(() => gateway({ ...base, ...certOptions, clock: () => new Date(NOW.getTime() + 2 * 365 * 86_400_000) })).toThrow(/not valid now/);
  });

  it("refuses an answer signed under another Alipay certificate serial, naming the fix", async () => {
    const node = { code: '10000', msg: 'Success', out_trade_no: order.outTradeNo, qr_code: 'https://qr.alipay.com/bax01' };
    const f = fakeAlipay(() => signedAnswer('alipay_trade_precreate_response', node, ',"alipay_cert_sn":"0123456789abcdef0123456789abcdef"'));
    await expect(gateway({ alipayPublicKeyPem: undefined, ...certOptions, mode: 'qr', fetch: f.fn }).createPayment(order)).rejects.toThrow(/install Alipay's current public-key certificate/);
  });
});
