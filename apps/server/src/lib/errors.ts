import type { ErrorReason } from '@suanli/contract/errors';
import { Messages } from '@suanli/contract/errors';

/** A typed domain error; the error handler turns it into the envelope with its HTTP status. */
export class AppError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429 | 500 | 503,
    message: string,
    readonly reason?: ErrorReason,
    readonly headers?: Record<string, string>,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'AppError';
  }
}

export const badRequest = (msg: string, reason?: ErrorReason) => new AppError(400, msg, reason);
export const unauthorized = (msg: string = Messages.sessionInvalid) => new AppError(401, msg);
export const forbidden = (msg: string = Messages.forbidden, reason?: ErrorReason) => new AppError(403, msg, reason);
/** Missing and foreign ids answer the same (DESIGN §3 rule 5). */
export const notFound = (msg: string = Messages.resourceMissing) => new AppError(404, msg);
export const conflict = (msg: string, reason?: ErrorReason) => new AppError(409, msg, reason);
export const tooMany = (msg: string = Messages.tooMany, retryAfterSeconds?: number, reason?: ErrorReason) =>
  new AppError(429, msg, reason, retryAfterSeconds ? { 'retry-after': String(Math.ceil(retryAfterSeconds)) } : undefined);
