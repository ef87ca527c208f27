import crypto, { type KeyObject } from 'node:crypto';
import type { Clock } from '../../lib/clock.ts';
import { assertPayableUnits, fenToUnits, unitsToFen } from '@suanli/domain/money';
import {
  type NotifyResult,
  type PaymentGateway,
  PaymentGatewayError,
  type QueryResult,
  type RefundQueryResult,
  type RefundResult,
  type RefundStatus,
  type VerifiedNotify,
  type VerifiedRefundNotify,
} from './port.ts';

/**
 * WeChat Pay API v3, Native payment (QR code), with Node's crypto: v3 is SHA256withRSA over a
 * newline-joined message plus AES-256-GCM, both built in (the tests check every message against
 * the official wechatpay-axios-plugin and wechatpay-node-v3). WeChat Pay signs with one of
 * several keys, named by the Wechatpay-Serial header: platform certificates (平台证书), which
 * rotate and are fetched from GET /v3/certificates, and the WeChat Pay public key (微信支付公钥,
 * id PUB_KEY_ID_...), configured once. The gateway holds them as a set keyed by serial.
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
  /** The APIv3 key set in the merchant platform: exactly 32 bytes, the AES-256-GCM key of notifications and certificates. */
  apiV3Key: string;
  /** Public-key mode: the WeChat Pay public key id (PUB_KEY_ID_...) and the key, PEM. */
  publicKeyId?: string;
  publicKeyPem?: string;
  /**
   * A platform certificate (or public key) to start with, and its serial (or PUB_KEY_ID_...). In
   * certificate mode it may be left out: certificates are fetched from /v3/certificates.
   */
  platformPublicKeyPem?: string;
  platformSerialNo?: string;
  /**
   * Fetch platform certificates from /v3/certificates (at first need, every
   * `certificateRefreshMs`, and when a message names an unknown serial, at most once a minute).
   * Defaults to on unless only a WeChat Pay public key is configured.
   */
  downloadCertificates?: boolean;
  certificateRefreshMs?: number;
  /** Defaults to the production endpoint; api2.mch.weixin.qq.com is the documented fallback. */
  baseUrl?: string;
  /** Injected in tests; the global fetch otherwise. */
  fetch?: typeof fetch;
  /** Source of request timestamps and of "now" for replay checks and refresh timing; injected in tests. */
  clock?: Clock;
  /** Source of request nonces (must differ per request); injected in tests. */
  nonce?: () => string;
  /** Give up on a stalled gateway instead of holding the user's request open. */
  timeoutMs?: number;
};

/** Certificates are fetched again this often (WeChat Pay announces a rotation weeks ahead). */
export const WECHATPAY_CERT_REFRESH_MS = 12 * 3_600_000;
/** A message naming an unknown serial triggers at most one certificate fetch in this long. */
export const WECHATPAY_CERT_RETRY_MS = 60_000;

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

const REFUND_STATUS: Partial<Record<string, RefundStatus>> = {
  SUCCESS: 'succeeded',
  PROCESSING: 'processing',
  // Closed, or 退款异常 (the payer's card or balance account refused it): the money stays with the merchant.
  CLOSED: 'failed',
  ABNORMAL: 'failed',
};

type PlatformKey = { key: KeyObject; source: 'configured' | 'downloaded'; expiresAt?: number };

/** Serials are hex (certificates) or PUB_KEY_ID_... (public key): compared without case. */
const serialKey = (serial: string) => serial.trim().toUpperCase();
const isPublicKeyId = (serial: string) => serialKey(serial).startsWith('PUB_KEY_ID_');

/**
 * WeChat Pay v3 Native gateway for one merchant. Requests are signed with the merchant API key;
 * every answer and notification we act on must carry WeChat Pay's signature, made within the last
 * five minutes, under the platform key its Wechatpay-Serial names — including its deliberate probes
 * (WECHATPAY/SIGNTEST/...), which must be and are refused.
 */
