import crypto, { type KeyObject } from 'node:crypto';
import { AlipaySdk, type AlipaySdkConfig } from 'alipay-sdk';
import type { Clock } from '../../lib/clock.ts';
import { assertPayableUnits, unitsToYuan, yuanToUnits } from '@suanli/domain/money';
import {
  type NotifyResult,
  type PaymentGateway,
  PaymentGatewayError,
  type QueryResult,
  type RefundQueryResult,
  type RefundResult,
  type VerifiedNotify,
  type VerifiedRefundNotify,
} from './port.ts';

/**
 * Alipay open platform (openapi v2, RSA2) for one merchant application. Signing, response and
 * notification verification and the certificate handling of 公钥证书模式 (certificate serials,
 * the Alipay public key read from its certificate) are Alipay's official Node SDK, `alipay-sdk`;
 * this adapter adds what the SDK leaves to its caller: the HTTP call over an injectable fetch with
 * a timeout, Beijing-time timestamps whatever the machine's TZ, strict parsing of notification
 * forms (charset, repeated parameters), refusing RSA (SHA1) downgrades, acting only on the bytes
 * Alipay signed, and the identity checks (app, seller, order) before anything is believed.
 */
export const ALIPAY_GATEWAY_URL = 'https://openapi.alipay.com/gateway.do';

export type AlipayOptions = {
  /** Public-key mode (公钥模式): Alipay's public key from the open platform console (PEM or bare base64). */
  alipayPublicKeyPem?: string;
  /**
   * Certificate mode (公钥证书模式), instead of alipayPublicKeyPem: the three files the open
   * platform hands out — the application's public-key certificate (appCertPublicKey_<APPID>.crt),
   * Alipay's public-key certificate (alipayCertPublicKey_RSA2.crt) and Alipay's root certificate
   * (alipayRootCert.crt), PEM text.
   */
  appCertPem?: string;
  alipayPublicCertPem?: string;
  alipayRootCertPem?: string;
  /** The application's APPID (app_id), e.g. 2021000000000000. */
  appId: string;
  /** The merchant application's private key (RSA 2048): PEM (PKCS#1 or PKCS#8), or the bare base64 Alipay's key tool prints. */
  privateKeyPem: string;
  /** The merchant's Alipay user id (2088...); when set, notifications for another seller are refused. */
  sellerId?: string;
  /** Defaults to the production gateway; the sandbox is https://openapi-sandbox.dl.alipaydev.com/gateway.do. */
  gatewayUrl?: string;
  /** 'page': computer-website pay (alipay.trade.page.pay), a URL to redirect to. 'qr': face-to-face pre-create, a QR code. */
  mode: 'page' | 'qr';
  /** Injected in tests; the global fetch otherwise. */
  fetch?: typeof fetch;
  /** Source of the signed timestamp; injected in tests. */
  clock?: Clock;
  /** Give up on a stalled gateway instead of holding the user's request open. */
  timeoutMs?: number;
};

type Params = Record<string, string>;

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * 'yyyy-MM-dd HH:mm:ss' in Beijing time (UTC+8, no daylight saving), whatever the machine's TZ:
 * Alipay reads both `timestamp` and `time_expire` as China Standard Time.
 */
export function alipayTime(date: Date): string {
  const ms = date.getTime();
  if (Number.isNaN(ms)) throw new RangeError('alipayTime: invalid date');
  const t = new Date(ms + 8 * 3_600_000);
  return `${t.getUTCFullYear()}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())} ${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())}`;
}

/** Reads an RSA key given as PEM (PKCS#1, PKCS#8, SPKI or an X.509 certificate) or as the bare base64 DER Alipay's tools print. */
export function loadRsaKey(material: string, kind: 'private' | 'public', what: string): KeyObject {
  const text = material.trim();
  if (kind === 'public' && /PRIVATE KEY/.test(text)) {
    // createPublicKey would happily derive a public key from it and every signature would fail.
    throw new Error(`${what}: this is a private key; a public key is expected here`);
  }
  let key: KeyObject | undefined;
  try {
    if (text.includes('-----BEGIN')) {
      key = kind === 'private' ? crypto.createPrivateKey(text) : crypto.createPublicKey(text);
    } else {
      const der = Buffer.from(text.replace(/\s+/g, ''), 'base64');
      const attempts =
        kind === 'private'
          ? (['pkcs8', 'pkcs1'] as const).map((type) => () => crypto.createPrivateKey({ key: der, format: 'der', type }))
          : (['spki', 'pkcs1'] as const).map((type) => () => crypto.createPublicKey({ key: der, format: 'der', type }));
      for (const attempt of attempts) {
        try {
          key = attempt();
          break;
        } catch {
          // try the next encoding
        }
      }
    }
  } catch (err) {
    throw new Error(`${what}: not a readable RSA ${kind} key (${err instanceof Error ? err.message : String(err)})`, { cause: err });
  }
  if (!key) throw new Error(`${what}: not a readable RSA ${kind} key`);
  if (key.asymmetricKeyType !== 'rsa') throw new Error(`${what}: expected an RSA key, got ${key.asymmetricKeyType ?? 'unknown'}`);
  return key;
}

