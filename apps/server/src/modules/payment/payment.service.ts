import crypto from 'node:crypto';
import { MAX_OPEN_PAYMENTS, PAYMENT_TTL_MINUTES, paymentMethods, type CreatePaymentBody, type FlaggedPaymentsPage, type Payment, type PaymentMethod } from '@suanli/contract/payment';
import type { Db, DbOrTx, Tx } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError, badRequest, notFound, tooMany } from '../../lib/errors.ts';
import { PaymentGatewayError, type CreatePaymentResult, type NotifyRequest, type PaymentGateway, type QueryResult, type VerifiedNotify, type VerifiedRefundNotify } from '../../adapters/payments/port.ts';
import type { LedgerService } from '../wallet/ledger.service.ts';
import { METHOD_NAMES, outTradeNoOf, paymentIdOf, wechatSerialsOf, type GatewayDirectory, type GatewayTenant } from './gateways.ts';
import { createPaymentRepository, type PaymentRow, type PaymentTenantRow } from './payment.repository.ts';
import { presentFlaggedPayment, presentPayment } from './payment.presenter.ts';
import { paymentUrlsUnder, type PaymentOrigins } from './payment-urls.ts';
import { sandboxEnabled } from './sandbox-policy.ts';

/** Periodic job: asks the gateways about open payments and expires unpaid ones. */
export const PAYMENT_RECONCILE_JOB = 'payment.reconcile';
/** How often a reconciliation run is scheduled (see container.ts startJobs). */
export const RECONCILE_EVERY_MS = 60_000;
/** Younger payments are left to their notification: the payer is most likely still at the cashier. */
const RECONCILE_MIN_AGE_MS = 60_000;
const RECONCILE_BATCH = 100;
/** Upper bound on tenants a WeChat notification is tried against (see candidatesFor). */
const MAX_WECHAT_CANDIDATES = 20;

/**
 * What is kept of a notification nobody could verify: anyone can post to the notify endpoint, so
 * its first few KiB (enough to see what was tried) and the sha256 of the whole body, never more.
 */
export const NOTIFY_KEPT_BYTES = 4096;

export const PaymentMessages = {
  methodUnavailable: '该支付方式暂不可用',
  gatewayUnavailable: '支付渠道暂时不可用，请稍后重试或更换支付方式',
  tooManyOpen: `您有 ${MAX_OPEN_PAYMENTS} 笔待支付的充值单，请先完成支付或等待其超时（${PAYMENT_TTL_MINUTES} 分钟）后再试`,
} as const;

/** Who is asking: the signed-in user of the request's tenant. */
export type PaymentActor = { id: number; tenantId: number };
export type PaymentTenant = GatewayTenant & { title: string };
/** A tenant whose payers can use the sandbox cashier now. */
export type SandboxTenant = { id: number; code: string; title: string };

/**
 * What a notification came to. Acknowledged as received: credited, credited_late, duplicate,
 * failed, expired, ignored. Refused (the gateway will retry, and the row tells the operator):
 * the rest.
 */
export type NotifyOutcome = 'credited' | 'credited_late' | 'duplicate' | 'amount_mismatch' | 'failed' | 'expired' | 'ignored' | 'unknown_order' | 'sandbox_disabled';
const ACKNOWLEDGED: ReadonlySet<NotifyOutcome> = new Set(['credited', 'credited_late', 'duplicate', 'failed', 'expired', 'ignored']);

export type NotifyAck = ReturnType<PaymentGateway['notifyAck']>;
/** Answer to a notification no gateway could even be chosen for (unknown order or method not set up): anything but "success" makes a gateway retry or give up. */
const NO_GATEWAY_ACK: NotifyAck = { status: 400, contentType: 'text/plain', body: 'fail' };

export type ReconcileSummary = { checked: number; credited: number; expired: number; queryErrors: number };

const isMethod = (m: string): m is PaymentMethod => (paymentMethods as readonly string[]).includes(m);

const SECRET_HEADERS = new Set(['cookie', 'authorization', 'proxy-authorization']);
/** Cuts a string to at most `bytes` bytes of UTF-8 without splitting a character. */
function utf8Prefix(text: string, bytes: number): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= bytes) return text;
  return buf.subarray(0, bytes).toString('utf8').replace(/\uFFFD+$/, '');
}

