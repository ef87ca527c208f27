import { z } from 'zod';

/** Success envelope of every API answer (DESIGN §4). */
export const okEnvelope = <T extends z.ZodType>(data: T) =>
  z.object({ code: z.literal(200), msg: z.string(), data });

export const errorEnvelope = z.object({
  code: z.number().int(),
  msg: z.string(),
  data: z.null(),
  requestId: z.string().optional(),
  reason: z.string().optional(),
});

export const listOf = <T extends z.ZodType>(item: T) =>
  z.object({ list: z.array(item), total: z.number().int() });

export const pageQuery = z.object({
  page: z.coerce.number().int().min(1, { error: '页码必须是正整数' }).default(1),
  pageSize: z.coerce.number().int().min(1).max(100, { error: '每页最多 100 条' }).default(20),
});

export const emptyData = z.null();

export type Envelope<T> = { code: number; msg: string; data: T; requestId?: string };
