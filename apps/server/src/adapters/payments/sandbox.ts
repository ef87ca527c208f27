import crypto, { type KeyObject } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../../lib/clock.ts';
import { assertPayableUnits } from '@suanli/domain/money';
import { PaymentGatewayError, type NotifyResult, type PaymentGateway, type QueryResult, type RefundInput, type RefundQueryResult, type RefundResult, type VerifiedNotify } from './port.ts';

/**
 * The built-in `sandbox` gateway (the default of `npm start`): a cashier page served by this
 * server where the payer chooses pay, fail or abandon, followed by an asynchronous notification
 * that is signed and delivered exactly like a real gateway's — SHA256withRSA under the sandbox's
 * own key pair (not the request-encryption key), POSTed over HTTP to the notify URL, retried with
 * back-off until acknowledged with `success`. So the whole real flow (order, redirect, notify,
 * verify, credit, result page) runs without a merchant account.
 *
 * What the sandbox "gateway" knows about a trade is kept in its notification job: the payer's
 * choice is recorded by enqueuing one persisted `sandbox.notify` job per order (first choice wins),
 * and queryPayment reads that job back. No extra table, it survives restarts, and — unlike the app's
 * own notification log — it exists even when delivery never succeeded, which is exactly when
 * reconciliation needs to ask.
 */

export const SANDBOX_NOTIFY_JOB = 'sandbox.notify';
/** Header carrying base64(SHA256withRSA(raw body)) of a notification. */
export const SANDBOX_SIGNATURE_HEADER = 'x-sandbox-signature';
/** Notifications signed longer ago (or further ahead) than this are refused as replays. */
export const SANDBOX_NOTIFY_MAX_AGE_MS = 5 * 60_000;
const KEY_FILE = 'sandbox-gateway.pem';

export type SandboxKeys = { privateKey: KeyObject; publicKey: KeyObject; source: 'data-dir' | 'memory' };

/** The payer's choice at the cashier, as the sandbox gateway remembers it. */
export type SandboxTrade = {
  outTradeNo: string;
  tradeNo: string;
  /** Units of 0.0001 yuan: what the payer was shown and "paid". */
  amount: number;
  status: 'paid' | 'failed';
  notifyUrl: string;
  settledAt: string;
};

/** Persistence of trades (implemented over the jobs table in modules/payment). */
export type SandboxTradeStore = {
  /**
   * Records the trade and schedules its notification (a SANDBOX_NOTIFY_JOB with
   * sandboxTradePayload(trade)) atomically, unless the order already has a trade; returns the one
   * on record, so a double click or a late "fail" can't change a settled trade.
   */
  recordOnce(trade: SandboxTrade): Promise<SandboxTrade>;
  find(outTradeNo: string): Promise<SandboxTrade | undefined>;
};

/** The JSON body of a notification. */
export type SandboxNotification = {
  out_trade_no: string;
  trade_no: string;
  amount: number;
  status: 'paid' | 'failed';
  /** ISO 8601 time of signing: each delivery attempt is signed afresh. */
  timestamp: string;
  nonce: string;
};

export type SandboxGateway = PaymentGateway & {
  readonly keySource: SandboxKeys['source'];
  /** HMAC of the order id put in the cashier URL, so a cashier URL can't be made up for another order. */
  cashierSignature(outTradeNo: string): string;
  verifyCashierSignature(outTradeNo: string, sig: string): boolean;
  trade(outTradeNo: string): Promise<SandboxTrade | undefined>;
  /** The payer chose pay or fail: record it (once) and schedule the signed notification. */
  settle(order: { outTradeNo: string; amount: number; notifyUrl: string }, status: SandboxTrade['status']): Promise<SandboxTrade>;
  /** Signs a notification body the way deliveries are signed. */
  sign(notification: SandboxNotification): { body: string; signature: string };
  /**
   * Job handler of SANDBOX_NOTIFY_JOB: one delivery attempt; throws unless acknowledged, so the queue
   * retries with back-off. `ctx.signal` (the job's deadline) aborts the request as well as `timeoutMs`.
   */
  deliver(payload: Record<string, unknown>, ctx?: { signal?: AbortSignal }): Promise<void>;
};

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStatus = (v: unknown): v is SandboxTrade['status'] => v === 'paid' || v === 'failed';
const isAmount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/** A trade as stored in its job payload (snake_case, like the notification it becomes). */
export function sandboxTradePayload(t: SandboxTrade): Record<string, unknown> {
  return { out_trade_no: t.outTradeNo, trade_no: t.tradeNo, amount: t.amount, status: t.status, notify_url: t.notifyUrl, settled_at: t.settledAt };
}

