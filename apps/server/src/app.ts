import crypto from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import fastifyCompress from '@fastify/compress';
import fastifyRateLimit from '@fastify/rate-limit';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { installZodLocale } from '@suanli/contract/zod-locale';
import type { Container } from './container.ts';
import { registerErrorHandler } from './http/plugins/error-handler.ts';
import { registerEncryption } from './http/plugins/encryption.ts';
import { registerIdempotency } from './http/plugins/idempotency.ts';
import { registerTenant } from './http/plugins/tenant.ts';
import { registerAuth } from './http/plugins/auth.ts';
import { registerSpa } from './http/plugins/spa.ts';
import { ping } from './db/client.ts';
import { userRoutes } from './http/routes/user.ts';
import { tenantRoutes } from './http/routes/tenant.ts';
import { captchaRoutes } from './http/routes/captcha.ts';
import { walletRoutes } from './http/routes/wallet.ts';
import { datahubRoutes } from './http/routes/datahub.ts';
import { questionRoutes } from './http/routes/question.ts';
import { paymentRoutes } from './http/routes/payment.ts';
import { sandboxCashierRoutes } from './http/routes/sandbox-cashier.ts';

export type BuildOptions = { logger?: boolean | object; webDist?: string };

/** Builds the HTTP app on a container; tests call this and use app.inject. */
export async function buildApp(container: Container, opts: BuildOptions = {}): Promise<FastifyInstance> {
  installZodLocale();
  const app = Fastify({
    logger: opts.logger ?? false,
    bodyLimit: 1024 * 1024,
    trustProxy: container.config.trustProxy,
    genReqId: () => crypto.randomUUID(),
    requestIdHeader: false,
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  registerErrorHandler(app);
  registerIdempotency(app, container); // before encryption: its onSend must see the plain answer
  registerEncryption(app, container.rsaKeys);
  await app.register(fastifyCompress, { threshold: 1024 });
  // Only routes that name a `rateLimit` in their config are limited (see RATE_LIMITS).
  if (container.config.rateLimit) await app.register(fastifyRateLimit, { global: false });
  await app.register(fastifySwagger, {
    openapi: {
      info: { title: 'Suanli API', description: '算力控制台接口。所有接口以 { code, msg, data } 信封返回；金额单位为 0.0001 元的整数。', version: '0.1.0' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Admin-Token 会话令牌' } } },
    },
    transform: jsonSchemaTransform,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/api/docs' });

  registerTenant(app, container.tenants);
  registerAuth(app, container.accounts);

  app.get('/api/health', { schema: { hide: true } }, async (_req, reply) => {
    try {
      await ping(container.db);
      return { status: 'ok', database: container.database.engine };
    } catch {
      return reply.status(503).send({ status: 'unavailable', database: container.database.engine });
    }
  });

  tenantRoutes(app, container.tenants, { captchaEnabled: container.config.captcha });
  userRoutes(app, container.accounts, container.wallet);
  captchaRoutes(app, container.captcha);
  walletRoutes(app, container.ledger, container.wallet);
  datahubRoutes(app, container.datahub);
  questionRoutes(app, container.questions);
  paymentRoutes(app, container.payments);
  sandboxCashierRoutes(app, container.sandboxCashier);

  const inbox = container.smsInbox;
  if (inbox) app.get('/dev/inbox', { schema: { hide: true } }, async () => ({ list: inbox() }));

  await registerSpa(app, { distDir: opts.webDist, publicKeyPem: container.rsaKeys.publicKeyPem, captchaEnabled: container.config.captcha });
  return app;
}
