import type { AxiosError } from 'axios';
import { t } from '../locales/i18n.ts';

/** A failed call: HTTP status, the Chinese message to show, and the server's machine reason. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly reason?: string,
    readonly requestId?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type Body = { msg?: unknown; failMsg?: unknown; message?: unknown; error?: unknown; reason?: unknown; requestId?: unknown } | undefined;

const firstText = (...values: unknown[]) => values.find((v): v is string => typeof v === 'string' && v.length > 0);

/** SPEC §8: the message for a status and body. */
export function messageForStatus(status: number, body: Body): string {
  if (status === 401) return t('common.errors.sessionInvalid');
  if (status === 404) return t('common.errors.notFound');
  if (status === 500) return firstText(body?.msg, body?.message, body?.failMsg, body?.error) ?? t('common.errors.server500');
  if (status === 400 || status === 409) return firstText(body?.msg, body?.failMsg, body?.message) ?? t('common.errors.status', { code: status });
  // Other statuses: the catalogue's generic text, unless the server explained itself (429 waits, 403).
  return firstText(body?.msg) ?? t('common.errors.status', { code: status });
}

/** axios's own test, without loading axios (it loads with the first call). */
const isAxiosError = (err: unknown): err is AxiosError => typeof err === 'object' && err !== null && (err as { isAxiosError?: unknown }).isAxiosError === true;

/** Any thrown value -> an ApiError with the message to show. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (isAxiosError(err)) {
    if (err.response) {
      const body = err.response.data as Body;
      const reason = typeof body?.reason === 'string' ? body.reason : undefined;
      const requestId = typeof body?.requestId === 'string' ? body.requestId : undefined;
      return new ApiError(err.response.status, messageForStatus(err.response.status, body), reason, requestId);
    }
    if (err.code === 'ECONNABORTED' || err.code === 'ETIMEDOUT' || /timeout/i.test(err.message)) return new ApiError(0, t('common.errors.timeout'));
    return new ApiError(0, t('common.errors.network'));
  }
  return new ApiError(0, err instanceof Error ? err.message : String(err));
}

/** The message of any error, for forms and result views. */
export function getErrorMessage(err: unknown): string {
  return toApiError(err).message;
}
