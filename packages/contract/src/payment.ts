import { z } from 'zod';

/** PRODUCT.md: 1 to 100,000 yuan per payment; amounts in units of 0.0001 yuan, whole fen only. */
export const RECHARGE_MIN = 1 * 10_000;
export const RECHARGE_MAX = 100_000 * 10_000;
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
    .refine((v) => v % 100 === 0, { error: '充值金额最小单位为分' }),
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
