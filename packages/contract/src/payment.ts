import { z } from 'zod';
import { MONEY_UNITS_PER_YUAN, UNITS_PER_FEN } from '@suanli/domain/money';

/** PRODUCT.md: 1 to 100,000 yuan per payment; amounts in units of 0.0001 yuan, whole fen only. */
export const RECHARGE_MIN = 1 * MONEY_UNITS_PER_YUAN;
export const RECHARGE_MAX = 100_000 * MONEY_UNITS_PER_YUAN;
/** Unpaid payments expire after 15 minutes (the timeout page). */
export const PAYMENT_TTL_MINUTES = 15;

export const paymentMethods = ['sandbox', 'alipay', 'wechat'] as const;
export const paymentMethod = z.enum(paymentMethods, { error: '支付方式不正确' });
export type PaymentMethod = z.infer<typeof paymentMethod>;
export const paymentStatuses = ['pending', 'paid', 'failed', 'expired'] as const;
export type PaymentStatus = (typeof paymentStatuses)[number];

export const createPaymentBody = z.strictObject({
  amount: z
    .number({ error: '充值金额必须是数字' })
    .int({ error: '充值金额必须是整数（单位 0.0001 元）' })
    .min(RECHARGE_MIN, { error: '单次充值金额不能低于 ¥1' })
    .max(RECHARGE_MAX, { error: '单次充值金额不能超过 ¥100,000' })
    .refine((v) => v % UNITS_PER_FEN === 0, { error: '充值金额最小单位为分' }),
  method: paymentMethod,
});
export type CreatePaymentBody = z.infer<typeof createPaymentBody>;

export const payment = z.object({
  id: z.string(),
  amount: z.number().int(),
  method: paymentMethod,
  status: z.enum(paymentStatuses),
  /** Where to send the payer (gateway page or the sandbox cashier). */
  payUrl: z.string().nullable(),
  /** QR code content to render (Alipay precreate, WeChat Native). */
  qrCode: z.string().nullable(),
  createdAt: z.string(),
  expiresAt: z.string(),
  paidAt: z.string().nullable(),
});
export type Payment = z.infer<typeof payment>;

export const paymentParams = z.object({ id: z.uuid({ error: '支付单号格式不正确' }) });

export const paymentMethodItem = z.object({ method: paymentMethod, name: z.string() });

/** Open (pending, unexpired) payments one user may have at once; the next one answers 429. */
export const MAX_OPEN_PAYMENTS = 10;

/** GET /api/v1/operate/payments: the tenant's payments flagged for the operator. */
export const flaggedPaymentsQuery = z.strictObject({
  /** late: paid at the gateway after the payment had expired here, and credited anyway. */
  flag: z.enum(['late'], { error: 'flag 只支持 late（超时后到账）' }).default('late'),
  page: z.coerce.number({ error: '页码必须是数字' }).int({ error: '页码必须是正整数' }).min(1, { error: '页码必须是正整数' }).max(100_000, { error: '页码过大' }).default(1),
  pageSize: z.coerce.number({ error: '每页条数必须是数字' }).int({ error: '每页条数必须是整数' }).min(1, { error: '每页至少 1 条' }).max(100, { error: '每页最多 100 条' }).default(20),
});

export const flaggedPayment = payment.extend({
  userId: z.number().int(),
  userPhone: z.string(),
  /** The gateway's trade number, to look the payment up at the gateway. */
  gatewayTradeNo: z.string().nullable(),
  /** late: credited after it had expired (or failed) here. */
  flag: z.enum(['late']),
});
export type FlaggedPayment = z.infer<typeof flaggedPayment>;
export const flaggedPaymentsPage = z.object({ list: z.array(flaggedPayment), total: z.number().int() });
export type FlaggedPaymentsPage = z.infer<typeof flaggedPaymentsPage>;
