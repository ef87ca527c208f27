import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/client.ts';
import { AppError, badRequest } from '../../lib/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { sha256 } from '../../lib/crypto.ts';
import {
  createIdempotencyRepository,
  type IdempotencyRepository,
  type IdempotencyScope,
  type Reservation,
} from '../../modules/idempotency/idempotency.repository.ts';
import type { App } from '../route-types.ts';

/**
 * DESIGN §4 idempotency, for routes with `config: { idempotent: true }`.
 *
 * A request with an `Idempotency-Key` header (1–128 printable ASCII characters) reserves the key in
 * its scope — tenant, signed-in user (else "anonymous"), method, route pattern — before the handler
 * runs. The answer is stored when it is sent; a later request with the same key gets that answer
 * again, with `Idempotent-Replayed: true`, and the handler does not run. Specifically:
 *
 *   - the same key with a different request (params, query or parsed body) answers 422;
 *   - the same key while the first request still runs answers 409 (so concurrent duplicates make one effect);
 *   - only 2xx and 4xx answers are stored (not 429, which is transient); a 5xx, or a request that
 *     ends without an answer, frees the key so the client can try again;
 *   - keys expire after 24 h. A reservation is a lease of IDEMPOTENCY_LEASE_MS that the live
 *     request renews every third of it; a process that died mid-request stops renewing, so its
 *     key can be retried seconds later (not a 409 for minutes), and a slow live request keeps its key.
 *
 * The request is fingerprinted after parsing and validation (preHandler), so encrypted routes
 * (SPEC §5), whose ciphertext differs on every try, compare the decrypted body. The answer is
 * captured by an onSend hook added before the encryption plugin's, i.e. the plain envelope; a
 * replay is sent as that plain text from the preHandler and goes through encryption like any answer.
 */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';

export const IdempotencyMessages = {
  malformedKey: 'Idempotency-Key 格式不正确：应为 1–128 个可打印 ASCII 字符',
  keyReused: 'Idempotency-Key 已用于不同的请求',
  inProgress: '相同的请求正在处理中，请稍后重试',
} as const;

const KEY = /^[\x20-\x7e]{1,128}$/;
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** How long a reservation holds without renewal: past it, its request is taken for dead. */
export const IDEMPOTENCY_LEASE_MS = 15_000;
const RENEW_EVERY_MS = IDEMPOTENCY_LEASE_MS / 3;
/** Rows written before leases existed: 'in_progress' older than this belongs to a request that will never finish. */
export const IDEMPOTENCY_STALE_MS = 5 * 60_000;
const CLEANUP_EVERY_MS = 60_000;

declare module 'fastify' {
  interface FastifyRequest {
    /** The reservation this request holds, until its answer is stored or the key released. */
    idempotency: (Reservation & { key: string; salt: string; settled: boolean; renewal?: NodeJS.Timeout }) | null;
  }
}

const isFlagged = (req: FastifyRequest) => req.routeOptions.config.idempotent === true;

/** JSON with object keys sorted at every depth, so key order never changes a fingerprint. */
export function canonicalJson(value: unknown): string {
  const walk = (v: unknown): unknown => {
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') v = (v as { toJSON: () => unknown }).toJSON();
    if (typeof v === 'bigint') return v.toString();
    if (Array.isArray(v)) return v.map((x) => (x === undefined ? null : walk(x)));
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) {
        const x = (v as Record<string, unknown>)[k];
        if (x !== undefined && typeof x !== 'function') out[k] = walk(x);
      }
      return out;
    }
    return v;
  };
  return JSON.stringify(walk(value)) ?? 'null';
}

/** Keyed by the idempotency key, so a leaked row can't be used to guess the body (e.g. a password). */
const fingerprintOf = (key: string, req: FastifyRequest) =>
  crypto.createHmac('sha256', key).update(canonicalJson({ params: req.params, query: req.query, body: req.body })).digest('hex');

/** AES-256-GCM with a key derived from the idempotency key: answers carry tokens; only the client can unseal them. */
const sealKey = (key: string, salt: string) => Buffer.from(crypto.hkdfSync('sha256', key, salt, 'suanli/idempotency/response', 32));

