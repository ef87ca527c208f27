import type { Db } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import type { SandboxGateway } from '../../adapters/payments/sandbox.ts';
import { createPaymentRepository } from './payment.repository.ts';
import { paymentUrlsUnder, type PaymentOrigins } from './payment-urls.ts';
import { sandboxEnabled } from './sandbox-policy.ts';
import { paymentIdOf } from './gateways.ts';

export type CashierAction = 'pay' | 'fail' | 'abandon';

/** What the cashier page shows. `state` is the sandbox gateway's view of the order, not the app's. */
export type CashierView = {
  /** The order number in the cashier's URL (the gateway's out_trade_no). */
  outTradeNo: string;
  /** The payment's id, as the payer's order pages show it. */
  paymentId: string;
  sig: string;
  merchant: string;
  subject: string;
  amount: number;
  expiresAt: Date;
  state: 'open' | 'paid' | 'failed' | 'expired';
};

/**
 * The sandbox's cashier: the page a payer lands on from payUrl, and their three choices. It is the
 * "gateway side" of the sandbox and shares this server's database: the order it shows (amount,
 * merchant, expiry) is read from the payments row instead of a gateway's own order table, and the
 * notify URL is rebuilt from the tenant's origin (PUBLIC_URL or its configured host, never the
 * request's Host header), as createPayment was given it.
 *
 * Every call first checks the link's HMAC (sig), and answers undefined — "no such cashier" — for a
 * bad one, exactly as for an unknown or non-sandbox order, or one of a tenant whose sandbox is off
 * now (switched off after the payment was made: it can't be paid any more).
 */
export function createSandboxCashierService(deps: { db: Db; clock: Clock; sandbox: SandboxGateway; origins: PaymentOrigins; sandboxAllowed: boolean }) {
  const { clock, sandbox, origins } = deps;
  const repo = createPaymentRepository(deps.db);

  /** The order behind a cashier link: `outTradeNo` as the sandbox put it in payUrl, with its HMAC. */
  async function order(outTradeNo: string, sig: string) {
    const id = paymentIdOf(outTradeNo);
    if (!id || !sandbox.verifyCashierSignature(outTradeNo, sig)) return undefined;
    const payment = await repo.findById(id);
    if (!payment || payment.method !== 'sandbox') return undefined;
    const tenant = await repo.findTenant(payment.tenantId);
    if (!tenant || !sandboxEnabled(tenant.paymentSettings, deps.sandboxAllowed)) return undefined;
    return { payment, tenant };
  }

  return {
    async view(outTradeNo: string, sig: string): Promise<CashierView | undefined> {
      const found = await order(outTradeNo, sig);
      if (!found) return undefined;
      const { payment, tenant } = found;
      const trade = await sandbox.trade(outTradeNo);
      const state = trade ? trade.status : clock() >= payment.expiresAt ? 'expired' : 'open';
      const merchant = tenant.title;
      return { outTradeNo, paymentId: payment.id, sig, merchant, subject: `${merchant} 账户充值`, amount: payment.amount, expiresAt: payment.expiresAt, state };
    },

    /**
     * The payer's choice; answers where to send the browser (303). pay/fail record the trade once
     * (a second click, or fail after pay, finds the first choice) and schedule its notification;
     * abandon leaves the order pending until it expires. `requestHost` only picks among the
     * tenant's configured hosts (the one the payer is on), see PaymentOrigins.
     */
    async act(outTradeNo: string, sig: string, action: CashierAction, requestHost?: string): Promise<{ location: string } | undefined> {
      const found = await order(outTradeNo, sig);
      if (!found) return undefined;
      const { payment } = found;
      const urls = paymentUrlsUnder(await origins.baseFor(payment.tenantId, requestHost), 'sandbox', payment.id);
      if (action === 'abandon') return { location: urls.rechargeUrl };
      let trade = await sandbox.trade(outTradeNo);
      if (!trade) {
        // Like a real gateway given time_expire: once the order expired, it can't be paid.
        if (clock() >= payment.expiresAt) return { location: urls.timeoutUrl };
        trade = await sandbox.settle({ outTradeNo, amount: payment.amount, notifyUrl: urls.notifyUrl }, action === 'pay' ? 'paid' : 'failed');
      }
      return { location: trade.status === 'paid' ? urls.returnUrl : urls.failureUrl };
    },
  };
}
export type SandboxCashierService = ReturnType<typeof createSandboxCashierService>;
