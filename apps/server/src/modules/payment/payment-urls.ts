import type { PaymentMethod } from '@suanli/contract/payment';
import { normalizeHost } from '../tenant/tenant.service.ts';

/** The sandbox cashier lives on this server: `${base}/sandbox/cashier/<out_trade_no>?sig=…`. */
export const SANDBOX_CASHIER_PATH = '/sandbox/cashier';

/** Where a payment's gateway and payer are sent, all under one origin. */
export type PaymentUrls = {
  notifyUrl: string;
  returnUrl: string;
  failureUrl: string;
  timeoutUrl: string;
  rechargeUrl: string;
};

/** The URLs of payment `id` under `base` (an origin, no trailing slash needed). */
export function paymentUrlsUnder(base: string, method: PaymentMethod, id: string): PaymentUrls {
  const root = base.replace(/\/+$/, '');
  const q = encodeURIComponent(id);
  return {
    notifyUrl: `${root}/api/v1/payments/notify/${method}`,
    returnUrl: `${root}/recharge/success?id=${q}`,
    failureUrl: `${root}/recharge/failure?id=${q}`,
    timeoutUrl: `${root}/recharge/timeout?id=${q}`,
    rechargeUrl: `${root}/recharge/index`,
  };
}

/** The sandbox cashier page of an order, on the origin its notifications go to. */
export function sandboxCashierUrl(origin: string, outTradeNo: string, sig: string): string {
  return `${origin.replace(/\/+$/, '')}${SANDBOX_CASHIER_PATH}/${encodeURIComponent(outTradeNo)}?sig=${encodeURIComponent(sig)}`;
}

/**
 * The one place that decides which origin a gateway (notifications), a payer's browser (return
 * pages) and, later, an email or SMS link is sent to. Never from a request's headers: a forged
 * Host would otherwise make this server POST signed notifications to any host:port, retried for a
 * day. The origin is PUBLIC_URL when set; else `http://<host>:<PORT>` with one of the tenant's
 * configured hosts (tenant_hosts) — the one the request came to if it is one of them, so the payer
 * stays on the origin their session lives on, else the tenant's first — and this server's port.
 */
export function createPaymentOrigins(deps: {
  publicUrl?: string;
  /** The port this server listens on (known after listen when PORT=0). */
  port: () => number;
  hostsOf: (tenantId: number) => Promise<string[]>;
}) {
  return {
    async baseFor(tenantId: number, requestHost?: string): Promise<string> {
      if (deps.publicUrl) return deps.publicUrl.replace(/\/+$/, '');
      const hosts = await deps.hostsOf(tenantId);
      const asked = normalizeHost(requestHost);
      const host = hosts.find((h) => h === asked) ?? hosts[0] ?? 'localhost';
      const port = deps.port();
      return `http://${host}${port === 80 || port === 0 ? '' : `:${port}`}`;
    },
  };
}
export type PaymentOrigins = ReturnType<typeof createPaymentOrigins>;
