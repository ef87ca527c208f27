import crypto from 'node:crypto';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import fastifyCompress from '@fastify/compress';
import fastifyRateLimit from '@fastify/rate-limit';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { installZodLocale } from '@suanli/contract/zod-locale';
import type { Container } from './container.ts';
import type { Config } from './config.ts';
import { registerErrorHandler } from './http/plugins/error-handler.ts';
import { registerEncryption } from './http/plugins/encryption.ts';
import { registerIdempotency } from './http/plugins/idempotency.ts';
import { registerTenant } from './http/plugins/tenant.ts';
import { registerAuth } from './http/plugins/auth.ts';
import { registerSpa } from './http/plugins/spa.ts';
import { BARE_SECURITY_HEADERS, registerSecurityHeaders } from './http/plugins/security-headers.ts';
import { InputMessages, registerInputGuard } from './http/plugins/input-guard.ts';
import { Messages } from '@suanli/contract/errors';
import { ping } from './db/client.ts';
import { userRoutes } from './http/routes/user.ts';
import { tenantRoutes } from './http/routes/tenant.ts';
import { captchaRoutes } from './http/routes/captcha.ts';
import { walletRoutes } from './http/routes/wallet.ts';
import { datahubRoutes } from './http/routes/datahub.ts';
import { questionRoutes } from './http/routes/question.ts';
import { paymentRoutes } from './http/routes/payment.ts';
import { sandboxCashierRoutes } from './http/routes/sandbox-cashier.ts';
import { imageRoutes } from './http/routes/image.ts';
import { userImageRoutes } from './http/routes/user-image.ts'; // Issue #10 (images)
import { devInboxEnabled, devInboxRoutes } from './http/routes/dev-inbox.ts';
// Issue #8 (meter): market inventory, operator inventory calls, bills, GET /metrics.
import { machineRoutes } from './http/routes/machine.ts';
import { billRoutes } from './http/routes/bill.ts';
import { metricsRoutes, registerHttpMetrics } from './http/routes/metrics.ts';
import { orderRoutes } from './http/routes/order.ts';
import { instanceRoutes } from './http/routes/instance.ts';
import { instanceOpsRoutes } from './http/routes/instance-ops.ts'; // Issue #10 (clone, copy, no-GPU)
import { orderOpsRoutes } from './http/routes/order-ops.ts'; // Issue #10 (billing changes)
// issue #8 (ssh): SSH public keys and the web shell.
import { sshKeyRoutes } from './http/routes/ssh-key.ts';
import { shellRoutes } from './http/routes/shell.ts';
// Issue #9 (gateway): the OpenAI-compatible /v1 gateway, in its own scope.
import { llmGatewayRoutes } from './http/routes/llm-gateway.ts';
// Issue #9 (catalog): the model square, API keys, the operator's upstreams and models.
import { llmRoutes } from './http/routes/llm.ts';
// Issue #9 (chat): the console's text chat and the usage statistics.
import { llmChatRoutes } from './http/routes/llm-chat.ts';

export type BuildOptions = { logger?: boolean | object; webDist?: string };

/**
 * TRUST_PROXY as Fastify takes it. A hop count becomes proxy-addr's trust function "the first N
 * addresses from the socket's end are proxies" (Fastify itself refuses a bare number); the client is
 * then the address the outermost trusted proxy appended, whatever a client wrote to the left of it.
 */
export function trustProxyOption(tp: Config['trustProxy']): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof tp === 'number') return (_address, hop) => hop < tp;
  return tp;
}

function answerFrameworkError(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const [status, msg] =
    err.code === 'FST_ERR_BAD_URL' ? [400, InputMessages.badUrl] : err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? [414, '请求地址过长'] : [500, Messages.internal];
  if (status >= 500) req.log.error({ err }, 'framework error');
  void reply.status(status).headers(BARE_SECURITY_HEADERS).send({ code: status, msg, data: null, requestId: req.id });
}

/** Builds the HTTP app on a container; tests call this and use app.inject. */
export async function buildApp(container: Container, opts: BuildOptions = {}): Promise<FastifyInstance> {
  installZodLocale();
  const app = Fastify({
    logger: opts.logger ?? false,
    bodyLimit: 1024 * 1024,
    trustProxy: trustProxyOption(container.config.trustProxy),
    genReqId: () => crypto.randomUUID(),
    requestIdHeader: false,
    routerOptions: { ignoreTrailingSlash: true },
    // A URL the router can't decode (`/api/%zz`) or a path parameter too long: answered here,
    // before any hook, so in the envelope and with the headers other answers get from hooks.
    frameworkErrors: answerFrameworkError,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  registerErrorHandler(app);
  registerHttpMetrics(app, container.metrics); // issue #8 (meter): HTTP latency by route
  await registerSecurityHeaders(app, { publicUrl: container.config.PUBLIC_URL });
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

  registerInputGuard(app); // after encryption: an encrypted body is checked once decrypted
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
  userRoutes(app, container.accounts, container.wallet, container.instances);
  captchaRoutes(app, container.captcha);
  walletRoutes(app, container.ledger, container.wallet);
  datahubRoutes(app, container.datahub);
  questionRoutes(app, container.questions);
  paymentRoutes(app, container.payments);
  sandboxCashierRoutes(app, container.sandboxCashier);
  // Issue #8 (meter)
  machineRoutes(app, container.inventory);
  billRoutes(app, container.metering);
  metricsRoutes(app, container.metrics, container.accounts);
  orderRoutes(app, container.orders); // orders and instances
  instanceRoutes(app, container.instances);
  instanceOpsRoutes(app, { instances: container.instances, clones: container.clones }); // Issue #10 (clone, copy, no-GPU)
  orderOpsRoutes(app, container.instanceChanges); // Issue #10 (billing changes)
  imageRoutes(app, container.images); // compute images (issue #8)
  userImageRoutes(app, container.images.users!); // Issue #10 (images): snapshots, private images, community
  // issue #8 (ssh): SSH public keys, web shell ticket and WebSocket.
  sshKeyRoutes(app, container.sshKeys);
  await shellRoutes(app, { shell: container.shell, publicUrl: container.config.PUBLIC_URL });
  // Issue #9 (catalog)
  llmRoutes(app, { catalog: container.llmCatalog, admin: container.llmAdmin, apiKeys: container.llmApiKeys });

  // Issue #9 (gateway): /v1 in OpenAI's shapes (own error handler, 404 and body parser).
  await app.register(llmGatewayRoutes, { prefix: '/v1', keyAuth: container.llmKeyAuth, catalog: container.llmCatalog, completions: container.llmCompletions, clock: container.clock });
  // Issue #9 (chat)
  llmChatRoutes(app, container.llmChat, container.llmUsage);

  if (devInboxEnabled(container.smsInbox, container.config.trustProxy)) devInboxRoutes(app, container.smsInbox);

  await registerSpa(app, { distDir: opts.webDist, publicKeyPem: container.rsaKeys.publicKeyPem, captchaEnabled: container.config.captcha });
  return app;
}
