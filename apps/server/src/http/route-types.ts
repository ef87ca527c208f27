import type { FastifyInstance, FastifyBaseLogger, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';

/** The Fastify instance as route files see it: zod schemas type params, body and reply. */
export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, ZodTypeProvider>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** SPEC §5: the body arrives AES-encrypted with an RSA-protected key, and the answer leaves so. */
    encrypted?: boolean;
    /** DESIGN §4: honours an `Idempotency-Key` header (http/plugins/idempotency.ts). */
    idempotent?: boolean;
  }
}

/**
 * Per-client-IP limits on the unauthenticated calls that cost the server work (drawing a
 * captcha, verifying and storing a notification) or money (an SMS), on top of the per-phone rules of the account service. Per process:
 * with several replicas a client gets up to N times as many.
 */
export const RATE_LIMITS = {
  captcha: { max: 40, timeWindow: '1 minute' },
  sendCode: { max: 20, timeWindow: '10 minutes' },
  /**
   * Every route that runs argon2 (sign-in, register, reset, password and phone change) shares one
   * budget per IP, so one client can't keep the CPU hashing for everyone else.
   */
  hashing: { max: 30, timeWindow: '1 minute' },
  /** Gateways notify from a few addresses in bursts: generous, but every body is verified and kept. */
  notify: { max: 600, timeWindow: '1 minute' },
  /** The contact form stores a sales lead and shows it to operators: a person sends a few, a script thousands. */
  question: { max: 10, timeWindow: '1 hour' },
} as const;
