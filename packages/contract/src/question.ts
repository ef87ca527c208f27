import { z } from 'zod';
import { phone, plainText } from './validation.ts';

/** Contact-sales form of /reservationForm. */
export const questionBody = z.strictObject({
  name: plainText('联系人姓名', 32),
  phone,
  company: plainText('公司名称', 64).optional(),
  email: z.email({ error: '邮箱格式不正确' }).max(128, { error: '邮箱不能超过 128 个字符' }).optional(),
  gpuType: plainText('需求的 GPU 型号', 64).optional(),
  gpuCount: z.number({ error: 'GPU 数量必须是数字' }).int({ error: 'GPU 数量必须是整数' }).min(1, { error: 'GPU 数量至少为 1' }).max(100000, { error: 'GPU 数量过大' }).optional(),
  content: plainText('需求描述', 2000),
});
export type QuestionBody = z.infer<typeof questionBody>;

export const questionCreated = z.object({ id: z.string() });

/** One contact-sales request as the tenant's operator sees it (GET /api/v1/operate/questions). */
export const questionItem = z.object({
  id: z.string(),
  name: z.string(),
  phone: z.string(),
  company: z.string().nullable(),
  email: z.string().nullable(),
  gpuType: z.string().nullable(),
  gpuCount: z.number().int().nullable(),
  content: z.string(),
  /** True when a signed-in user sent it (the row keeps the user id; the id stays internal). */
  fromUser: z.boolean(),
  createdAt: z.string(),
});
export type QuestionItem = z.infer<typeof questionItem>;

/** PRODUCT decision: at most this many requests per hour from one phone (or one user) of a tenant. */
export const QUESTION_HOURLY_LIMIT = 5;
