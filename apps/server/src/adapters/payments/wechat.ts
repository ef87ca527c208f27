import crypto, { type KeyObject } from 'node:crypto';
import type { Clock } from '../../lib/clock.ts';
import { assertPayableUnits, fenToUnits, unitsToFen } from '@suanli/domain/money';
import { type NotifyResult, type PaymentGateway, PaymentGatewayError, type QueryResult, type VerifiedNotify } from './port.ts';

/**
 * WeChat Pay API v3, Native payment (QR code), with Node's crypto only: v3 is SHA256withRSA over a
 * newline-joined message plus AES-256-GCM, both built in. The official Node SDK (wechatpay-node-v3)
 * bundles an HTTP client and x509 tooling for certificate download, which the platform public key
 * configured per tenant makes unnecessary.
 */
export const WECHATPAY_BASE_URL = 'https://api.mch.weixin.qq.com';

export type WechatPayOptions = {
  /** 商户号 (mchid). */
  mchId: string;
  /** The AppID bound to the merchant (a public account, mini program or open-platform app). */
  appId: string;
  /** Serial number of the merchant API certificate whose private key signs our requests. */
  merchantSerialNo: string;
  /** The merchant API private key (apiclient_key.pem), PEM. */
  merchantPrivateKeyPem: string;
  /** The APIv3 key set in the merchant platform: exactly 32 bytes, the AES-256-GCM key of notifications. */
  apiV3Key: string;
  /** WeChat Pay's public key (微信支付公钥) or platform certificate (平台证书), PEM. */
  platformPublicKeyPem: string;
  /** Its id: the public key ID (PUB_KEY_ID_...) or the certificate serial; answers and notifications must name it in Wechatpay-Serial. */
  platformSerialNo: string;
  /** Defaults to the production endpoint; api2.mch.weixin.qq.com is the documented fallback. */
  baseUrl?: string;
  /** Injected in tests; the global fetch otherwise. */
  fetch?: typeof fetch;
  /** Source of request timestamps and of "now" for replay checks; injected in tests. */
  clock?: Clock;
  /** Source of request nonces (must differ per request); injected in tests. */
  nonce?: () => string;
  /** Give up on a stalled gateway instead of holding the user's request open. */
  timeoutMs?: number;
};

/** WeChat Pay refuses, and we refuse, signed messages older or newer than this (replay window). */
export const WECHATPAY_MAX_SKEW_SECONDS = 300;

/** The message a v3 request signature covers: `METHOD\nPATH?QUERY\nTIMESTAMP\nNONCE\nBODY\n` (an empty line for no body). */
export function wechatRequestMessage(method: string, urlPathWithQuery: string, timestamp: string, nonce: string, body: string): string {
  return `${method}\n${urlPathWithQuery}\n${timestamp}\n${nonce}\n${body}\n`;
}

/** The message an answer's or notification's Wechatpay-Signature covers. */
export function wechatResponseMessage(timestamp: string, nonce: string, body: string): string {
  return `${timestamp}\n${nonce}\n${body}\n`;
}