export function createWechatGateway(opts: WechatPayOptions): PaymentGateway & { refreshCertificates(): Promise<number> } {
  if (Buffer.byteLength(opts.apiV3Key, 'utf8') !== 32) throw new Error('WeChat Pay apiV3Key must be exactly 32 bytes');
  const merchantKey = loadMerchantKey(opts.merchantPrivateKeyPem);
  const baseUrl = (opts.baseUrl ?? WECHATPAY_BASE_URL).replace(/\/+$/, '');
  const doFetch = opts.fetch ?? fetch;
  const clock = opts.clock ?? (() => new Date());
  const nonce = opts.nonce ?? (() => crypto.randomBytes(16).toString('hex').toUpperCase());
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const refreshEvery = opts.certificateRefreshMs ?? WECHATPAY_CERT_REFRESH_MS;

  /** The platform keys by serial: configured ones, and certificates fetched from /v3/certificates. */
  const keys = new Map<string, PlatformKey>();
  if (opts.publicKeyId !== undefined || opts.publicKeyPem !== undefined) {
    if (!opts.publicKeyId || !opts.publicKeyPem) throw new Error('WeChat Pay public-key mode needs both publicKeyId (PUB_KEY_ID_...) and publicKeyPem');
    if (!isPublicKeyId(opts.publicKeyId)) throw new Error(`WeChat Pay publicKeyId must start with PUB_KEY_ID_ (got ${opts.publicKeyId})`);
    keys.set(serialKey(opts.publicKeyId), { key: loadPlatformKey(opts.publicKeyPem, opts.publicKeyId), source: 'configured' });
  }
  if (opts.platformPublicKeyPem !== undefined || opts.platformSerialNo !== undefined) {
    if (!opts.platformPublicKeyPem || !opts.platformSerialNo) throw new Error('WeChat Pay platform key needs both platformPublicKeyPem and platformSerialNo');
    keys.set(serialKey(opts.platformSerialNo), { key: loadPlatformKey(opts.platformPublicKeyPem, opts.platformSerialNo), source: 'configured' });
  }
  const onlyPublicKey = keys.size > 0 && [...keys.keys()].every(isPublicKeyId);
  const download = opts.downloadCertificates ?? !onlyPublicKey;
  if (keys.size === 0 && !download) throw new Error('WeChat Pay: configure the WeChat Pay public key (publicKeyId, publicKeyPem) or allow platform certificate download');

  /** When the scheduled refresh is next due: at once with no key held, else one period after start. */
  let refreshDue = keys.size === 0 ? Number.NEGATIVE_INFINITY : (opts.clock ?? (() => new Date()))().getTime() + refreshEvery;
  /** Last fetch caused by an unknown serial (something anyone can send): at most one a minute. */
  let lastOnDemand = Number.NEGATIVE_INFINITY;
  let inflight: Promise<number> | undefined;

  const fail = (message: string, code?: string, cause?: unknown) => new PaymentGatewayError('wechat', message, code, cause === undefined ? undefined : { cause });
  const now = () => clock().getTime();

  function keyFor(serial: string): KeyObject | undefined {
    const entry = keys.get(serialKey(serial));
    if (!entry) return undefined;
    if (entry.expiresAt !== undefined && entry.expiresAt < now()) return undefined;
    return entry.key;
  }

  /**
   * Fetches the platform certificates once (concurrent callers share the fetch). Each certificate
   * arrives encrypted under the APIv3 key, so only WeChat Pay (or the merchant) can have made it;
   * the answer must also be signed by a key we hold or one of the certificates it brings.
   */
  function refreshCertificates(): Promise<number> {
    inflight ??= fetchCertificates()
      .then((n) => {
        refreshDue = now() + refreshEvery;
        return n;
      }, (err: unknown) => {
        // Try again in a minute rather than at every message.
        refreshDue = Math.max(refreshDue, now() + WECHATPAY_CERT_RETRY_MS);
        throw err;
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  }

  async function fetchCertificates(): Promise<number> {
    const what = 'certificate download';
    const answer = await send(what, 'GET', '/v3/certificates');
    if (answer.status !== 200 || !answer.json) throw errorOf(what, answer);
    const data = answer.json.data;
    if (!Array.isArray(data)) throw fail(`WeChat Pay ${what} answered without data`);
    const fetched = new Map<string, PlatformKey>();
    for (const item of data) {
      if (!isRecord(item) || !isRecord(item.encrypt_certificate)) throw fail(`WeChat Pay ${what} answered a malformed certificate entry`);
      const serial = str(item.serial_no);
      const enc = item.encrypt_certificate;
      const ciphertext = str(enc.ciphertext);
      const certNonce = str(enc.nonce);
      if (!serial || !ciphertext || !certNonce || enc.algorithm !== 'AEAD_AES_256_GCM') throw fail(`WeChat Pay ${what} answered a malformed certificate entry`);
      let cert: crypto.X509Certificate;
      try {
        cert = new crypto.X509Certificate(decryptWechatResource({ ciphertext, nonce: certNonce, associated_data: str(enc.associated_data) ?? '' }, opts.apiV3Key));
      } catch (err) {
        throw fail(`WeChat Pay ${what}: certificate ${serial} does not decrypt under the APIv3 key`, 'DECRYPT_FAILED', err);
      }
      if (serialKey(cert.serialNumber) !== serialKey(serial)) throw fail(`WeChat Pay ${what}: certificate ${serial} holds serial ${cert.serialNumber}`);
      if (cert.publicKey.asymmetricKeyType !== 'rsa') continue;
      fetched.set(serialKey(serial), { key: cert.publicKey, source: 'downloaded', expiresAt: Date.parse(cert.validTo) });
    }
    const problem = signatureProblem(answer.header, answer.text, (serial) => fetched.get(serialKey(serial))?.key ?? keyFor(serial));
    if (problem) throw fail(`WeChat Pay ${what} answer refused: ${problem}`, 'INVALID_SIGNATURE');
    for (const [serial, key] of fetched) if (keys.get(serial)?.source !== 'configured') keys.set(serial, key);
    return fetched.size;
  }

  /** Keeps downloaded certificates fresh: in the background when some key is held, awaited when none is. */
  async function keepFresh(): Promise<void> {
    if (!download || inflight || now() < refreshDue) return;
    refreshDue = now() + WECHATPAY_CERT_RETRY_MS;
    const pending = refreshCertificates().catch(() => 0);
    if (keys.size === 0) await pending;
  }

  /** The key a message's serial names, fetching certificates once (at most once a minute) for an unknown one. */
  async function resolveKey(serial: string | undefined): Promise<void> {
    await keepFresh();
    if (!serial || keyFor(serial) || !download || isPublicKeyId(serial)) return;
    if (inflight) await inflight.catch(() => 0);
    if (keyFor(serial) || now() - lastOnDemand < WECHATPAY_CERT_RETRY_MS) return;
    lastOnDemand = now();
    await refreshCertificates().catch(() => 0);
  }

  /** Why a signed message (answer or notification) is not WeChat Pay's, or undefined when it is. */
  function signatureProblem(header: HeaderLookup, body: string, lookup: (serial: string) => KeyObject | undefined = keyFor): string | undefined {
    const timestamp = header('wechatpay-timestamp');
    const nonceHeader = header('wechatpay-nonce');
    const signature = header('wechatpay-signature');
    const serial = header('wechatpay-serial');
    if (!timestamp || !nonceHeader || !signature || !serial) return 'missing Wechatpay-Timestamp/Nonce/Signature/Serial headers';
    // WeChat Pay sends these on purpose to check that merchants really verify.
    if (signature.startsWith(PROBE_PREFIX)) return 'bad signature (WECHATPAY/SIGNTEST probe)';
    const key = lookup(serial);
    if (!key) return `unknown Wechatpay-Serial ${serial}`;
    let valid = false;
    if (BASE64.test(signature)) {
      try {
        valid = crypto.verify('sha256', Buffer.from(wechatResponseMessage(timestamp, nonceHeader, body), 'utf8'), key, Buffer.from(signature, 'base64'));
      } catch {
        valid = false;
      }
    }
    if (!valid) return 'bad signature';
    // Checked after the signature, which covers the timestamp: a genuine message replayed later.
    if (!/^\d{1,12}$/.test(timestamp)) return `malformed Wechatpay-Timestamp ${timestamp}`;
    const skew = Math.abs(Math.floor(now() / 1000) - Number(timestamp));
    if (skew > WECHATPAY_MAX_SKEW_SECONDS) return `stale Wechatpay-Timestamp (${skew} s from now)`;
    return undefined;
  }

  type Sent = { status: number; ok: boolean; text: string; json: Record<string, unknown> | undefined; header: HeaderLookup };
  type Answer = Sent & { verified: boolean };

  /** Signs and sends a request; the answer's signature is left to the caller. */
  async function send(what: string, method: 'GET' | 'POST', pathWithQuery: string, body?: Record<string, unknown>): Promise<Sent> {
    const url = new URL(baseUrl + pathWithQuery);
    const bodyText = body === undefined ? '' : JSON.stringify(body);
    const timestamp = String(Math.floor(now() / 1000));
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
    if (!res.ok && !json) throw fail(`WeChat Pay ${what} answered HTTP ${res.status}`);
    const headersOf = res.headers;
    return { status: res.status, ok: res.ok, text, json, header: (name) => headersOf.get(name) ?? undefined };
  }

  async function request(what: string, method: 'GET' | 'POST', pathWithQuery: string, body?: Record<string, unknown>): Promise<Answer> {
    const sent = await send(what, method, pathWithQuery, body);
    await resolveKey(sent.header('wechatpay-serial'));
    const problem = signatureProblem(sent.header, sent.text);
    if (sent.ok && problem) throw fail(`WeChat Pay ${what} answer refused: ${problem}`, 'INVALID_SIGNATURE');
    return { ...sent, verified: !problem };
  }

  function errorOf(what: string, answer: Sent): PaymentGatewayError {
    const code = str(answer.json?.code);
    const message = str(answer.json?.message) ?? `HTTP ${answer.status}`;
    return fail(`WeChat Pay ${what} refused: ${message}${code ? ` (${code})` : ''}`, code);
  }

  function checkIdentity(what: string, tx: Record<string, unknown>, outTradeNo: string): void {
    if (tx.mchid !== opts.mchId) throw fail(`WeChat Pay ${what} answered for another merchant (${String(tx.mchid)})`);
    if (tx.appid !== opts.appId) throw fail(`WeChat Pay ${what} answered for another appid (${String(tx.appid)})`);
    if (tx.out_trade_no !== outTradeNo) throw fail(`WeChat Pay ${what} answered for another order (${String(tx.out_trade_no)})`);
  }

  function fenField(what: string, field: string, value: unknown): number {
    try {
      return fenToUnits(value as number);
    } catch (err) {
      throw fail(`WeChat Pay ${what} answered a malformed ${field} ${JSON.stringify(value ?? null)}`, undefined, err);
    }
  }

  /** A refund as WeChat Pay answers it (create, query): checked to be the one asked about. */
  function refundOf(what: string, r: Record<string, unknown>, outRefundNo: string, outTradeNo?: string): RefundResult {
    if (r.out_refund_no !== outRefundNo) throw fail(`WeChat Pay ${what} answered for another refund (${String(r.out_refund_no)})`);
    if (outTradeNo !== undefined && r.out_trade_no !== undefined && r.out_trade_no !== outTradeNo) throw fail(`WeChat Pay ${what} answered for another order (${String(r.out_trade_no)})`);
    const status = REFUND_STATUS[str(r.status) ?? ''];
    if (!status) throw fail(`WeChat Pay ${what} answered an unknown refund status ${String(r.status)}`);
    const amount = fenField(what, 'amount.refund', isRecord(r.amount) ? r.amount.refund : undefined);
    return { outRefundNo, status, amount, gatewayRefundNo: str(r.refund_id) };
  }

  /** The decrypted resource of a REFUND.* notification. */
  function refundNotify(r: Record<string, unknown>, eventType: string): NotifyResult {
    if (r.mchid !== opts.mchId) return { ok: false, reason: `mchid mismatch (${String(r.mchid ?? 'missing')})` };
    const outTradeNo = str(r.out_trade_no);
    const outRefundNo = str(r.out_refund_no);
    if (!outTradeNo || !outRefundNo) return { ok: false, reason: 'missing out_trade_no or out_refund_no' };
    const status = REFUND_STATUS[str(r.refund_status) ?? ''];
    if (!status) return { ok: false, reason: `unknown refund_status ${String(r.refund_status ?? '(missing)')} (${eventType})` };
    const amount = isRecord(r.amount) ? r.amount : undefined;
    let units: number;
    try {
      units = fenToUnits(amount?.refund as number);
    } catch {
      return { ok: false, reason: `malformed amount.refund ${JSON.stringify(amount?.refund ?? null)}` };
    }
    const refund: VerifiedRefundNotify = { outTradeNo, outRefundNo, gatewayRefundNo: str(r.refund_id), amount: units, cumulative: false, status, raw: r };
    return { ok: true, kind: 'refund', refund };
  }

  return {
    method: 'wechat',
    refreshCertificates,

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
        const header: HeaderLookup = (name) => lower.get(name);
        await resolveKey(header('wechatpay-serial'));
        const problem = signatureProblem(header, body);
        if (problem) return { ok: false, reason: problem };

        let envelope: unknown;
        try {
          envelope = JSON.parse(body);
        } catch {
          return { ok: false, reason: 'body is not JSON' };
        }
        if (!isRecord(envelope) || !isRecord(envelope.resource)) return { ok: false, reason: 'no resource in the notification' };
        const eventType = str(envelope.event_type);
        const isRefund = eventType?.startsWith('REFUND.') === true;
        if (!isRefund && !eventType?.startsWith('TRANSACTION.')) return { ok: false, reason: `not a payment or refund notification (event_type ${eventType ?? 'missing'})` };
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
        if (isRefund) return refundNotify(parsed, eventType ?? '');
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
      // v3: 200/204 without a body means received; 4xx or 5xx with a FAIL body makes WeChat Pay
      // retry (15s, 15s, 30s, 3m, ... over 24 h). 400, not 500: a refusal is not a server fault.
      return ok
        ? { status: 204, contentType: 'text/plain', body: '' }
        : { status: 400, contentType: 'application/json', body: JSON.stringify({ code: 'FAIL', message: '失败' }) };
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
      const amount = total === undefined ? undefined : fenField(what, 'amount.total', total);
      return { status, amount, gatewayTradeNo: str(tx.transaction_id) };
    },

    async refund(input): Promise<RefundResult> {
      assertPayableUnits(input.amount);
      assertPayableUnits(input.totalAmount);
      if (input.amount <= 0 || input.amount > input.totalAmount) throw new RangeError('a refund needs a positive amount no larger than the payment');
      const body: Record<string, unknown> = {
        out_trade_no: input.outTradeNo,
        out_refund_no: input.outRefundNo,
        amount: { refund: unitsToFen(input.amount), total: unitsToFen(input.totalAmount), currency: 'CNY' },
      };
      if (input.reason) body.reason = input.reason;
      if (input.notifyUrl) body.notify_url = input.notifyUrl;
      const what = 'refund';
      const answer = await request(what, 'POST', '/v3/refund/domestic/refunds', body);
      if (answer.status < 200 || answer.status >= 300 || !answer.json) throw errorOf(what, answer);
      return refundOf(what, answer.json, input.outRefundNo, input.outTradeNo);
    },

    async queryRefund(outTradeNo, outRefundNo): Promise<RefundQueryResult> {
      const what = 'refund query';
      const answer = await request(what, 'GET', `/v3/refund/domestic/refunds/${encodeURIComponent(outRefundNo)}`);
      if (answer.status === 404 && answer.json?.code === 'RESOURCE_NOT_EXISTS') {
        if (!answer.verified) throw fail(`WeChat Pay ${what} answered RESOURCE_NOT_EXISTS without a valid signature`, 'INVALID_SIGNATURE');
        return { outRefundNo, status: 'not_found' };
      }
      if (answer.status < 200 || answer.status >= 300 || !answer.json) throw errorOf(what, answer);
      return refundOf(what, answer.json, outRefundNo, outTradeNo);
    },

    async closePayment(outTradeNo): Promise<void> {
      const what = 'order close';
      const answer = await request(what, 'POST', `/v3/pay/transactions/out-trade-no/${encodeURIComponent(outTradeNo)}/close`, { mchid: opts.mchId });
      if (answer.status >= 200 && answer.status < 300) return;
      // Nothing at WeChat Pay to pay, so nothing to close — on WeChat Pay's signed word only.
      if (answer.status === 404 && answer.json?.code === 'ORDER_NOT_EXIST' && answer.verified) return;
      throw errorOf(what, answer);
    },
  };
}