export function parseSandboxTrade(p: Record<string, unknown>): SandboxTrade | undefined {
  const { out_trade_no, trade_no, amount, status, notify_url, settled_at } = p;
  if (!nonEmpty(out_trade_no) || !nonEmpty(trade_no) || !isAmount(amount) || !isStatus(status) || !nonEmpty(notify_url) || !nonEmpty(settled_at)) return undefined;
  return { outTradeNo: out_trade_no, tradeNo: trade_no, amount, status, notifyUrl: notify_url, settledAt: settled_at };
}

/** Sandbox trade numbers look like a gateway's: date, then random digits. */
function newTradeNo(now: Date): string {
  const day = now.toISOString().slice(0, 10).replaceAll('-', '');
  return `SBX${day}${crypto.randomInt(0, 1e9).toString().padStart(9, '0')}${crypto.randomInt(0, 1e9).toString().padStart(9, '0')}`;
}

export function createSandboxGateway(deps: {
  keys: SandboxKeys;
  trades: SandboxTradeStore;
  clock: Clock;
  /** The cashier page's URL for an order, on the origin of its notify URL (the app's payment URLs). */
  cashierUrl: (origin: string, outTradeNo: string, sig: string) => string;
  fetch?: FetchLike;
  timeoutMs?: number;
}): SandboxGateway {
  const { keys, trades, clock } = deps;
  // Resolved per call, not captured: whoever replaces the global fetch (a proxy agent) is honoured.
  const doFetch: FetchLike = deps.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const timeoutMs = deps.timeoutMs ?? 10_000;
  // Derived from the private key, so the cashier links stay valid across restarts exactly as long as the key does.
  const cashierKey = Buffer.from(crypto.hkdfSync('sha256', keys.privateKey.export({ type: 'pkcs8', format: 'der' }), 'suanli', 'sandbox/cashier-link', 32));

  const cashierSignature = (outTradeNo: string) => crypto.createHmac('sha256', cashierKey).update(`cashier:${outTradeNo}`).digest('base64url');

  const refunds: SandboxRefunds = new Map();

  const sign = (n: SandboxNotification) => {
    const body = JSON.stringify(n);
    return { body, signature: crypto.sign('sha256', Buffer.from(body, 'utf8'), keys.privateKey).toString('base64') };
  };

  return {
    method: 'sandbox',
    keySource: keys.source,

    async createPayment(input) {
      assertPayableUnits(input.amount);
      let origin: string;
      try {
        // The cashier is served by the same server that receives the notification.
        origin = new URL(input.notifyUrl).origin;
      } catch (err) {
        throw new PaymentGatewayError('sandbox', `notifyUrl is not a URL: ${input.notifyUrl}`, undefined, { cause: err });
      }
      return { payUrl: deps.cashierUrl(origin, input.outTradeNo, cashierSignature(input.outTradeNo)) };
    },

    async verifyNotify(req): Promise<NotifyResult> {
      const signature = Object.entries(req.headers).find(([k]) => k.toLowerCase() === SANDBOX_SIGNATURE_HEADER)?.[1];
      if (!signature) return { ok: false, reason: 'missing signature header' };
      let valid: boolean;
      try {
        valid = crypto.verify('sha256', Buffer.from(req.rawBody, 'utf8'), keys.publicKey, Buffer.from(signature, 'base64'));
      } catch {
        valid = false;
      }
      if (!valid) return { ok: false, reason: 'bad signature' };

      let body: unknown;
      try {
        body = JSON.parse(req.rawBody);
      } catch {
        return { ok: false, reason: 'body is not JSON' };
      }
      if (!isRecord(body)) return { ok: false, reason: 'body is not an object' };
      const { out_trade_no, trade_no, amount, status, timestamp, nonce } = body;
      if (!nonEmpty(out_trade_no) || !nonEmpty(trade_no) || !nonEmpty(nonce)) return { ok: false, reason: 'missing out_trade_no, trade_no or nonce' };
      if (!isAmount(amount)) return { ok: false, reason: `malformed amount ${JSON.stringify(amount ?? null)}` };
      if (!isStatus(status)) return { ok: false, reason: `unknown status ${JSON.stringify(status ?? null)}` };
      const signedAt = typeof timestamp === 'string' ? Date.parse(timestamp) : Number.NaN;
      if (Number.isNaN(signedAt)) return { ok: false, reason: 'malformed timestamp' };
      // A signed body is valid forever; the time window is what stops a captured one being replayed later.
      if (Math.abs(clock().getTime() - signedAt) > SANDBOX_NOTIFY_MAX_AGE_MS) return { ok: false, reason: `stale timestamp ${timestamp as string}` };
      const notify: VerifiedNotify = { outTradeNo: out_trade_no, amount, gatewayTradeNo: trade_no, status, raw: body };
      return { ok: true, notify };
    },

    notifyAck(ok) {
      return ok ? { status: 200, contentType: 'text/plain', body: 'success' } : { status: 400, contentType: 'text/plain', body: 'fail' };
    },

    async queryPayment(outTradeNo): Promise<QueryResult> {
      const t = await trades.find(outTradeNo);
      // Like a page-pay trade at Alipay: unknown to the gateway until the payer acted at the cashier.
      if (!t) return { status: 'not_found' };
      return t.status === 'paid' ? { status: 'paid', amount: t.amount, gatewayTradeNo: t.tradeNo } : { status: 'closed', amount: t.amount, gatewayTradeNo: t.tradeNo };
    },

    refund: (input) => sandboxRefund(trades, refunds, input),
    queryRefund: async (outTradeNo, outRefundNo) => sandboxQueryRefund(refunds, outTradeNo, outRefundNo),
    closePayment: (outTradeNo) => sandboxClose(trades, outTradeNo),

    cashierSignature,

    verifyCashierSignature(outTradeNo, sig) {
      const expected = Buffer.from(cashierSignature(outTradeNo));
      const given = Buffer.from(sig);
      return given.length === expected.length && crypto.timingSafeEqual(given, expected);
    },

    trade: (outTradeNo) => trades.find(outTradeNo),

    async settle(order, status) {
      assertPayableUnits(order.amount);
      const now = clock();
      return trades.recordOnce({ outTradeNo: order.outTradeNo, tradeNo: newTradeNo(now), amount: order.amount, status, notifyUrl: order.notifyUrl, settledAt: now.toISOString() });
    },

    sign,

    async deliver(payload, ctx) {
      const trade = parseSandboxTrade(payload);
      if (!trade) throw new Error(`${SANDBOX_NOTIFY_JOB}: bad payload ${JSON.stringify(payload)}`);
      const { body, signature } = sign({
        out_trade_no: trade.outTradeNo,
        trade_no: trade.tradeNo,
        amount: trade.amount,
        status: trade.status,
        timestamp: clock().toISOString(),
        nonce: crypto.randomBytes(16).toString('hex'),
      });
      let res: Response;
      let text: string;
      try {
        res = await doFetch(trade.notifyUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [SANDBOX_SIGNATURE_HEADER]: signature },
          body,
          signal: ctx?.signal ? AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs),
        });
        text = await res.text();
      } catch (err) {
        throw new Error(`sandbox notify to ${trade.notifyUrl} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      // Like Alipay: only a 2xx whose body is exactly "success" stops the retries.
      if (!res.ok || text.trim() !== 'success') throw new Error(`sandbox notify to ${trade.notifyUrl} not acknowledged: HTTP ${res.status} ${text.slice(0, 200)}`);
    },
  };
}

async function generatePrivateKey(): Promise<KeyObject> {
  return new Promise((resolve, reject) =>
    crypto.generateKeyPair('rsa', { modulusLength: 2048 }, (err, _publicKey, privateKey) => (err ? reject(err) : resolve(privateKey))),
  );
}

const keysOf = (privateKey: KeyObject, source: SandboxKeys['source']): SandboxKeys => ({ privateKey, publicKey: crypto.createPublicKey(privateKey), source });

const isErrno = (err: unknown, ...codes: string[]) => err instanceof Error && 'code' in err && codes.includes(String(err.code));

/** A key pair for this process only (tests, or a data dir that can't be written). */
export async function generateSandboxKeys(): Promise<SandboxKeys> {
  return keysOf(await generatePrivateKey(), 'memory');
}

/**
 * `$DATA_DIR/keys/sandbox-gateway.pem`, generated (mode 0600) on first start. When DATA_DIR doesn't
 * exist or can't be written, the pair lives in memory: fine for one process, since every delivery
 * attempt is signed at send time with the key of the process that verifies it. Replicas must share
 * the file (the sandbox is the one-machine default anyway).
 */
export async function loadSandboxKeys(dataDir: string): Promise<SandboxKeys> {
  const file = path.join(dataDir, 'keys', KEY_FILE);
  try {
    return keysOf(crypto.createPrivateKey(await fs.readFile(file, 'utf8')), 'data-dir');
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw new Error(`sandbox gateway key ${file}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const privateKey = await generatePrivateKey();
  try {
    await fs.access(dataDir);
  } catch {
    return keysOf(privateKey, 'memory');
  }
  try {
    await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    // Written aside and hard-linked into place: of two processes starting together, one key wins and both use it.
    const temp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
    await fs.writeFile(temp, pem, { mode: 0o600, flag: 'wx' });
    try {
      await fs.link(temp, file);
    } catch (err) {
      if (!isErrno(err, 'EEXIST')) throw err;
      return keysOf(crypto.createPrivateKey(await fs.readFile(file, 'utf8')), 'data-dir');
    } finally {
      await fs.unlink(temp).catch(() => {});
    }
    return keysOf(privateKey, 'data-dir');
  } catch (err) {
    if (isErrno(err, 'EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'ENOENT')) return keysOf(privateKey, 'memory');
    throw err;
  }
}

// Refund and close (the port's; the sandbox moves no money). Refunds are kept in memory: what the
// sandbox remembers of them lasts as long as the process, which is all a test cashier needs.
type SandboxRefunds = Map<string, RefundResult & { outTradeNo: string }>;

async function sandboxRefund(trades: SandboxTradeStore, refunds: SandboxRefunds, input: RefundInput): Promise<RefundResult> {
  assertPayableUnits(input.amount);
  if (input.amount <= 0) throw new RangeError('a refund needs a positive amount');
  const known = refunds.get(input.outRefundNo);
  // The same refund number again is the same refund, as at a real gateway.
  if (known) return { outRefundNo: known.outRefundNo, status: known.status, amount: known.amount, gatewayRefundNo: known.gatewayRefundNo };
  const trade = await trades.find(input.outTradeNo);
  if (!trade || trade.status !== 'paid') throw new PaymentGatewayError('sandbox', `sandbox refund refused: ${input.outTradeNo} was not paid`, 'TRADE_NOT_PAID');
  const refunded = [...refunds.values()].filter((r) => r.outTradeNo === input.outTradeNo).reduce((sum, r) => sum + r.amount, 0);
  if (refunded + input.amount > trade.amount) throw new PaymentGatewayError('sandbox', 'sandbox refund refused: more than is left to refund', 'REFUND_AMOUNT_EXCEEDED');
  const result: RefundResult = { outRefundNo: input.outRefundNo, status: 'succeeded', amount: input.amount, gatewayRefundNo: `SBXR${crypto.randomInt(0, 1e9).toString().padStart(9, '0')}` };
  refunds.set(input.outRefundNo, { ...result, outTradeNo: input.outTradeNo });
  return result;
}

function sandboxQueryRefund(refunds: SandboxRefunds, outTradeNo: string, outRefundNo: string): RefundQueryResult {
  const r = refunds.get(outRefundNo);
  if (!r || r.outTradeNo !== outTradeNo) return { outRefundNo, status: 'not_found' };
  return { outRefundNo, status: r.status, amount: r.amount, gatewayRefundNo: r.gatewayRefundNo };
}

/** A paid trade can't be closed; anything else can (the payment service expires the payment, and the cashier refuses it). */
async function sandboxClose(trades: SandboxTradeStore, outTradeNo: string): Promise<void> {
  const trade = await trades.find(outTradeNo);
  if (trade?.status === 'paid') throw new PaymentGatewayError('sandbox', `sandbox close refused: ${outTradeNo} is paid`, 'ORDER_PAID');
}
