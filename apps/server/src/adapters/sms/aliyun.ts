import crypto from 'node:crypto';
import type { Clock } from '../../lib/clock.ts';
import type { SmsSender } from './port.ts';

export type AliyunSmsOptions = {
  accessKeyId: string;
  accessKeySecret: string;
  signName: string;
  templateCode: string;
  /** Dysmsapi endpoint, e.g. https://dysmsapi.aliyuncs.com/ */
  endpoint: string;
  /** Injected in tests; the global fetch otherwise. */
  fetch?: typeof fetch;
  /** Source of the signed Timestamp; injected in tests. */
  clock?: Clock;
  /** Source of SignatureNonce (must differ per request: Aliyun refuses a replayed nonce). */
  nonce?: () => string;
  /** Give up on a stalled gateway instead of holding the user's request open. */
  timeoutMs?: number;
};

/** A refusal or failure of the SMS gateway, with Aliyun's own code and message for the logs. */
export class AliyunSmsError extends Error {
  constructor(
    message: string,
    readonly code?: string,
    readonly requestId?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'AliyunSmsError';
  }
}

/**
 * Aliyun's POP percent-encoding (RFC 3986 unreserved set only): encodeURIComponent also leaves
 * `!'()*` alone, which Aliyun encodes, so those are fixed up; a space is %20, never '+'.
 */
export function percentEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Parameters sorted by name (byte order) and joined as encoded `k=v` pairs; Signature excluded. */
export function canonicalQuery(params: Record<string, string>): string {
  return Object.keys(params)
    .filter((k) => k !== 'Signature')
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((k) => `${percentEncode(k)}=${percentEncode(params[k] ?? '')}`)
    .join('&');
}

/** RPC signature v1.0: StringToSign = METHOD&%2F&encode(canonical query), HMAC-SHA1 keyed by `secret&`. */
export function stringToSign(method: 'GET' | 'POST', params: Record<string, string>): string {
  return `${method}&${percentEncode('/')}&${percentEncode(canonicalQuery(params))}`;
}

export function signRpc(method: 'GET' | 'POST', params: Record<string, string>, accessKeySecret: string): string {
  return crypto.createHmac('sha1', `${accessKeySecret}&`).update(stringToSign(method, params), 'utf8').digest('base64');
}

/** Aliyun wants ISO 8601 UTC without milliseconds: 2017-07-12T02:42:19Z. */
const aliyunTimestamp = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

type SendSmsResponse = { Code?: unknown; Message?: unknown; RequestId?: unknown; BizId?: unknown };

/**
 * Aliyun SMS (Dysmsapi 2017-05-25, SendSms) over a signed RPC GET. The template must take one
 * variable named `code`. Any answer other than Code 'OK' throws with Aliyun's Message.
 */
export function createAliyunSms(opts: AliyunSmsOptions): SmsSender {
  const doFetch = opts.fetch ?? fetch;
  const clock = opts.clock ?? (() => new Date());
  const nonce = opts.nonce ?? (() => crypto.randomUUID());
  const timeoutMs = opts.timeoutMs ?? 10_000;

  return {
    name: 'aliyun',
    async sendCode({ phone, code, signName }) {
      const params: Record<string, string> = {
        AccessKeyId: opts.accessKeyId,
        Action: 'SendSms',
        Format: 'JSON',
        PhoneNumbers: phone,
        RegionId: 'cn-hangzhou',
        SignName: signName ?? opts.signName,
        SignatureMethod: 'HMAC-SHA1',
        SignatureNonce: nonce(),
        SignatureVersion: '1.0',
        TemplateCode: opts.templateCode,
        TemplateParam: JSON.stringify({ code }),
        Timestamp: aliyunTimestamp(clock()),
        Version: '2017-05-25',
      };
      const signature = signRpc('GET', params, opts.accessKeySecret);
      const url = new URL(opts.endpoint);
      url.search = `Signature=${percentEncode(signature)}&${canonicalQuery(params)}`;

      let res: Response;
      try {
        res = await doFetch(url, { method: 'GET', headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
      } catch (err) {
        throw new AliyunSmsError(`Aliyun SMS unreachable: ${err instanceof Error ? err.message : String(err)}`, undefined, undefined, { cause: err });
      }
      // Aliyun answers refusals (bad signature, throttling) with a 4xx *and* a JSON body naming
      // the Code, so the body is read whatever the status.
      const text = await res.text().catch(() => '');
      let body: SendSmsResponse | undefined;
      try {
        body = JSON.parse(text) as SendSmsResponse;
      } catch {
        body = undefined;
      }
      const requestId = typeof body?.RequestId === 'string' ? body.RequestId : undefined;
      if (!body || typeof body.Code !== 'string') {
        throw new AliyunSmsError(`Aliyun SMS answered HTTP ${res.status} without a result code`, undefined, requestId);
      }
      if (body.Code !== 'OK') {
        const message = typeof body.Message === 'string' ? body.Message : body.Code;
        throw new AliyunSmsError(`Aliyun SMS refused: ${message} (${body.Code})`, body.Code, requestId);
      }
    },
  };
}