/** Percent-decodes one form-urlencoded component into bytes ('+' is a space). */
function formBytes(s: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '+') bytes.push(0x20);
    else if (c === '%') {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw new Error(`bad percent-escape at ${i}`);
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(c, 'utf8'));
  }
  return Buffer.from(bytes);
}

/**
 * Parses Alipay's form-urlencoded notification. Values are percent-decoded as bytes and then
 * read in the notification's own `charset` (utf-8 for what we send; GBK for an app configured so),
 * strictly, so a malformed byte sequence fails here instead of as a puzzling signature mismatch.
 * A repeated parameter is refused: it would leave open which of the two values was signed.
 */
export function parseAlipayForm(body: string): Params {
  const pairs = body
    .split('&')
    .filter((p) => p !== '')
    .map((p) => {
      const eq = p.indexOf('=');
      return eq < 0 ? ([p, ''] as const) : ([p.slice(0, eq), p.slice(eq + 1)] as const);
    });
  const charsetRaw = pairs.find(([k]) => k === 'charset')?.[1];
  const charset = charsetRaw ? formBytes(charsetRaw).toString('latin1').trim() : 'utf-8';
  const decoder = (() => {
    try {
      return new TextDecoder(charset, { fatal: true });
    } catch {
      throw new Error(`unsupported charset ${JSON.stringify(charset)}`);
    }
  })();
  const params: Params = {};
  for (const [rawKey, rawValue] of pairs) {
    const key = decoder.decode(formBytes(rawKey));
    if (Object.hasOwn(params, key)) throw new Error(`parameter ${key} appears twice`);
    params[key] = decoder.decode(formBytes(rawValue));
  }
  return params;
}

type ResponseNode = Record<string, unknown> & { code?: unknown; msg?: unknown; sub_code?: unknown; sub_msg?: unknown };

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

const certs = (pem: string, what: string): crypto.X509Certificate[] => {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const parsed = blocks.flatMap((b) => {
    try {
      return [new crypto.X509Certificate(b)];
    } catch {
      // Alipay's root file also carries an SM2 certificate some OpenSSL builds can't read.
      return [];
    }
  });
  if (parsed.length === 0) throw new Error(`${what}: no readable PEM certificate`);
  return parsed;
};

/**
 * Checks the certificate-mode files before the SDK reads them, with the errors an operator can act
 * on: the application certificate must hold the public half of the configured private key, and
 * Alipay's public certificate must chain (through the certificates in its own file) to a
 * certificate of the root file and be within its validity period.
 */
function checkCertMode(opts: { appCertPem: string; alipayPublicCertPem: string; alipayRootCertPem: string }, privateKey: KeyObject, now: Date): void {
  const [appCert] = certs(opts.appCertPem, 'Alipay application public-key certificate (appCertPublicKey)');
  const appKey = appCert!.publicKey.export({ type: 'spki', format: 'der' });
  const ownKey = crypto.createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  if (!appKey.equals(ownKey)) throw new Error('Alipay application public-key certificate: it does not hold the public key of the configured application private key');

  const chain = certs(opts.alipayPublicCertPem, 'Alipay public-key certificate (alipayCertPublicKey_RSA2)');
  const roots = certs(opts.alipayRootCertPem, 'Alipay root certificate (alipayRootCert)');
  const leaf = chain[0]!;
  if (leaf.publicKey.asymmetricKeyType !== 'rsa') throw new Error('Alipay public-key certificate: expected an RSA key (RSA2)');
  const isRoot = (c: crypto.X509Certificate) => roots.some((r) => r.raw.equals(c.raw));
  let current = leaf;
  for (let depth = 0; depth < 5 && !isRoot(current); depth++) {
    const issuer = [...chain, ...roots].find((c) => c !== current && current.checkIssued(c) && current.verify(c.publicKey));
    if (!issuer) throw new Error('Alipay public-key certificate: it does not chain to the configured Alipay root certificate');
    current = issuer;
  }
  if (!isRoot(current)) throw new Error('Alipay public-key certificate: it does not chain to the configured Alipay root certificate');
  const t = now.getTime();
  if (t < Date.parse(leaf.validFrom) || t > Date.parse(leaf.validTo)) throw new Error(`Alipay public-key certificate: not valid now (valid ${leaf.validFrom} to ${leaf.validTo}); download the current one`);
}

