/** Money in the product is integer units of 0.0001 yuan (1 yuan = 10000). Gateways take yuan strings (Alipay, "100.00") or fen integers (WeChat, 10000). */
import type { PaymentMethod } from '@suanli/contract/payment';

export type CreatePaymentInput = { outTradeNo: string; amount: number; subject: string; notifyUrl: string; returnUrl: string; expiresAt: Date; clientIp?: string };
export type CreatePaymentResult = { payUrl?: string; qrCode?: string };
export type NotifyRequest = { headers: Record<string, string | undefined>; rawBody: string };
export type VerifiedNotify = { outTradeNo: string; amount: number; gatewayTradeNo: string; status: 'paid' | 'failed' | 'pending'; raw: Record<string, unknown> };
export type NotifyResult = { ok: true; notify: VerifiedNotify } | { ok: false; reason: string };
export type QueryResult = { status: 'paid' | 'pending' | 'closed' | 'not_found'; amount?: number; gatewayTradeNo?: string };
export interface PaymentGateway {
  readonly method: PaymentMethod;
  /** Signs and sends (or builds) the gateway request: a page URL to redirect to and/or a QR code content string. */
  createPayment(input: CreatePaymentInput): Promise<CreatePaymentResult>;
  /** Verifies a notification (signature first, then identity fields) and decodes it; never throws for bad input, returns ok:false with a reason. */
  verifyNotify(req: NotifyRequest): Promise<NotifyResult>;
  /** The HTTP answer the gateway expects after we processed (ok=true) or refused (ok=false) a notification. */
  notifyAck(ok: boolean): { status: number; contentType: string; body: string };
  /** Asks the gateway for the state of a payment (reconciliation). */
  queryPayment(outTradeNo: string): Promise<QueryResult>;
}

/**
 * A gateway that refused a request, answered something unusable, or could not be reached
 * (createPayment / queryPayment). One class for every adapter so the payment service can answer
 * "gateway unavailable" without knowing which gateway it was; `code` carries the gateway's own
 * error code (Alipay sub_code or code, WeChat code) for the logs.
 */
export class PaymentGatewayError extends Error {
  constructor(
    readonly gateway: PaymentMethod,
    message: string,
    readonly code?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'PaymentGatewayError';
  }
}
