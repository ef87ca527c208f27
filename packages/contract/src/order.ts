import { z } from 'zod';

/** PRODUCT.md "Orders": kinds and states. Issue #8 builds `new`; the others are issue #10's changes of an instance. */
export const orderKinds = ['new', 'renewal', 'charge_type', 'spec_change', 'data_disk', 'clone'] as const;
export type OrderKind = (typeof orderKinds)[number];
export const orderStatuses = ['unpaid', 'paid', 'cancelled', 'expired'] as const;
export type OrderStatus = (typeof orderStatuses)[number];
/** Unpaid orders expire after 15 minutes and hold nothing. */
export const ORDER_TTL_MINUTES = 15;

export const chargeTypes = ['payg', 'prepaid'] as const;
export const chargeType = z.enum(chargeTypes, { error: '计费方式应为 payg（按量）或 prepaid（包周期）' });
export type ChargeType = z.infer<typeof chargeType>;
/** Prepaid periods: day and week as the cheaper short terms, month and year. */
export const prepaidPeriods = ['day', 'week', 'month', 'year'] as const;
export const prepaidPeriod = z.enum(prepaidPeriods, { error: '包周期时长应为 day、week、month 或 year' });
export type PrepaidPeriod = z.infer<typeof prepaidPeriod>;

/** Most GPUs one instance may take (further bounded by the machine). */
export const MAX_GPUS_PER_INSTANCE = 8;
/** Most periods one prepaid order may buy, per unit. */
export const MAX_PREPAID_QUANTITY: Record<PrepaidPeriod, number> = { day: 30, week: 8, month: 12, year: 3 };

const id = (label: string) => z.number({ error: `${label}必须是数字` }).int({ error: `${label}必须是正整数` }).min(1, { error: `${label}必须是正整数` }).max(2_147_483_647, { error: `${label}不存在` });

const specFields = {
  machineId: id('机器'),
  gpuCount: z.number({ error: 'GPU 数量必须是数字' }).int({ error: 'GPU 数量必须是整数' }).min(1, { error: 'GPU 数量至少为 1' }).max(MAX_GPUS_PER_INSTANCE, { error: `GPU 数量最多为 ${MAX_GPUS_PER_INSTANCE}` }),
  imageId: id('镜像'),
  /** Data disk size, GB; the machine's free size when absent. */
  dataDiskGb: z.number({ error: '数据盘大小必须是数字' }).int({ error: '数据盘大小必须是整数（GB）' }).min(1, { error: '数据盘大小至少 1 GB' }).max(65_536, { error: '数据盘过大' }).optional(),
};

/** POST /api/v1/order/price/preview */
export const pricePreviewBody = z
  .strictObject({
    ...specFields,
    chargeType,
    period: prepaidPeriod.optional(),
    quantity: z.number({ error: '购买时长必须是数字' }).int({ error: '购买时长必须是整数' }).min(1, { error: '购买时长至少为 1' }).max(36, { error: '购买时长过长' }).optional(),
  })
  .refine((b) => b.chargeType === 'payg' || b.period !== undefined, { error: '包周期订单请选择时长（day、week、month 或 year）', path: ['period'] });
export type PricePreviewBody = z.input<typeof pricePreviewBody>;

/** POST /api/v1/order/payg */
export const createPaygOrderBody = z.strictObject({
  ...specFields,
  name: z.string({ error: '实例名称格式不正确' }).trim().max(32, { error: '实例名称不能超过 32 个字符' }).optional(),
});
export type CreatePaygOrderBody = z.input<typeof createPaygOrderBody>;

/** POST /api/v1/order/prepay */
export const createPrepayOrderBody = createPaygOrderBody.extend({
  period: prepaidPeriod,
  quantity: z.number({ error: '购买时长必须是数字' }).int({ error: '购买时长必须是整数' }).min(1, { error: '购买时长至少为 1' }).max(36, { error: '购买时长过长' }),
});
export type CreatePrepayOrderBody = z.input<typeof createPrepayOrderBody>;

export const orderLine = z.object({
  /** What is priced, in Chinese ("RTX 4090 × 2，按月 × 1"). */
  label: z.string(),
  amount: z.number().int(),
});
export type OrderLine = z.infer<typeof orderLine>;

export const pricePreview = z.object({
  lines: z.array(orderLine),
  /** What paying takes from the balance now (0 for pay-as-you-go). */
  total: z.number().int(),
  /** Pay-as-you-go: the running price per hour (GPUs + data disk). */
  hourly: z.number().int(),
  /** Balance a pay-as-you-go start needs: one hour of running. */
  requiredBalance: z.number().int(),
});
export type PricePreview = z.infer<typeof pricePreview>;

export const orderIdString = z.string({ error: '订单号格式不正确' }).regex(/^\d{8,32}$/, { error: '订单号格式不正确' });

export const order = z.object({
  id: z.string(),
  kind: z.enum(orderKinds),
  status: z.enum(orderStatuses),
  chargeType,
  period: prepaidPeriod.nullable(),
  quantity: z.number().int().nullable(),
  machineId: z.number().int(),
  hostName: z.string(),
  datacenterName: z.string(),
  gpuTypeName: z.string(),
  gpuCount: z.number().int(),
  imageId: z.number().int(),
  imageName: z.string(),
  dataDiskGb: z.number().int(),
  instanceName: z.string(),
  lines: z.array(orderLine),
  /** Paid from the balance; negative: refunded to it (issue #10: prepaid → pay-as-you-go, downgrades). */
  amount: z.number().int(),
  hourly: z.number().int(),
  /** The instance it created (once paid), or (issue #10 changes) the instance it changes. */
  instanceId: z.string().nullable(),
  /** Clone orders: the instance copied. */
  sourceInstanceId: z.string().nullable(),
  createdAt: z.string(),
  expiresAt: z.string(),
  paidAt: z.string().nullable(),
  closedAt: z.string().nullable(),
});
export type Order = z.infer<typeof order>;

export const orderParams = z.object({ id: orderIdString });
/** POST /api/v1/order/pay (with an Idempotency-Key). */
export const payOrderBody = z.strictObject({ orderId: orderIdString });

/** POST /api/v1/order/list */
export const orderListQuery = z.strictObject({
  page: z.number({ error: '页码必须是数字' }).int().min(1, { error: '页码必须是正整数' }).max(100_000, { error: '页码过大' }).default(1),
  pageSize: z.number({ error: '每页条数必须是数字' }).int().min(1, { error: '每页至少 1 条' }).max(100, { error: '每页最多 100 条' }).default(20),
  status: z.enum(orderStatuses, { error: '订单状态不正确' }).optional(),
  kind: z.enum(orderKinds, { error: '订单类型不正确' }).optional(),
});
export type OrderListQuery = z.input<typeof orderListQuery>;
export const orderPage = z.object({ list: z.array(order), total: z.number().int() });
export type OrderPage = z.infer<typeof orderPage>;
