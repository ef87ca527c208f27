import { z } from 'zod';
import type { FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { okEnvelope } from '@suanli/contract/envelope';
import { createPaymentBody, payment, paymentMethodItem, paymentParams } from '@suanli/contract/payment';
import { RATE_LIMITS, type App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import { authOf } from '../plugins/auth.ts';
import type { PaymentService } from '../../modules/payment/payment.service.ts';

/**
 * The origin the payer's pages and the gateway's notifications go to: PUBLIC_URL when set (behind
 * a proxy that rewrites Host, or to pin one address), else the origin this request came to, so a
 * tenant on its own domain gets its own result pages back.
 */
export function requestBase(req: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '');
  return `${req.protocol}://${req.host}`;
}

/** Node's headers as the payment port takes them: one string per name (repeated ones joined, as HTTP defines). */
const flatHeaders = (req: FastifyRequest): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]));

export function paymentRoutes(app: App, payments: PaymentService, opts: { publicUrl?: string }) {
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
      return ok(await payments.create({ id: user.id, tenantId: user.tenantId }, req.tenant, req.body, { base: requestBase(req, opts.publicUrl), clientIp: req.ip }));
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
