import type { FastifyInstance, FastifyBaseLogger, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';

/** The Fastify instance as route files see it: zod schemas type params, body and reply. */
export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, ZodTypeProvider>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** SPEC §5: the body arrives AES-encrypted with an RSA-protected key, and the answer leaves so. */
    encrypted?: boolean;
  }
}
