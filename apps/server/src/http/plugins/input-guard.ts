import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../lib/errors.ts';

export const InputMessages = {
  nul: (where: string) => `${where}含有不允许的空字符（U+0000），请删除后重试`,
  badUrl: '请求地址格式不正确（含有无效的 URL 编码）',
} as const;

const PARTS = [
  ['params', '路径参数'],
  ['query', '查询参数'],
  ['body', '请求体'],
] as const;

/**
 * Where the first NUL character sits in a parsed value (string, array, object keys and values),
 * as a dotted path; undefined when there is none. Iterative: a deeply nested JSON body can't
 * overflow the stack.
 */
export function findNul(value: unknown): string | undefined {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length) {
    const [v, at] = stack.pop() as [unknown, string];
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return at;
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push([v[i], `${at}[${i}]`]);
    } else if (v !== null && typeof v === 'object' && !Buffer.isBuffer(v)) {
      for (const [k, x] of Object.entries(v)) {
        const path = at ? `${at}.${k}` : k;
        if (k.includes('\u0000')) return at || '(字段名)';
        stack.push([x, path]);
      }
    }
  }
  return undefined;
}

/**
 * NUL can't be stored in a PostgreSQL text or jsonb value, and no field of this API has a use for
 * it: every route refuses it in its path, query and body (a notify's raw text included) with a 400
 * naming the field, before the schema or the handler sees the request.
 */
export function registerInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (req) => {
    for (const [part, label] of PARTS) {
      const at = findNul(req[part]);
      if (at !== undefined) throw badRequest(InputMessages.nul(at ? `${label} ${at} ` : label));
    }
  });
}