export function wechatAuthorization(p: { mchId: string; nonce: string; signature: string; timestamp: string; serialNo: string }): string {
  return `WECHATPAY2-SHA256-RSA2048 mchid="${p.mchId}",nonce_str="${p.nonce}",signature="${p.signature}",timestamp="${p.timestamp}",serial_no="${p.serialNo}"`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** RFC 3339 in Beijing time, as WeChat Pay writes time_expire: 2018-06-08T10:34:56+08:00. */
export function wechatTime(date: Date): string {
  const ms = date.getTime();
  if (Number.isNaN(ms)) throw new RangeError('wechatTime: invalid date');
  const t = new Date(ms + 8 * 3_600_000);
  return `${t.getUTCFullYear()}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())}T${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())}+08:00`;
}

export type EncryptedResource = { algorithm?: string; ciphertext: string; nonce: string; associated_data?: string; original_type?: string };

/**
 * AEAD_AES_256_GCM as WeChat Pay uses it: key = the APIv3 key's bytes, IV = the nonce string's
 * bytes, AAD = associated_data, and the base64 ciphertext ends with the 16-byte tag. Throws when
 * the tag doesn't authenticate (wrong key, altered ciphertext, nonce or associated data).
 */
export function decryptWechatResource(resource: EncryptedResource, apiV3Key: string): string {
  const data = Buffer.from(resource.ciphertext, 'base64');
  if (data.length <= 16) throw new Error('ciphertext too short');
  const decipher = crypto.createDecipheriv('aes-256-gcm', Buffer.from(apiV3Key, 'utf8'), Buffer.from(resource.nonce, 'utf8'), { authTagLength: 16 });
  decipher.setAuthTag(data.subarray(data.length - 16));
  decipher.setAAD(Buffer.from(resource.associated_data ?? '', 'utf8'));
  return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString('utf8');
}

function loadPlatformKey(pem: string, serialNo: string): KeyObject {
  const text = pem.trim();
  if (/PRIVATE KEY/.test(text)) throw new Error('WeChat Pay platform key: this is a private key; the WeChat Pay public key or platform certificate is expected');
  let key: KeyObject;
  try {
    if (text.includes('BEGIN CERTIFICATE')) {
      const cert = new crypto.X509Certificate(text);
      // A platform certificate names its serial; catching a mismatch here beats refusing every
      // notification later with "unknown Wechatpay-Serial".
      if (cert.serialNumber.toUpperCase() !== serialNo.toUpperCase()) {
        throw new Error(`the certificate's serial ${cert.serialNumber} is not platformSerialNo ${serialNo}`);
      }
      key = cert.publicKey;
    } else {
      key = crypto.createPublicKey(text);
    }
  } catch (err) {
    throw new Error(`WeChat Pay platform key: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (key.asymmetricKeyType !== 'rsa') throw new Error('WeChat Pay platform key: expected an RSA key');
  return key;
}

function loadMerchantKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = crypto.createPrivateKey(pem.trim());
  } catch (err) {
    throw new Error(`WeChat Pay merchant private key: not a readable PEM private key (${err instanceof Error ? err.message : String(err)})`, { cause: err });
  }
  if (key.asymmetricKeyType !== 'rsa') throw new Error('WeChat Pay merchant private key: expected an RSA key');
  return key;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const PROBE_PREFIX = 'WECHATPAY/SIGNTEST/';

type HeaderLookup = (name: string) => string | undefined;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

const NOTIFY_STATUS: Partial<Record<string, VerifiedNotify['status']>> = {
  SUCCESS: 'paid',
  CLOSED: 'failed',
  PAYERROR: 'failed',
  REVOKED: 'failed',
  NOTPAY: 'pending',
  USERPAYING: 'pending',
};

const QUERY_STATUS: Partial<Record<string, QueryResult['status']>> = {
  SUCCESS: 'paid',
  // Paid, then (partly) refunded: the money did arrive, refunds are the ledger's business.
  REFUND: 'paid',
  NOTPAY: 'pending',
  USERPAYING: 'pending',
  CLOSED: 'closed',
  REVOKED: 'closed',
  PAYERROR: 'closed',
};

/**
 * WeChat Pay v3 Native gateway for one merchant. Requests are signed with the merchant API key;
 * every answer and notification we act on must carry WeChat Pay's signature, made within the last
 * five minutes, under the configured platform key — including its deliberate probes
 * (WECHATPAY/SIGNTEST/...), which must be and are refused.
 */
export function createWechatGateway(opts: WechatPayOptions): PaymentGateway {
  if (Buffer.byteLength(opts.apiV3Key, 'utf8') !== 32) throw new Error('WeChat Pay apiV3Key must be exactly 32 bytes');
  const merchantKey = loadMerchantKey(opts.merchantPrivateKeyPem);
  const platformKey = loadPlatformKey(opts.platformPublicKeyPem, opts.platformSerialNo);
  const baseUrl = (opts.baseUrl ?? WECHATPAY_BASE_URL).replace(/\/+$/, '');
  const doFetch = opts.fetch ?? fetch;
  const clock = opts.clock ?? (() => new Date());
  const nonce = opts.nonce ?? (() => crypto.randomBytes(16).toString('hex').toUpperCase());
  const timeoutMs = opts.timeoutMs ?? 10_000;

  const fail = (message: string, code?: string, cause?: unknown) => new PaymentGatewayError('wechat', message, code, cause === undefined ? undefined : { cause });

  /** Why a signed message (answer or notification) is not WeChat Pay's, or undefined when it is. */
  function signatureProblem(header: HeaderLookup, body: string): string | undefined {
    const timestamp = header('wechatpay-timestamp');
    const nonceHeader = header('wechatpay-nonce');
    const signature = header('wechatpay-signature');
    const serial = header('wechatpay-serial');
    if (!timestamp || !nonceHeader || !signature || !serial) return 'missing Wechatpay-Timestamp/Nonce/Signature/Serial headers';
    // WeChat Pay sends these on purpose to check that merchants really verify.
    if (signature.startsWith(PROBE_PREFIX)) return 'bad signature (WECHATPAY/SIGNTEST probe)';
    if (serial.toUpperCase() !== opts.platformSerialNo.toUpperCase()) return `unknown Wechatpay-Serial ${serial}`;
    let valid = false;
    if (BASE64.test(signature)) {
      try {
        valid = crypto.verify('sha256', Buffer.from(wechatResponseMessage(timestamp, nonceHeader, body), 'utf8'), platformKey, Buffer.from(signature, 'base64'));
      } catch {
        valid = false;
      }
    }
    if (!valid) return 'bad signature';
    // Checked after the signature, which covers the timestamp: a genuine message replayed later.
    if (!/^\d{1,12}$/.test(timestamp)) return `malformed Wechatpay-Timestamp ${timestamp}`;
    const skew = Math.abs(Math.floor(clock().getTime() / 1000) - Number(timestamp));
    if (skew > WECHATPAY_MAX_SKEW_SECONDS) return `stale Wechatpay-Timestamp (${skew} s from now)`;
    return undefined;
  }

  type Answer = { status: number; text: string; json: Record<string, unknown> | undefined; verified: boolean };

  async function request(what: string, method: 'GET' | 'POST', pathWithQuery: string, body?: Record<string, unknown>): Promise<Answer> {
    const url = new URL(baseUrl + pathWithQuery);
    const bodyText = body === undefined ? '' : JSON.stringify(body);
    const timestamp = String(Math.floor(clock().getTime() / 1000));
    const nonceStr = nonce();
    const signature = crypto.sign('sha256', Buffer.from(wechatRequestMessage(method, url.pathname + url.search, timestamp, nonceStr, bodyText), 'utf8'), merchantKey).toString('base64');
    const headers: Record<string, string> = {
      authorization: wechatAuthorization({ mchId: opts.mchId, nonce: nonceStr, signature, timestamp, serialNo: opts.merchantSerialNo }),
      accept: 'application/json',
      // WeChat Pay refuses v3 requests without a User-Agent.
      'user-agent': 'suanli-server (WeChatPay-APIv3)',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';

    let res: Response;
    let text: string;
    try {
      res = await doFetch(url, { method, headers, body: body === undefined ? undefined : bodyText, signal: AbortSignal.timeout(timeoutMs) });
      text = await res.text();
    } catch (err) {
      throw fail(`WeChat Pay unreachable: ${err instanceof Error ? err.message : String(err)}`, undefined, err);
    }
    let json: Record<string, unknown> | undefined;
    try {
      const parsed = text === '' ? undefined : (JSON.parse(text) as unknown);
      json = isRecord(parsed) ? parsed : undefined;
    } catch {
      json = undefined;
    }
    const problem = signatureProblem((name) => res.headers.get(name) ?? undefined, text);
    if (res.ok && problem) throw fail(`WeChat Pay ${what} answer refused: ${problem}`, 'INVALID_SIGNATURE');
    if (!res.ok && !json) throw fail(`WeChat Pay ${what} answered HTTP ${res.status}`);
    return { status: res.status, text, json, verified: !problem };
  }

  function errorOf(what: string, answer: Answer): PaymentGatewayError {
    const code = str(answer.json?.code);
    const message = str(answer.json?.message) ?? `HTTP ${answer.status}`;
    return fail(`WeChat Pay ${what} refused: ${message}${code ? ` (${code})` : ''}`, code);
  }

  function checkIdentity(what: string, tx: Record<string, unknown>, outTradeNo: string): void {
    if (tx.mchid !== opts.mchId) throw fail(`WeChat Pay ${what} answered for another merchant (${String(tx.mchid)})`);
    if (tx.appid !== opts.appId) throw fail(`WeChat Pay ${what} answered for another appid (${String(tx.appid)})`);
    if (tx.out_trade_no !== outTradeNo) throw fail(`WeChat Pay ${what} answered for another order (${String(tx.out_trade_no)})`);
  }

  return {
    method: 'wechat',

    async createPayment(input) {
      assertPayableUnits(input.amount);
      if (input.amount <= 0) throw new RangeError('WeChat Pay payments need a positive amount');
      const body: Record<string, unknown> = {
        appid: opts.appId,
        mchid: opts.mchId,
        description: input.subject,
        out_trade_no: input.outTradeNo,
        time_expire: wechatTime(input.expiresAt),
        notify_url: input.notifyUrl,
        amount: { total: unitsToFen(input.amount), currency: 'CNY' },
      };
      if (input.clientIp) body.scene_info = { payer_client_ip: input.clientIp };
      const what = 'native order';
      const answer = await request(what, 'POST', '/v3/pay/transactions/native', body);
      if (answer.status < 200 || answer.status >= 300) throw errorOf(what, answer);
      const codeUrl = str(answer.json?.code_url);
      if (!codeUrl) throw fail(`WeChat Pay ${what} answered without code_url`);
      return { qrCode: codeUrl };
    },

    async verifyNotify(req) {
      try {
        const lower = new Map(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), v]));
        const body = req.rawBody;
        if (typeof body !== 'string') return { ok: false, reason: 'missing body' };
        const problem = signatureProblem((name) => lower.get(name), body);
        if (problem) return { ok: false, reason: problem };

        let envelope: unknown;
        try {
          envelope = JSON.parse(body);
        } catch {
          return { ok: false, reason: 'body is not JSON' };
        }
        if (!isRecord(envelope) || !isRecord(envelope.resource)) return { ok: false, reason: 'no resource in the notification' };
        const eventType = str(envelope.event_type);
        // Refund notifications share the format but carry a refund, not a transaction.
        if (!eventType?.startsWith('TRANSACTION.')) return { ok: false, reason: `not a payment notification (event_type ${eventType ?? 'missing'})` };
        const resource = envelope.resource;
        if (resource.algorithm !== 'AEAD_AES_256_GCM') return { ok: false, reason: `unsupported resource algorithm ${String(resource.algorithm)}` };
        const ciphertext = str(resource.ciphertext);
        const resourceNonce = str(resource.nonce);
        if (!ciphertext || !resourceNonce) return { ok: false, reason: 'resource lacks ciphertext or nonce' };

        let plaintext: string;
        try {
          plaintext = decryptWechatResource({ ciphertext, nonce: resourceNonce, associated_data: str(resource.associated_data) ?? '' }, opts.apiV3Key);
        } catch {
          return { ok: false, reason: 'resource decryption failed (GCM tag does not authenticate)' };
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(plaintext);
        } catch {
          return { ok: false, reason: 'decrypted resource is not JSON' };
        }
        if (!isRecord(parsed)) return { ok: false, reason: 'decrypted resource is not an object' };
        const tx = parsed;

        if (tx.mchid !== opts.mchId) return { ok: false, reason: `mchid mismatch (${String(tx.mchid ?? 'missing')})` };
        if (tx.appid !== opts.appId) return { ok: false, reason: `appid mismatch (${String(tx.appid ?? 'missing')})` };
        const outTradeNo = str(tx.out_trade_no);
        if (!outTradeNo) return { ok: false, reason: 'missing out_trade_no' };
        const status = NOTIFY_STATUS[str(tx.trade_state) ?? ''];
        if (!status) return { ok: false, reason: `unknown trade_state ${String(tx.trade_state ?? '(missing)')}` };
        const transactionId = str(tx.transaction_id) ?? '';
        if (status === 'paid' && !transactionId) return { ok: false, reason: 'missing transaction_id' };
        const amount = isRecord(tx.amount) ? tx.amount : undefined;
        if (amount?.currency !== undefined && amount.currency !== 'CNY') return { ok: false, reason: `unexpected currency ${String(amount.currency)}` };
        let units: number;
        try {
          units = fenToUnits(amount?.total as number);
        } catch {
          return { ok: false, reason: `malformed amount.total ${JSON.stringify(amount?.total ?? null)}` };
        }
        const notify: VerifiedNotify = { outTradeNo, amount: units, gatewayTradeNo: transactionId, status, raw: tx };
        return { ok: true, notify } satisfies NotifyResult;
      } catch (err) {
        return { ok: false, reason: `notification not processed: ${err instanceof Error ? err.message : String(err)}` };
      }
    },

    notifyAck(ok) {
      // v3: 200/204 without a body means received; anything 4xx/5xx with a FAIL body makes
      // WeChat Pay retry (15s, 15s, 30s, 3m, ... over 24 h).
      return ok
        ? { status: 204, contentType: 'text/plain', body: '' }
        : { status: 500, contentType: 'application/json', body: JSON.stringify({ code: 'FAIL', message: '失败' }) };
    },

    async queryPayment(outTradeNo): Promise<QueryResult> {
      const what = 'order query';
      const answer = await request(what, 'GET', `/v3/pay/transactions/out-trade-no/${encodeURIComponent(outTradeNo)}?mchid=${encodeURIComponent(opts.mchId)}`);
      if (answer.status === 404 && answer.json?.code === 'ORDER_NOT_EXIST') {
        // "No such order" decides that a payment can be given up, so it must be WeChat Pay's word.
        if (!answer.verified) throw fail(`WeChat Pay ${what} answered ORDER_NOT_EXIST without a valid signature`, 'INVALID_SIGNATURE');
        return { status: 'not_found' };
      }
      if (answer.status < 200 || answer.status >= 300) throw errorOf(what, answer);
      const tx = answer.json;
      if (!tx) throw fail(`WeChat Pay ${what} answered something that is not a transaction`);
      checkIdentity(what, tx, outTradeNo);
      const tradeState = str(tx.trade_state);
      const status = tradeState === undefined ? undefined : QUERY_STATUS[tradeState];
      if (!status) throw fail(`WeChat Pay ${what} answered an unknown trade_state ${String(tx.trade_state)}`);
      const total = isRecord(tx.amount) ? tx.amount.total : undefined;
      let amount: number | undefined;
      if (total !== undefined) {
        try {
          amount = fenToUnits(total as number);
        } catch (err) {
          throw fail(`WeChat Pay ${what} answered a malformed amount.total ${JSON.stringify(total)}`, undefined, err);
        }
      }
      return { status, amount, gatewayTradeNo: str(tx.transaction_id) };
    },
  };
}
