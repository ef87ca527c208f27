/** Money in the product is integer units of 0.0001 yuan (1 yuan = 10000). Gateways take yuan strings (Alipay, "100.00") or fen integers (WeChat, 10000). */
import type { PaymentMethod } from '@suanli/contract/payment';

export type CreatePaymentInput = { outTradeNo: string; amount: number; subject: string; notifyUrl: string; returnUrl: string; expiresAt: Date; clientIp?: string };
export type CreatePaymentResult = { payUrl?: string; qrCode?: string };
export type NotifyRequest = { headers: Record<string, string | undefined>; rawBody: string };
export type VerifiedNotify = { outTradeNo: string; amount: number; gatewayTradeNo: string; status: 'paid' | 'failed' | 'pending'; raw: Record<string, unknown> };
/**
 * A verified refund notification (WeChat REFUND.*, Alipay's trade notification carrying refund
 * fields). `amount` is this refund's amount, or for Alipay, which reports only the trade's running
 * total, the total refunded so far (`cumulative`).
 */
export type VerifiedRefundNotify = {
  outTradeNo: string;
  outRefundNo?: string;
  gatewayRefundNo?: string;
  amount: number;
  cumulative: boolean;
  status: RefundStatus;
  raw: Record<string, unknown>;
};
/** A payment notification (`kind` absent or 'payment'), a refund notification, or a refusal with its reason. */
export type NotifyResult =
  | { ok: true; kind?: 'payment'; notify: VerifiedNotify }
  | { ok: true; kind: 'refund'; refund: VerifiedRefundNotify }
  | { ok: false; reason: string };
export type QueryResult = { status: 'paid' | 'pending' | 'closed' | 'not_found'; amount?: number; gatewayTradeNo?: string };
/** Refund state as every gateway reports it: done, still under way, or given up (money stays with the merchant). */
export type RefundStatus = 'succeeded' | 'processing' | 'failed';
export type RefundInput = {
  outTradeNo: string;
  /** Our refund number, unique per refund: sending the same one again is the same refund (idempotent at the gateway). */
  outRefundNo: string;
  /** Units of 0.0001 yuan; at most the payment's amount less what was already refunded (partial refunds allowed). */
  amount: number;
  /** The payment's whole amount (units), which WeChat Pay requires with every refund. */
  totalAmount: number;
  reason?: string;
  /** Where the gateway sends the refund's notification (WeChat Pay; Alipay uses the payment's notify URL). */
  notifyUrl?: string;
};
export type RefundResult = { outRefundNo: string; status: RefundStatus; amount: number; gatewayRefundNo?: string };
export type RefundQueryResult = RefundResult | { outRefundNo: string; status: 'not_found' };
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
  /** Refunds all or part of a paid payment. Throws PaymentGatewayError when refused (e.g. more than is left to refund). */
  refund(input: RefundInput): Promise<RefundResult>;
  /** Asks for the state of a refund made with `refund`. */
  queryRefund(outTradeNo: string, outRefundNo: string): Promise<RefundQueryResult>;
  /** Closes an unpaid payment so it can no longer be paid; a payment the gateway never saw counts as closed. Throws when it can't be closed (e.g. already paid). */
  closePayment(outTradeNo: string): Promise<void>;
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