/** The headers kept with a notification: signatures and timestamps yes, credentials never. */
function auditHeaders(headers: Record<string, string | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !SECRET_HEADERS.has(k.toLowerCase())));
}

/** What a gateway said about a payment, by notification or by query. */
type Report = { status: 'paid' | 'failed'; amount: number; gatewayTradeNo: string };
type Settled = { outcome: NotifyOutcome; credited?: { userId: number } };
type Candidate = { gateway: PaymentGateway; tenantId?: number };

/**
 * Recharge payments: create at the tenant's gateway, show to their owner, and turn a gateway's
 * word (notification or reconciliation query) into exactly one ledger credit.
 */
export function createPaymentService(deps: {
  db: Db;
  clock: Clock;
  ledger: LedgerService;
  gateways: GatewayDirectory;
  /** Where gateways and payers are sent (PUBLIC_URL or the tenant's configured host, never a request header). */
  origins: PaymentOrigins;
  /** SANDBOX_PAYMENTS: whether this installation allows the sandbox cashier at all. */
  sandboxAllowed: boolean;
  /** Called after a credit commits, so cached balances are re-read. */
  onBalanceChanged?: (userId: number) => void;
}) {
  const { db, clock, ledger, gateways, origins, sandboxAllowed } = deps;
  const repo = createPaymentRepository(db);

  /** The tenant's sandbox, read fresh from the database: switching it off applies at once. */
  const sandboxOnFor = async (q: DbOrTx, tenantId: number): Promise<boolean> => {
    const tenant = await createPaymentRepository(q).findTenant(tenantId);
    return tenant !== undefined && sandboxEnabled(tenant.paymentSettings, sandboxAllowed);
  };

  /**
   * The single path from "the gateway says paid/failed" to the payment's state and the ledger, in
   * the caller's transaction: the payment row is locked first, so concurrent duplicates queue
   * behind one another and every later one sees `paid`. The ledger posting is idempotent on
   * `payment:<id>` as a second guard.
   */
  async function settleIn(tx: Tx, paymentId: string, report: Report, now: Date): Promise<Settled> {
    const r = createPaymentRepository(tx);
    const p = await r.lockById(paymentId);
    if (!p) return { outcome: 'unknown_order' };
    // Sandbox money is free money: none is credited once the tenant's sandbox is off, whenever the
    // payment was made.
    if (p.method === 'sandbox' && report.status === 'paid' && !(await sandboxOnFor(tx, p.tenantId))) return { outcome: 'sandbox_disabled' };
    if (report.status === 'paid') {
      if (report.amount !== p.amount) return { outcome: 'amount_mismatch' };
      if (p.status === 'paid') return { outcome: 'duplicate' };
      // Expired (or failed) here but paid there: the money was taken, so it is credited, and
      // flagged for the operator to look at.
      const late = p.status !== 'pending';
      await r.markPaid(p.id, { paidAt: now, gatewayTradeNo: report.gatewayTradeNo, flagged: late });
      await ledger.post({ kind: 'recharge', ref: `payment:${p.id}`, amount: p.amount, tenantId: p.tenantId, userId: p.userId, memo: `recharge:${p.method}` }, tx);
      return { outcome: late ? 'credited_late' : 'credited', credited: { userId: p.userId } };
    }
    if (p.status === 'failed') return { outcome: 'duplicate' };
    if (p.status !== 'pending') return { outcome: 'ignored' };
    // A gateway closing an unpaid trade at its expiry is a timeout, not a failed payment.
    const status = now >= p.expiresAt ? 'expired' : 'failed';
    await r.closePending(p.id, status, now);
    return { outcome: status };
  }

  const afterCommit = (s: Settled) => {
    if (s.credited) deps.onBalanceChanged?.(s.credited.userId);
  };

  /** A gateway built from bad settings counts as no gateway here: the notification is refused and logged. */
  const gatewayOf = (tenant: GatewayTenant, method: PaymentMethod): PaymentGateway | undefined => {
    try {
      return gateways.forTenant(tenant, method, { enabledOnly: false });
    } catch {
      return undefined;
    }
  };

  /**
   * The gateways that may have signed a notification. Its tenant isn't known before the body is
   * verified, and nothing in it is trusted until then:
   *   - sandbox: one key pair per installation;
   *   - alipay: out_trade_no is in clear in the form, so the claimed payment's tenant's gateway
   *     verifies it (and verification re-checks app_id, seller and out_trade_no);
   *   - wechat: out_trade_no is inside the encrypted resource, so every tenant set up for WeChat
   *     Pay is a candidate, those whose platform key serial matches `Wechatpay-Serial` first.
   */
  async function candidatesFor(method: PaymentMethod, req: NotifyRequest): Promise<Candidate[]> {
    if (method === 'sandbox') return [{ gateway: gateways.sandbox }];
    if (method === 'alipay') {
      const claimed = paymentIdOf(new URLSearchParams(req.rawBody).get('out_trade_no') ?? '');
      if (!claimed) return [];
      const payment = await repo.findById(claimed);
      if (!payment || payment.method !== 'alipay') return [];
      const tenant = await repo.findTenant(payment.tenantId);
      const gateway = tenant && gatewayOf(tenant, 'alipay');
      return gateway ? [{ gateway, tenantId: payment.tenantId }] : [];
    }
    const serial = Object.entries(req.headers).find(([k]) => k.toLowerCase() === 'wechatpay-serial')?.[1]?.toUpperCase();
    const tenants = await repo.tenantsWithSettings('wechat');
    const bySerial = tenants.filter((t) => serial !== undefined && wechatSerialsOf(t.paymentSettings.wechat).includes(serial));
    return (bySerial.length ? bySerial : tenants).slice(0, MAX_WECHAT_CANDIDATES).flatMap((t) => {
      const gateway = gatewayOf(t, 'wechat');
      return gateway ? [{ gateway, tenantId: t.id }] : [];
    });
  }

  async function gatewayOfPayment(p: PaymentRow, tenants: Map<number, PaymentTenantRow | undefined>): Promise<PaymentGateway | undefined> {
    if (p.method === 'sandbox') return gateways.sandbox;
    if (!tenants.has(p.tenantId)) tenants.set(p.tenantId, await repo.findTenant(p.tenantId));
    const tenant = tenants.get(p.tenantId);
    return tenant && gateways.forTenant(tenant, p.method, { enabledOnly: false });
  }

  async function reconcile(): Promise<ReconcileSummary> {
    const now = clock();
    const open = await repo.listPending(new Date(now.getTime() - RECONCILE_MIN_AGE_MS), RECONCILE_BATCH);
    const summary: ReconcileSummary = { checked: open.length, credited: 0, expired: 0, queryErrors: 0 };
    const tenants = new Map<number, PaymentTenantRow | undefined>();
    for (const p of open) {
      let answer: QueryResult | undefined;
      // A sandbox payment of a tenant whose sandbox is off is not asked about: it can only expire.
      const ask = p.method !== 'sandbox' || (await sandboxOnFor(db, p.tenantId));
      if (ask) {
        try {
          answer = await (await gatewayOfPayment(p, tenants))?.queryPayment(outTradeNoOf(p.id));
        } catch {
          // Unreachable gateway or unusable settings: no answer this time.
          summary.queryErrors++;
        }
      }
      if (answer?.status === 'paid' && answer.amount !== undefined) {
        const report: Report = { status: 'paid', amount: answer.amount, gatewayTradeNo: answer.gatewayTradeNo ?? '' };
        const settled = await db.transaction(async (tx) => {
          const s = await settleIn(tx, p.id, report, now);
          // The audit trail of money arriving includes money found by asking, not only by being told.
          await createPaymentRepository(tx).insertNotification({
            method: p.method,
            paymentId: p.id,
            verified: true,
            outcome: s.outcome,
            headers: {},
            body: JSON.stringify({ source: 'reconciliation', ...answer }),
            receivedAt: now,
          });
          return s;
        });
        afterCommit(settled);
        if (settled.credited) summary.credited++;
        // A paid answer with another amount is not money we can book: treated as no answer below.
        if (settled.outcome !== 'amount_mismatch') continue;
      }
      // Unpaid past its expiry, whatever the gateway said (closed, not found, still waiting, or
      // nothing): the payer gets the timeout page. Money that arrives later is still credited.
      if (now >= p.expiresAt && (await repo.expireIfDue(p.id, now))) summary.expired++;
    }
    return summary;
  }

  return {
    /** GET /payments/methods: what the tenant offers now. */
    methods(tenant: PaymentTenant): { method: PaymentMethod; name: string }[] {
      return gateways
        .offered(tenant.paymentSettings)
        .filter((m) => m !== 'sandbox' || sandboxEnabled(tenant.paymentSettings, sandboxAllowed))
        .map((method) => ({ method, name: METHOD_NAMES[method] }));
    },

    /** Tenants whose sandbox cashier is on now (the server warns about them at start). */
    async sandboxTenants(): Promise<SandboxTenant[]> {
      return (await repo.allTenants()).filter((t) => sandboxEnabled(t.paymentSettings, sandboxAllowed)).map(({ id, code, title }) => ({ id, code, title }));
    },

    /** GET /operate/payments?flag=late: the operator's tenant's payments credited after they had expired. */
    async listFlagged(tenantId: number, page: number, pageSize: number): Promise<FlaggedPaymentsPage> {
      const r = await repo.pageFlagged(tenantId, page, pageSize);
      return { list: r.list.map(presentFlaggedPayment), total: r.total };
    },

    /**
     * A pending payment at the tenant's gateway for `method`, expiring in PAYMENT_TTL_MINUTES, with
     * where to pay (payUrl) or what to scan (qrCode).
     */
    async create(actor: PaymentActor, tenant: PaymentTenant, input: CreatePaymentBody, ctx: { requestHost?: string; clientIp?: string }): Promise<Payment> {
      if (actor.tenantId !== tenant.id) throw notFound();
      if (input.method === 'sandbox' && !(await sandboxOnFor(db, tenant.id))) throw badRequest(PaymentMessages.methodUnavailable);
      let gateway: PaymentGateway | undefined;
      try {
        gateway = gateways.forTenant(tenant, input.method);
      } catch (err) {
        throw new AppError(503, PaymentMessages.gatewayUnavailable, undefined, undefined, err);
      }
      if (!gateway) throw badRequest(PaymentMessages.methodUnavailable);

      const now = clock();
      // The row exists before the gateway hears of it: its id is the out_trade_no (outTradeNoOf).
      const row = await repo.insertUnderCap(
        {
          tenantId: actor.tenantId,
          userId: actor.id,
          method: input.method,
          amount: input.amount,
          createdAt: now,
          expiresAt: new Date(now.getTime() + PAYMENT_TTL_MINUTES * 60_000),
        },
        MAX_OPEN_PAYMENTS,
      );
      if (!row) throw tooMany(PaymentMessages.tooManyOpen, PAYMENT_TTL_MINUTES * 60);
      const urls = paymentUrlsUnder(await origins.baseFor(actor.tenantId, ctx.requestHost), input.method, row.id);
      let checkout: CreatePaymentResult;
      try {
        checkout = await gateway.createPayment({
          outTradeNo: outTradeNoOf(row.id),
          amount: row.amount,
          subject: `${tenant.title} 账户充值`,
          notifyUrl: urls.notifyUrl,
          returnUrl: urls.returnUrl,
          expiresAt: row.expiresAt,
          clientIp: ctx.clientIp,
        });
        if (!checkout.payUrl && !checkout.qrCode) throw new PaymentGatewayError(input.method, 'gateway answered neither a pay URL nor a QR code');
      } catch (err) {
        // Nothing can be paid without a checkout: close the row rather than leave it pending.
        await repo.closePending(row.id, 'failed', clock());
        if (err instanceof PaymentGatewayError) throw new AppError(503, PaymentMessages.gatewayUnavailable, undefined, undefined, err);
        throw err;
      }
      return presentPayment(await repo.setCheckout(row.id, { payUrl: checkout.payUrl ?? null, qrCode: checkout.qrCode ?? null }));
    },

    /**
     * The owner's payment; a pending one past its expiry is answered (and stored) as expired. Only
     * a gateway's verified word ever marks one paid: a payer's browser coming back doesn't.
     */
    async get(actor: PaymentActor, id: string): Promise<Payment> {
      const row = await repo.findOwned(id, { userId: actor.id, tenantId: actor.tenantId });
      if (!row) throw notFound();
      const now = clock();
      if (row.status === 'pending' && now >= row.expiresAt) {
        const expired = await repo.expireIfDue(row.id, now);
        // Not expired by us: something (a notification) settled it meanwhile; show that.
        return presentPayment(expired ?? (await repo.findById(row.id)) ?? row);
      }
      return presentPayment(row);
    },

    /**
     * POST /payments/notify/:method. Verify first (with the right tenant's gateway), log every
     * notification, settle in one transaction, and only then produce the acknowledgement the
     * gateway expects — the route sends it after this returns, i.e. after the commit. A failure
     * inside the transaction throws (HTTP 500): the gateway retries, nothing half-done remains.
     */
    async handleNotify(method: string, req: NotifyRequest): Promise<NotifyAck> {
      if (!isMethod(method)) throw notFound();
      const receivedAt = clock();
      const headers = auditHeaders(req.headers);
      const bodySha256 = crypto.createHash('sha256').update(req.rawBody, 'utf8').digest('hex');
      const bodyBytes = Buffer.byteLength(req.rawBody, 'utf8');
      const record = (q: DbOrTx, verified: boolean, outcome: string, paymentId: string | null) =>
        createPaymentRepository(q).insertNotification({
          method,
          paymentId,
          verified,
          outcome: outcome.slice(0, 500),
          headers,
          // Unverified: from anyone, so bounded. Verified: a gateway's own words, kept whole.
          body: verified ? req.rawBody : utf8Prefix(req.rawBody, NOTIFY_KEPT_BYTES),
          bodySha256,
          bodyBytes,
          receivedAt,
        });

      const candidates = await candidatesFor(method, req);
      let verified: { notify: VerifiedNotify; gateway: PaymentGateway; tenantId?: number } | undefined;
      let reason = 'no gateway to verify it with (unknown order, or the method is not set up)';
      for (const c of candidates) {
        const result = await c.gateway.verifyNotify(req);
        if (result.ok && result.kind === 'refund') return acknowledgeRefund(c, result.refund);
        if (result.ok) {
          verified = { notify: result.notify, gateway: c.gateway, tenantId: c.tenantId };
          break;
        }
        reason = result.reason;
      }
      if (!verified) {
        await record(db, false, `rejected: ${reason}`, null);
        return candidates[0]?.gateway.notifyAck(false) ?? NO_GATEWAY_ACK;
      }

      /** A verified refund notification is logged (for the operator) and acknowledged, never refused or retried. */
      async function acknowledgeRefund(c: Candidate, refund: VerifiedRefundNotify): Promise<NotifyAck> {
        const id = paymentIdOf(refund.outTradeNo);
        const p = id ? await repo.findById(id) : undefined;
        const known = p && p.method === method && (c.tenantId === undefined || p.tenantId === c.tenantId);
        await record(db, true, known ? `refund_${refund.status} ${refund.outRefundNo ?? ''}`.trim() : 'refund unknown_order', known ? p.id : null);
        return c.gateway.notifyAck(true);
      }

      const { notify, gateway, tenantId } = verified;
      const paymentId = paymentIdOf(notify.outTradeNo);
      const payment = paymentId ? await repo.findById(paymentId) : undefined;
      if (!payment || payment.method !== method || (tenantId !== undefined && payment.tenantId !== tenantId)) {
        await record(db, true, 'unknown_order', null);
        return gateway.notifyAck(false);
      }
      if (notify.status === 'pending') {
        // e.g. Alipay's WAIT_BUYER_PAY: nothing to do, but received.
        await record(db, true, 'ignored', payment.id);
        return gateway.notifyAck(true);
      }
      const report: Report = { status: notify.status, amount: notify.amount, gatewayTradeNo: notify.gatewayTradeNo };
      let settled: Settled;
      try {
        settled = await db.transaction(async (tx) => {
          const s = await settleIn(tx, payment.id, report, receivedAt);
          // Logged in the same transaction: no credit without its notification row.
          await record(tx, true, s.outcome, payment.id);
          return s;
        });
      } catch (err) {
        await record(db, true, 'error', payment.id).catch(() => undefined);
        throw err;
      }
      afterCommit(settled);
      return gateway.notifyAck(ACKNOWLEDGED.has(settled.outcome));
    },

    reconcile,

    /** Job handler of PAYMENT_RECONCILE_JOB. */
    async runReconcileJob(): Promise<void> {
      await reconcile();
    },

    /** Adds a reconciliation run unless one is waiting; called every RECONCILE_EVERY_MS. */
    async scheduleReconcile(): Promise<boolean> {
      return repo.enqueueUnlessWaiting(PAYMENT_RECONCILE_JOB, clock());
    },
  };
}
export type PaymentService = ReturnType<typeof createPaymentService>;
