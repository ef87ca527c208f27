import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { Messages } from '@suanli/contract/errors';
import { formatIssue } from '@suanli/contract/zod-locale';
import { AppError } from '../../lib/errors.ts';

const fastifyCodes: Record<string, [number, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: [413, '请求体过大'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, '不支持的请求内容类型，请使用 application/json'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, '请求体不能为空'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, '请求体不是合法的 JSON'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, '请求体长度不正确'],
};

/**
 * PostgreSQL's data exceptions (SQLSTATE class 22) and program limits (54) are caused by a value a
 * client sent that the schema let through (a year 0000, a string too long for an index): bad
 * input, answered 400 and logged, never a 500 with driver text.
 */
const databaseInputErrors: Record<string, string> = {
  '22001': '输入的文本过长',
  '22003': '数值超出允许范围',
  '22007': '时间格式不正确',
  '22008': '时间超出允许范围',
  '22021': '请求中含有无法保存的字符',
  '22P05': '请求中含有无法保存的字符',
  '54000': '输入的内容过长',
};

/** The SQLSTATE of a driver error, also when an ORM wrapped it (drizzle's DrizzleQueryError keeps it as `cause`). */
export function sqlStateOf(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/** Every error leaves as the envelope of DESIGN §4 with a Chinese msg; driver text never does. */
export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const send = (status: number, msg: string, reason?: string) =>
      reply.status(status).send({ code: status, msg, data: null, requestId: req.id, ...(reason ? { reason } : {}) });

    if (err instanceof AppError) {
      if (err.headers) reply.headers(err.headers);
      if (err.status >= 500) req.log.error({ err }, 'app error');
      return send(err.status, err.message, err.reason);
    }
    if (hasZodFastifySchemaValidationErrors(err)) {
      const first = err.validation[0];
      const params = (first?.params ?? {}) as { keys?: string[] };
      const msg = first
        ? formatIssue({ code: first.keyword, path: first.instancePath, message: first.message ?? '', keys: params.keys })
        : '请求参数不合法';
      return send(400, msg);
    }
    if (isResponseSerializationError(err)) {
      req.log.error({ err }, 'response did not match its schema');
      return send(500, Messages.internal);
    }
    const state = sqlStateOf(err);
    if (state && (state.startsWith('22') || state === '54000')) {
      req.log.warn({ err }, 'database refused a value from the request');
      return send(400, databaseInputErrors[state] ?? '请求参数的值不合法');
    }
    const known = err.code ? fastifyCodes[err.code] : undefined;
    if (known) return send(known[0], known[1]);
    if (err instanceof SyntaxError || err.statusCode === 400) return send(400, '请求体不是合法的 JSON');
    if (err.statusCode === 429) return send(429, Messages.tooMany);
    req.log.error({ err }, 'unhandled error');
    return send(500, Messages.internal);
  });
}
