import crypto, { type KeyObject } from 'node:crypto';
import type { Clock } from '../../lib/clock.ts';
import { assertPayableUnits, unitsToYuan, yuanToUnits } from '@suanli/domain/money';
import { type NotifyResult, type PaymentGateway, PaymentGatewayError, type QueryResult, type VerifiedNotify } from './port.ts';

/**
 * Alipay open platform (openapi, public-key mode, RSA2) with Node's crypto only: the protocol is
 * a sorted `k=v` string signed SHA256withRSA, which needs no SDK, and Alipay's official Node SDK
 * pulls in an HTTP client and more than we would use.
 */
export const ALIPAY_GATEWAY_URL = 'https://openapi.alipay.com/gateway.do';

export type AlipayOptions = {
  /** The application's APPID (app_id), e.g. 2021000000000000. */
  appId: string;
  /** The merchant application's private key (RSA 2048): PEM (PKCS#1 or PKCS#8), or the bare base64 Alipay's key tool prints. */
  privateKeyPem: string;
  /** Alipay's public key (支付宝公钥) from the open platform console: PEM, or bare base64. Not the application's public key. */
  alipayPublicKeyPem: string;
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

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The string Alipay signs and verifies for a request: every parameter except `sign` with a
 * non-empty value, sorted by name (ASCII), joined as raw `k=v` pairs with `&` — no URL encoding.
 */
export function alipaySignContent(params: Params): string {
  return Object.keys(params)
    .filter((k) => k !== 'sign' && params[k] !== undefined && params[k] !== '')
    .sort(byCodeUnit)
    .map((k) => `${k}=${params[k]}`)
    .join('&');
}

/**
 * The string an asynchronous notification's `sign` covers: every parameter except `sign` and
 * `sign_type`, URL-decoded, sorted by name. Alipay's documentation says "every parameter
 * returned", so empty values are kept unless `dropEmpty` (see verifyNotify for why both).
 */
export function alipayNotifyContent(params: Params, dropEmpty = false): string {
  return Object.keys(params)
    .filter((k) => k !== 'sign' && k !== 'sign_type' && !(dropEmpty && params[k] === ''))
    .sort(byCodeUnit)
    .map((k) => `${k}=${params[k]}`)
    .join('&');
}

export function rsa2Sign(content: string, privateKey: KeyObject): string {
  return crypto.sign('sha256', Buffer.from(content, 'utf8'), privateKey).toString('base64');
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export function rsa2Verify(content: string, signature: string, publicKey: KeyObject): boolean {
  // Node's base64 decoder skips characters it doesn't know; a signature that isn't strict base64
  // (or was '+'-mangled into spaces by a careless proxy) is refused rather than half-decoded.
  if (!BASE64.test(signature)) return false;
  try {
    return crypto.verify('sha256', Buffer.from(content, 'utf8'), publicKey, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}

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

const isWs = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r';

/**
 * The exact source text of each top-level member of a JSON object, by name. Alipay signs the
 * bytes of the `xxx_response` node as it sent them, so re-serializing the parsed object (key
 * order, escapes such as `\/` or `\u4e2d`, number formats) would break genuine signatures.
 * `text` must already have passed JSON.parse; a repeated member name is refused.
 */
export function topLevelJsonMembers(text: string): Map<string, string> {
  const members = new Map<string, string>();
  let i = 0;
  const skipWs = () => {
    while (isWs(text[i])) i++;
  };
  const skipString = () => {
    i++; // opening quote
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++; // closing quote
  };
  const skipValue = () => {
    const c = text[i];
    if (c === '"') return skipString();
    if (c === '{' || c === '[') {
      let depth = 0;
      do {
        const d = text[i];
        if (d === '"') {
          skipString();
          continue;
        }
        if (d === '{' || d === '[') depth++;
        else if (d === '}' || d === ']') depth--;
        i++;
      } while (depth > 0 && i < text.length);
      return;
    }
    while (i < text.length && !isWs(text[i]) && text[i] !== ',' && text[i] !== '}') i++;
  };

  skipWs();
  if (text[i] !== '{') throw new Error('not a JSON object');
  i++;
  skipWs();
  if (text[i] === '}') return members;
  for (;;) {
    skipWs();
    const keyStart = i;
    skipString();
    const key = JSON.parse(text.slice(keyStart, i)) as string;
    skipWs();
    i++; // ':'
    skipWs();
    const valueStart = i;
    skipValue();
    if (members.has(key)) throw new Error(`member ${key} appears twice`);
    members.set(key, text.slice(valueStart, i));
    skipWs();
    if (text[i] === ',') {
      i++;
      continue;
    }
    return members;
  }
}

type ResponseNode = Record<string, unknown> & { code?: unknown; msg?: unknown; sub_code?: unknown; sub_msg?: unknown };

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * Alipay gateway for one merchant application. Page pay builds a signed redirect URL without any
 * HTTP call; QR mode pre-creates the order and returns the code's content. Every answer we act on
 * (a QR code, a trade state, "no such trade") must carry Alipay's valid signature.
 */
export function createAlipayGateway(opts: AlipayOptions): PaymentGateway {
  const privateKey = loadRsaKey(opts.privateKeyPem, 'private', 'Alipay application private key');
  const alipayPublicKey = loadRsaKey(opts.alipayPublicKeyPem, 'public', 'Alipay public key');
  const gatewayUrl = opts.gatewayUrl ?? ALIPAY_GATEWAY_URL;
  const doFetch = opts.fetch ?? fetch;
  const clock = opts.clock ?? (() => new Date());
  const timeoutMs = opts.timeoutMs ?? 10_000;

  const fail = (message: string, code?: string, cause?: unknown) => new PaymentGatewayError('alipay', message, code, cause === undefined ? undefined : { cause });

  function signedParams(method: string, bizContent: Record<string, unknown>, extra: Params = {}): Params {
    const params: Params = {
      app_id: opts.appId,
      method,
      format: 'JSON',
      charset: 'utf-8',
      sign_type: 'RSA2',
      timestamp: alipayTime(clock()),
      version: '1.0',
      ...extra,
      biz_content: JSON.stringify(bizContent),
    };
    params.sign = rsa2Sign(alipaySignContent(params), privateKey);
    return params;
  }

  /** Verifies a synchronous answer's `sign` over the raw text of its response node. */
  function verifyNodeText(raw: string, sign: string): boolean {
    if (rsa2Verify(raw, sign, alipayPublicKey)) return true;
    // Alipay's own SDKs retry with `\/` unescaped: some gateway answers escape '/' in the text
    // they send but signed the unescaped form. It is the same JSON value either way.
    return raw.includes('\\/') && rsa2Verify(raw.replaceAll('\\/', '/'), sign, alipayPublicKey);
  }

  /**
   * POSTs a signed request and returns its verified response node. An error answer without a
   * signature (Alipay can't sign when it couldn't identify the app) is thrown as the error it
   * reports; any signed answer that fails verification, and any unsigned success, is refused.
   */
  async function call(method: string, bizContent: Record<string, unknown>, extra: Params = {}): Promise<ResponseNode> {
    const body = new URLSearchParams(signedParams(method, bizContent, extra)).toString();
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

    let members: Map<string, string>;
    try {
      JSON.parse(text);
      members = topLevelJsonMembers(text);
    } catch (err) {
      throw fail(`Alipay answered something that is not JSON (HTTP ${res.status})`, undefined, err);
    }
    const nodeName = `${method.replaceAll('.', '_')}_response`;
    const raw = members.get(nodeName) ?? members.get('error_response');
    if (raw === undefined) throw fail(`Alipay answer has no ${nodeName}`);
    const node = JSON.parse(raw) as unknown;
    if (typeof node !== 'object' || node === null || Array.isArray(node)) throw fail(`Alipay ${nodeName} is not an object`);
    const result = node as ResponseNode;

    const signRaw = members.get('sign');
    const sign = signRaw === undefined ? undefined : str(JSON.parse(signRaw));
    if (!sign) {
      if (result.code === '10000') throw fail(`Alipay ${method} answered success without a signature`);
      throw errorOf(method, result, ' (unsigned answer)');
    }
    if (!verifyNodeText(raw, sign)) throw fail(`Alipay ${method} answer signature does not verify`, 'INVALID_SIGNATURE');
    return result;
  }

  function errorOf(method: string, node: ResponseNode, suffix = ''): PaymentGatewayError {
    const message = str(node.sub_msg) ?? str(node.msg) ?? 'unknown error';
    const code = str(node.sub_code) ?? str(node.code);
    return fail(`Alipay ${method} refused: ${message}${code ? ` (${code})` : ''}${suffix}`, code);
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
        const params = signedParams('alipay.trade.page.pay', { ...biz, product_code: 'FAST_INSTANT_TRADE_PAY' }, { notify_url: input.notifyUrl, return_url: input.returnUrl });
        // encodeURIComponent rather than URLSearchParams: a space as %20, not '+', leaves no doubt
        // about how the gateway decodes the signed values.
        const query = Object.entries(params)
          .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
          .join('&');
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
        // Documented content keeps empty parameters; Alipay's request-side rule drops them. A
        // notification carrying an empty value is accepted under either reading, both being
        // Alipay's signature over the same non-empty values.
        const verified =
          rsa2Verify(alipayNotifyContent(params), sign, alipayPublicKey) ||
          (Object.values(params).includes('') && rsa2Verify(alipayNotifyContent(params, true), sign, alipayPublicKey));
        if (!verified) return { ok: false, reason: 'bad signature' };

        if (params.app_id !== opts.appId) return { ok: false, reason: `app_id mismatch (${params.app_id ?? 'missing'})` };
        if (opts.sellerId !== undefined && params.seller_id !== opts.sellerId) return { ok: false, reason: `seller_id mismatch (${params.seller_id ?? 'missing'})` };
        const outTradeNo = params.out_trade_no;
        if (!outTradeNo) return { ok: false, reason: 'missing out_trade_no' };
        const tradeNo = params.trade_no;
        if (!tradeNo) return { ok: false, reason: 'missing trade_no' };
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
      let amount: number;
      try {
        amount = yuanToUnits(str(node.total_amount) ?? '');
      } catch (err) {
        throw fail(`Alipay ${method} answered a malformed total_amount ${JSON.stringify(node.total_amount ?? null)}`, undefined, err);
      }
      return { status, amount, gatewayTradeNo: str(node.trade_no) };
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
