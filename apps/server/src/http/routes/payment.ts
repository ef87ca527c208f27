import { z } from 'zod';
import type { FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { okEnvelope } from '@suanli/contract/envelope';
import { createPaymentBody, flaggedPaymentsPage, flaggedPaymentsQuery, payment, paymentMethodItem, paymentParams } from '@suanli/contract/payment';
import { RATE_LIMITS, type App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import { authOf } from '../plugins/auth.ts';
import type { PaymentService } from '../../modules/payment/payment.service.ts';

/** Node's headers as the payment port takes them: one string per name (repeated ones joined, as HTTP defines). */
const flatHeaders = (req: FastifyRequest): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]));

/**
 * Gateways' notifications are a few KiB (Alipay's form posts, WeChat Pay v3's JSON, the sandbox's
 * JSON): 64 KiB fits all of them with room, and bounds what anyone can make this route read.
 */
export const NOTIFY_BODY_LIMIT = 64 * 1024;

export function paymentRoutes(app: App, payments: PaymentService) {
  const tags = ['支付'];
  const security = [{ bearer: [] }];

  app.get(
    '/api/v1/payments/methods',
    { onRequest: app.requireUser, schema: { tags, summary: '当前租户可用的支付方式', security, response: { 200: okEnvelope(z.array(paymentMethodItem)) } } },
    async (req) => ok(payments.methods(req.tenant)),
  );

  app.post(
    '/api/v1/payments',
    {
      config: { idempotent: true },
      onRequest: app.requireUser,
      schema: {
        tags,
        summary: '创建充值支付单',
        description: '金额单位 0.0001 元，¥1–¥100,000，须为整分。返回 payUrl（跳转收银台）或 qrCode（扫码），支付单 15 分钟内未支付即超时。',
        security,
        body: createPaymentBody,
        response: { 200: okEnvelope(payment) },
      },
    },
    async (req) => {
      const { user } = authOf(req);
      return ok(await payments.create({ id: user.id, tenantId: user.tenantId }, req.tenant, req.body, { requestHost: req.headers.host, clientIp: req.ip }));
    },
  );

  app.get(
    '/api/v1/payments/:id',
    {
      onRequest: app.requireUser,
      schema: {
        tags,
        summary: '查询支付单（等待页与结果页轮询）',
        description: 'status: pending 待支付 / paid 已到账 / failed 支付失败 / expired 已超时。只有支付渠道经验签的通知或对账才会使其变为 paid。',
        security,
        params: paymentParams,
        response: { 200: okEnvelope(payment) },
      },
    },
    async (req) => {
      const { user } = authOf(req);
      return ok(await payments.get({ id: user.id, tenantId: user.tenantId }, req.params.id));
    },
  );

  app.get(
    '/api/v1/operate/payments',
    {
      onRequest: app.requireOperator,
      schema: {
        tags: ['运营'],
        summary: '需要运营关注的支付单（flag=late：超时关闭后才到账、已照常入账）',
        security,
        querystring: flaggedPaymentsQuery,
        response: { 200: okEnvelope(flaggedPaymentsPage) },
      },
    },
    async (req) => ok(await payments.listFlagged(req.tenant.id, req.query.page, req.query.pageSize)),
  );

  // Gateways sign the exact bytes they send, so the notify route takes the body as raw text, in a
  // scope of its own: whatever the content type (Alipay form, WeChat and sandbox JSON), no parser
  // of the root app (JSON, the encrypted text/plain) touches it.
  void app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<ZodTypeProvider>();
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, async (_req: FastifyRequest, body: string | Buffer) => body.toString());
    scope.post(
      '/api/v1/payments/notify/:method',
      {
        config: { rateLimit: RATE_LIMITS.notify },
        bodyLimit: NOTIFY_BODY_LIMIT,
        schema: {
          tags,
          summary: '支付渠道异步通知（sandbox / alipay / wechat）',
          description: '由支付渠道调用：先验签，再在一个事务中记账，提交后按渠道要求应答。同一支付单无论通知多少次只入账一次。',
          params: z.object({ method: z.string() }),
        },
      },
      async (req, reply) => {
        const rawBody = typeof req.body === 'string' ? req.body : '';
        const ack = await payments.handleNotify(req.params.method, { headers: flatHeaders(req), rawBody });
        return reply.status(ack.status).header('content-type', ack.contentType).send(ack.body);
      },
    );
  });
}