export function sealAnswer(plain: string, key: string, salt: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', sealKey(key, salt), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

export function openAnswer(sealed: string, key: string, salt: string): string {
  const bytes = Buffer.from(sealed, 'base64');
  const decipher = crypto.createDecipheriv('aes-256-gcm', sealKey(key, salt), bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
}

/** 2xx and 4xx are the answer to the request; 5xx and 429 say "try again" and are not kept. */
export const isStorable = (status: number) => (status >= 200 && status < 300) || (status >= 400 && status < 500 && status !== 429);

export function registerIdempotency(app: App, deps: { db: Db; clock: Clock; repository?: IdempotencyRepository }): void {
  const repo = deps.repository ?? createIdempotencyRepository(deps.db);
  const { clock } = deps;
  let lastCleanup = 0;

  const cleanup = async (req: FastifyRequest, now: Date) => {
    if (now.getTime() - lastCleanup < CLEANUP_EVERY_MS && now.getTime() >= lastCleanup) return;
    lastCleanup = now.getTime();
    try {
      await repo.deleteExpired(now);
    } catch (err) {
      req.log.warn({ err }, 'idempotency cleanup failed');
    }
  };

  const settle = async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const held = req.idempotency;
    if (!held || held.settled) return;
    held.settled = true;
    clearInterval(held.renewal);
    try {
      const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
      if (text !== undefined && isStorable(reply.statusCode)) {
        const contentType = reply.getHeader('content-type');
        const stored = await repo.complete(
          held,
          { statusCode: reply.statusCode, contentType: typeof contentType === 'string' ? contentType : null, response: sealAnswer(text, held.key, held.salt) },
          clock(),
        );
        if (!stored) req.log.warn('idempotency reservation lost before its answer was stored');
      } else {
        await repo.release(held);
      }
    } catch (err) {
      // The answer still goes out; the key stays reserved until it is stale, then may be retried.
      req.log.error({ err }, 'idempotency: could not store the answer');
    }
  };

  app.decorateRequest('idempotency', null);

  // Flagged routes say so in the OpenAPI document.
  app.addHook('onRoute', (route) => {
    if (route.config?.idempotent !== true || !route.schema) return;
    const note =
      '支持请求头 Idempotency-Key（1–128 个可打印 ASCII 字符，24 小时内有效）：相同的 Key 重试时返回首次的应答（响应头 Idempotent-Replayed: true），不会重复执行；' +
      'Key 用于不同请求时返回 422，首次请求仍在处理时返回 409。';
    route.schema.description = route.schema.description ? `${route.schema.description}\n\n${note}` : note;
  });

  app.addHook('preHandler', async (req, reply) => {
    if (!isFlagged(req)) return;
    const key = req.headers[IDEMPOTENCY_HEADER];
    if (key === undefined) return;
    if (typeof key !== 'string' || !KEY.test(key)) throw badRequest(IdempotencyMessages.malformedKey);

    const scope: IdempotencyScope = {
      tenantId: req.tenant.id,
      scope: req.auth ? `user:${req.auth.user.id}` : 'anonymous',
      method: req.method,
      route: req.routeOptions.url ?? req.url,
      keyHash: sha256(key),
    };
    const salt = `${scope.tenantId}|${scope.scope}|${scope.method}|${scope.route}`;
    const fingerprint = fingerprintOf(key, req);
    const now = clock();
    await cleanup(req, now);
    const result = await repo.reserve(scope, fingerprint, {
      now,
      expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      leaseUntil: new Date(now.getTime() + IDEMPOTENCY_LEASE_MS),
      staleBefore: new Date(now.getTime() - IDEMPOTENCY_STALE_MS),
    });

    if (result && 'reserved' in result) {
      const held: NonNullable<FastifyRequest['idempotency']> = { ...result.reserved, key, salt, settled: false };
      held.renewal = setInterval(() => {
        repo.renew(held, new Date(clock().getTime() + IDEMPOTENCY_LEASE_MS)).catch((err: unknown) => req.log.warn({ err }, 'idempotency: could not renew the lease'));
      }, RENEW_EVERY_MS);
      held.renewal.unref();
      req.idempotency = held;
      return;
    }
    const row = result?.existing;
    if (row && row.fingerprint !== fingerprint) {
      return reply.status(422).send({ code: 422, msg: IdempotencyMessages.keyReused, data: null, requestId: req.id });
    }
    if (!row || row.status !== 'completed' || row.statusCode === null || row.response === null) {
      throw new AppError(409, IdempotencyMessages.inProgress, undefined, { 'retry-after': '1' });
    }
    const body = openAnswer(row.response, key, salt);
    reply.status(row.statusCode).header(REPLAYED_HEADER, 'true');
    if (row.contentType) reply.header('content-type', row.contentType);
    return reply.send(body);
  });

  // Registered before the encryption plugin's onSend: the payload here is the plain serialized envelope.
  app.addHook('onSend', async (req, reply, payload) => {
    await settle(req, reply, payload);
    return payload;
  });

  // No onSend (the connection went away, the reply was hijacked): free the key.
  app.addHook('onResponse', async (req, reply) => {
    await settle(req, reply, undefined);
  });
}