/**
 * Alipay gateway for one merchant application. Page pay builds a signed redirect URL without any
 * HTTP call; QR mode pre-creates the order and returns the code's content. Every answer we act on
 * (a QR code, a trade state, a refund, "no such trade") must carry Alipay's valid signature.
 */
export function createAlipayGateway(opts: AlipayOptions): PaymentGateway {
  const privateKey = loadRsaKey(opts.privateKeyPem, 'private', 'Alipay application private key');
  const gatewayUrl = opts.gatewayUrl ?? ALIPAY_GATEWAY_URL;
  const doFetch = opts.fetch ?? fetch;
  const clock = opts.clock ?? (() => new Date());
  const timeoutMs = opts.timeoutMs ?? 10_000;

  // The SDK takes PEM of one declared type; normalise whatever form the operator pasted.
  const config: AlipaySdkConfig = {
    appId: opts.appId,
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    keyType: 'PKCS8',
    signType: 'RSA2',
    gateway: gatewayUrl,
    timeout: timeoutMs,
  };
  const certMode = opts.appCertPem !== undefined || opts.alipayPublicCertPem !== undefined || opts.alipayRootCertPem !== undefined;
  if (certMode) {
    const { appCertPem, alipayPublicCertPem, alipayRootCertPem } = opts;
    if (opts.alipayPublicKeyPem !== undefined) throw new Error('Alipay settings: choose public-key mode (alipayPublicKeyPem) or certificate mode, not both');
    if (!appCertPem || !alipayPublicCertPem || !alipayRootCertPem) throw new Error('Alipay certificate mode needs appCertPem, alipayPublicCertPem and alipayRootCertPem');
    checkCertMode({ appCertPem, alipayPublicCertPem, alipayRootCertPem }, privateKey, clock());
    config.appCertContent = appCertPem;
    config.alipayPublicCertContent = alipayPublicCertPem;
    config.alipayRootCertContent = alipayRootCertPem;
  } else {
    if (opts.alipayPublicKeyPem === undefined) throw new Error('Alipay settings: set alipayPublicKeyPem (public-key mode) or the three certificates (certificate mode)');
    const alipayPublicKey = loadRsaKey(opts.alipayPublicKeyPem, 'public', 'Alipay public key');
    config.alipayPublicKey = alipayPublicKey.export({ type: 'spki', format: 'pem' }).toString();
  }
  let sdk: AlipaySdk;
  try {
    sdk = new AlipaySdk(config);
  } catch (err) {
    throw new Error(`Alipay settings: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (certMode && (!sdk.config.appCertSn || !sdk.config.alipayCertSn || !sdk.config.alipayRootCertSn)) {
    throw new Error('Alipay certificate mode: a certificate serial could not be read (is the root certificate file complete?)');
  }

  const fail = (message: string, code?: string, cause?: unknown) => new PaymentGatewayError('alipay', message, code, cause === undefined ? undefined : { cause });

  /** The signed request as a form (also the query of a page-pay URL): the SDK signs, with our Beijing-time timestamp. */
  function signedForm(method: string, bizContent: Record<string, unknown>, extra: Params = {}): string {
    return sdk.sdkExecute(method, { timestamp: alipayTime(clock()), format: 'JSON', ...extra, bizContent }, { bizContentAutoSnakeCase: false });
  }

  /** Verifies a signature made by Alipay over `content` (strict base64, RSA2). */
  function alipaySigned(content: string, sign: string): boolean {
    // Node's base64 decoder skips characters it doesn't know; a signature that isn't strict base64
    // (or was '+'-mangled into spaces by a careless proxy) is refused rather than half-decoded.
    if (!BASE64.test(sign)) return false;
    try {
      return sdk.rsaCheck(content, sign, 'RSA2');
    } catch {
      return false;
    }
  }

  /**
   * POSTs a signed request and returns its verified response node: the SDK cuts the signed text
   * out of the answer, and that text — nothing re-serialised, nothing outside it — is what we
   * read. An error answer without a signature (Alipay can't sign when it couldn't identify the
   * app) is thrown as the error it reports; any signed answer that fails verification, and any
   * unsigned success, is refused.
   */
  async function call(method: string, bizContent: Record<string, unknown>, extra: Params = {}): Promise<ResponseNode> {
    const body = signedForm(method, bizContent, extra);
    let res: Response;
    let text: string;
    try {
      res = await doFetch(gatewayUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded;charset=utf-8', accept: 'application/json' },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      throw fail(`Alipay unreachable: ${err instanceof Error ? err.message : String(err)}`, undefined, err);
    }
    if (!res.ok) throw fail(`Alipay answered HTTP ${res.status}`);

    let whole: unknown;
    try {
      whole = JSON.parse(text);
    } catch (err) {
      throw fail(`Alipay answered something that is not JSON (HTTP ${res.status})`, undefined, err);
    }
    if (!isRecord(whole)) throw fail('Alipay answered something that is not a JSON object');
    const methodNode = `${method.replaceAll('.', '_')}_response`;
    const nodeName = methodNode in whole ? methodNode : 'error_response' in whole ? 'error_response' : undefined;
    if (nodeName === undefined) throw fail(`Alipay answer has no ${methodNode}`);
    const parsedNode = whole[nodeName];
    if (!isRecord(parsedNode)) throw fail(`Alipay ${nodeName} is not an object`);

    const sign = str(whole.sign);
    if (!sign) {
      if (parsedNode.code === '10000') throw fail(`Alipay ${method} answered success without a signature`);
      throw errorOf(method, parsedNode, ' (unsigned answer)');
    }
    const signedText = sdk.getSignStr(text, nodeName);
    // Some gateway answers escape '/' in the text they send but signed the unescaped form; Alipay's
    // other SDKs retry that way. It is the same JSON value either way.
    const verified = alipaySigned(signedText, sign) || (signedText.includes('\\/') && alipaySigned(signedText.replaceAll('\\/', '/'), sign));
    if (!verified) throw fail(`Alipay ${method} answer signature does not verify`, 'INVALID_SIGNATURE');
    let node: unknown;
    try {
      node = JSON.parse(signedText);
    } catch (err) {
      throw fail(`Alipay ${method} signed text is not JSON`, 'INVALID_SIGNATURE', err);
    }
    if (!isRecord(node)) throw fail(`Alipay ${nodeName} is not an object`);
    // Certificate mode: Alipay names the certificate it signed with. Another one means Alipay
    // rotated its certificate and the operator must install the new alipayCertPublicKey_RSA2.crt
    // (the signature above would not have verified under the old key anyway).
    const certSn = str(whole.alipay_cert_sn);
    if (certSn && sdk.config.alipayCertSn && certSn !== sdk.config.alipayCertSn) {
      throw fail(`Alipay signed with certificate ${certSn}, not the configured ${sdk.config.alipayCertSn}: install Alipay's current public-key certificate`, 'ALIPAY_CERT_CHANGED');
    }
    return node;
  }

  function errorOf(method: string, node: ResponseNode, suffix = ''): PaymentGatewayError {
    const message = str(node.sub_msg) ?? str(node.msg) ?? 'unknown error';
    const code = str(node.sub_code) ?? str(node.code);
    return fail(`Alipay ${method} refused: ${message}${code ? ` (${code})` : ''}${suffix}`, code);
  }

  function units(method: string, field: string, value: unknown): number {
    try {
      return yuanToUnits(str(value) ?? '');
    } catch (err) {
      throw fail(`Alipay ${method} answered a malformed ${field} ${JSON.stringify(value ?? null)}`, undefined, err);
    }
  }

  /** A refund notification: Alipay's trade notification with refund fields (refund_fee is the trade's total refunded so far). */
  function refundNotify(params: Params, outTradeNo: string): NotifyResult {
    let amount: number;
    try {
      amount = yuanToUnits(params.refund_fee ?? '');
    } catch {
      return { ok: false, reason: `malformed refund_fee ${JSON.stringify(params.refund_fee ?? null)}` };
    }
    const refund: VerifiedRefundNotify = {
      outTradeNo,
      outRefundNo: params.out_biz_no || undefined,
      gatewayRefundNo: params.trade_no,
      amount,
      cumulative: true,
      status: 'succeeded',
      raw: { ...params },
    };
    return { ok: true, kind: 'refund', refund };
  }

  return {
    method: 'alipay',

    async createPayment(input) {
      assertPayableUnits(input.amount);
      if (input.amount <= 0) throw new RangeError('Alipay payments need a positive amount');
      const biz: Record<string, unknown> = {
        out_trade_no: input.outTradeNo,
        total_amount: unitsToYuan(input.amount),
        subject: input.subject,
        time_expire: alipayTime(input.expiresAt),
      };

      if (opts.mode === 'page') {
        const query = signedForm('alipay.trade.page.pay', { ...biz, product_code: 'FAST_INSTANT_TRADE_PAY' }, { notify_url: input.notifyUrl, return_url: input.returnUrl });
        return { payUrl: `${gatewayUrl}${gatewayUrl.includes('?') ? '&' : '?'}${query}` };
      }

      const method = 'alipay.trade.precreate';
      const node = await call(method, biz, { notify_url: input.notifyUrl });
      if (node.code !== '10000') throw errorOf(method, node);
      if (node.out_trade_no !== input.outTradeNo) throw fail(`Alipay ${method} answered for another order (${String(node.out_trade_no)})`);
      const qrCode = str(node.qr_code);
      if (!qrCode) throw fail(`Alipay ${method} answered without qr_code`);
      return { qrCode };
    },

    async verifyNotify(req) {
      try {
        let params: Params;
        try {
          params = parseAlipayForm(req.rawBody);
        } catch (err) {
          return { ok: false, reason: `malformed notification: ${err instanceof Error ? err.message : String(err)}` };
        }
        const sign = params.sign;
        if (!sign) return { ok: false, reason: 'missing sign' };
        // RSA2 only: accepting sign_type=RSA (SHA1) would let a notification pick the weaker check.
        if (params.sign_type !== undefined && params.sign_type !== 'RSA2') return { ok: false, reason: `unsupported sign_type ${params.sign_type}` };
        if (!BASE64.test(sign)) return { ok: false, reason: 'bad signature' };
        // The SDK's check over the decoded values (checkNotifySignV2: sorted k=v, empty values
        // kept, sign_type dropped). Alipay's request-side rule drops empty values, and a
        // notification carrying one is accepted under that reading too: both are Alipay's
        // signature over the same non-empty values.
        const withoutEmpty = Object.fromEntries(Object.entries(params).filter(([, v]) => v !== ''));
        const verified = sdk.checkNotifySignV2(params) || (Object.values(params).includes('') && sdk.checkNotifySignV2(withoutEmpty));
        if (!verified) return { ok: false, reason: 'bad signature' };

        if (params.app_id !== opts.appId) return { ok: false, reason: `app_id mismatch (${params.app_id ?? 'missing'})` };
        if (opts.sellerId !== undefined && params.seller_id !== opts.sellerId) return { ok: false, reason: `seller_id mismatch (${params.seller_id ?? 'missing'})` };
        const outTradeNo = params.out_trade_no;
        if (!outTradeNo) return { ok: false, reason: 'missing out_trade_no' };
        const tradeNo = params.trade_no;
        if (!tradeNo) return { ok: false, reason: 'missing trade_no' };
        // A refund changes the trade (TRADE_SUCCESS after a partial refund, TRADE_CLOSED after a
        // full one): that notification is about the refund, never a payment failing.
        if (params.refund_fee || params.gmt_refund || params.out_biz_no) return refundNotify(params, outTradeNo);
        const status = NOTIFY_STATUS[params.trade_status ?? ''];
        if (!status) return { ok: false, reason: `unknown trade_status ${params.trade_status ?? '(missing)'}` };
        let amount: number;
        try {
          amount = yuanToUnits(params.total_amount ?? '');
        } catch {
          return { ok: false, reason: `malformed total_amount ${JSON.stringify(params.total_amount ?? null)}` };
        }
        const notify: VerifiedNotify = { outTradeNo, amount, gatewayTradeNo: tradeNo, status, raw: { ...params } };
        return { ok: true, notify } satisfies NotifyResult;
      } catch (err) {
        return { ok: false, reason: `notification not processed: ${err instanceof Error ? err.message : String(err)}` };
      }
    },

    notifyAck(ok) {
      // Alipay retries (up to 25 h) until the body is exactly "success".
      return { status: 200, contentType: 'text/plain', body: ok ? 'success' : 'failure' };
    },

    async queryPayment(outTradeNo): Promise<QueryResult> {
      const method = 'alipay.trade.query';
      const node = await call(method, { out_trade_no: outTradeNo });
      if (node.code !== '10000') {
        // Page-pay trades only exist at Alipay once the payer opened the cashier.
        if (node.sub_code === 'ACQ.TRADE_NOT_EXIST') return { status: 'not_found' };
        throw errorOf(method, node);
      }
      if (node.out_trade_no !== outTradeNo) throw fail(`Alipay ${method} answered for another order (${String(node.out_trade_no)})`);
      const tradeStatus = str(node.trade_status);
      const status = tradeStatus === undefined ? undefined : QUERY_STATUS[tradeStatus];
      if (!status) throw fail(`Alipay ${method} answered an unknown trade_status ${String(node.trade_status)}`);
      return { status, amount: units(method, 'total_amount', node.total_amount), gatewayTradeNo: str(node.trade_no) };
    },

    async refund(input): Promise<RefundResult> {
      assertPayableUnits(input.amount);
      if (input.amount <= 0) throw new RangeError('a refund needs a positive amount');
      const method = 'alipay.trade.refund';
      const biz: Record<string, unknown> = { out_trade_no: input.outTradeNo, refund_amount: unitsToYuan(input.amount), out_request_no: input.outRefundNo };
      if (input.reason) biz.refund_reason = input.reason;
      const node = await call(method, biz);
      if (node.code !== '10000') throw errorOf(method, node);
      if (node.out_trade_no !== input.outTradeNo) throw fail(`Alipay ${method} answered for another order (${String(node.out_trade_no)})`);
      // fund_change=Y: money moved by this call. N: nothing moved now — a repeated request of a
      // refund already made, or one still under way; the refund query tells which.
      return { outRefundNo: input.outRefundNo, status: node.fund_change === 'Y' ? 'succeeded' : 'processing', amount: input.amount, gatewayRefundNo: str(node.trade_no) };
    },

    async queryRefund(outTradeNo, outRefundNo): Promise<RefundQueryResult> {
      const method = 'alipay.trade.fastpay.refund.query';
      const node = await call(method, { out_trade_no: outTradeNo, out_request_no: outRefundNo });
      if (node.code !== '10000') {
        if (node.sub_code === 'ACQ.TRADE_NOT_EXIST') return { outRefundNo, status: 'not_found' };
        throw errorOf(method, node);
      }
      // Alipay answers 10000 with no refund fields for a refund it doesn't know.
      if (node.out_request_no === undefined && node.refund_amount === undefined) return { outRefundNo, status: 'not_found' };
      if (node.out_trade_no !== undefined && node.out_trade_no !== outTradeNo) throw fail(`Alipay ${method} answered for another order (${String(node.out_trade_no)})`);
      if (node.out_request_no !== undefined && node.out_request_no !== outRefundNo) throw fail(`Alipay ${method} answered for another refund (${String(node.out_request_no)})`);
      const status = node.refund_status === 'REFUND_SUCCESS' ? 'succeeded' : 'processing';
      return { outRefundNo, status, amount: units(method, 'refund_amount', node.refund_amount), gatewayRefundNo: str(node.trade_no) };
    },

    async closePayment(outTradeNo): Promise<void> {
      const method = 'alipay.trade.close';
      const node = await call(method, { out_trade_no: outTradeNo });
      if (node.code === '10000') {
        if (node.out_trade_no !== undefined && node.out_trade_no !== outTradeNo) throw fail(`Alipay ${method} answered for another order (${String(node.out_trade_no)})`);
        return;
      }
      // Never opened at the cashier: nothing at Alipay to pay, so nothing to close.
      if (node.sub_code === 'ACQ.TRADE_NOT_EXIST') return;
      throw errorOf(method, node);
    },
  };
}

const NOTIFY_STATUS: Partial<Record<string, VerifiedNotify['status']>> = {
  TRADE_SUCCESS: 'paid',
  // Paid and past the refund window: still paid.
  TRADE_FINISHED: 'paid',
  TRADE_CLOSED: 'failed',
  WAIT_BUYER_PAY: 'pending',
};

const QUERY_STATUS: Partial<Record<string, QueryResult['status']>> = {
  TRADE_SUCCESS: 'paid',
  TRADE_FINISHED: 'paid',
  // Closed unpaid at expiry — or fully refunded after payment, which only we can have started.
  TRADE_CLOSED: 'closed',
  WAIT_BUYER_PAY: 'pending',
};
