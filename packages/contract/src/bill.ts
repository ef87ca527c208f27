import { z } from 'zod';
import { chargeType } from './order.ts';
import { isoDateTime } from './validation.ts';

/** PRODUCT.md: one bill row per settled charge (instance, period, amount). */
export const billItem = z.object({
  id: z.string(),
  instanceId: z.string(),
  instanceName: z.string(),
  chargeType,
  /** The order it came from (prepaid), if any. */
  orderId: z.string().nullable(),
  periodStart: z.string(),
  periodEnd: z.string(),
  /** Seconds of running the bill covers (payg). */
  seconds: z.number().int(),
  amount: z.number().int(),
  createdAt: z.string(),
});
export type BillItem = z.infer<typeof billItem>;

const range = {
  page: z.number({ error: '页码必须是数字' }).int().min(1, { error: '页码必须是正整数' }).max(100_000, { error: '页码过大' }).default(1),
  pageSize: z.number({ error: '每页条数必须是数字' }).int().min(1, { error: '每页至少 1 条' }).max(100, { error: '每页最多 100 条' }).default(20),
  instanceId: z.string({ error: '实例 ID 格式不正确' }).regex(/^i-[a-z0-9]{10}$/, { error: '实例 ID 格式不正确' }).optional(),
  chargeType: chargeType.optional(),
  startTime: isoDateTime('开始时间').optional(),
  endTime: isoDateTime('结束时间').optional(),
};
/** POST /api/v1/bills/list */
export const billListQuery = z.strictObject(range).refine((q) => !q.startTime || !q.endTime || q.startTime <= q.endTime, { error: '开始时间不能晚于结束时间', path: ['startTime'] });
export type BillListQuery = z.input<typeof billListQuery>;
export const billPage = z.object({ list: z.array(billItem), total: z.number().int(), totalAmount: z.number().int() });
export type BillPage = z.infer<typeof billPage>;

/** POST /api/v1/bills/daily_bill/list: per day (Asia/Shanghai) and instance. */
export const dailyBillItem = z.object({
  day: z.string(),
  instanceId: z.string(),
  instanceName: z.string(),
  chargeType,
  seconds: z.number().int(),
  amount: z.number().int(),
});
export type DailyBillItem = z.infer<typeof dailyBillItem>;
export const dailyBillListQuery = billListQuery;
export const dailyBillPage = z.object({ list: z.array(dailyBillItem), total: z.number().int(), totalAmount: z.number().int() });
export type DailyBillPage = z.infer<typeof dailyBillPage>;
