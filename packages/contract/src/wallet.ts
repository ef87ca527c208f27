import { z } from 'zod';
import { isoDateTime } from './validation.ts';

export const ledgerKinds = ['recharge', 'order_payment', 'payg_charge', 'refund', 'coupon', 'adjustment', 'llm_usage'] as const;
export const ledgerKind = z.enum(ledgerKinds, { error: '交易类型不正确' });
export type LedgerKind = z.infer<typeof ledgerKind>;


/** POST /api/v1/transactions/list: filters of the income and expense page. */
export const transactionsQuery = z
  .strictObject({
    page: z.number({ error: '页码必须是数字' }).int().min(1, { error: '页码必须是正整数' }).default(1),
    pageSize: z.number({ error: '每页条数必须是数字' }).int().min(1).max(100, { error: '每页最多 100 条' }).default(20),
    startTime: isoDateTime('开始时间').optional(),
    endTime: isoDateTime('结束时间').optional(),
    kind: ledgerKind.optional(),
    direction: z.enum(['income', 'expense'], { error: '收支方向应为 income 或 expense' }).optional(),
  })
  .refine((q) => !q.startTime || !q.endTime || q.startTime <= q.endTime, { error: '开始时间不能晚于结束时间', path: ['startTime'] });
export type TransactionsQuery = z.input<typeof transactionsQuery>;

export const transactionItem = z.object({
  id: z.string(),
  kind: ledgerKind,
  /** Signed units of 0.0001 yuan: income positive, expense negative. */
  amount: z.number().int(),
  balanceAfter: z.number().int(),
  ref: z.string(),
  memo: z.string(),
  createdAt: z.string(),
});
export type TransactionItem = z.infer<typeof transactionItem>;

export const transactionsPage = z.object({
  list: z.array(transactionItem),
  total: z.number().int(),
  /** Sums over the whole filtered range, not just this page. */
  totals: z.object({ income: z.number().int(), expense: z.number().int() }),
});
export type TransactionsPage = z.infer<typeof transactionsPage>;
