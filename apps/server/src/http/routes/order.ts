import { okEnvelope } from '@suanli/contract/envelope';
import { createPaygOrderBody, createPrepayOrderBody, order, orderListQuery, orderPage, orderParams, payOrderBody, pricePreview, pricePreviewBody } from '@suanli/contract/order';
import type { App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import { ownerOf } from '../plugins/auth.ts';
import type { OrderService } from '../../modules/order/order.service.ts';

export function orderRoutes(app: App, orders: OrderService) {
  const tags = ['订单'];
  const security = [{ bearer: [] }];

  app.post(
    '/api/v1/order/price/preview',
    { onRequest: app.requireUser, schema: { tags, summary: '询价：按量（每小时）或包周期（总价）', security, body: pricePreviewBody, response: { 200: okEnvelope(pricePreview) } } },
    async (req) => ok(await orders.preview(ownerOf(req), req.body)),
  );

  app.post(
    '/api/v1/order/payg',
    { onRequest: app.requireUser, schema: { tags, summary: '创建按量计费订单（未支付，15 分钟内有效，不占用 GPU）', security, body: createPaygOrderBody, response: { 200: okEnvelope(order) } } },
    async (req) => ok(await orders.createPayg(ownerOf(req), req.body)),
  );

  app.post(
    '/api/v1/order/prepay',
    { onRequest: app.requireUser, schema: { tags, summary: '创建包周期订单（未支付，15 分钟内有效，不占用 GPU）', security, body: createPrepayOrderBody, response: { 200: okEnvelope(order) } } },
    async (req) => ok(await orders.createPrepay(ownerOf(req), req.body)),
  );

  app.post(
    '/api/v1/order/pay',
    {
      config: { idempotent: true },
      onRequest: app.requireUser,
      schema: {
        tags,
        summary: '余额支付订单（支持 Idempotency-Key）',
        description: '一个事务内：锁定订单、占用 GPU、从余额扣款（包周期）、创建实例并开始创建。GPU 不足、余额不足、订单已支付/取消/超时均返回 409 且不扣费。',
        security,
        body: payOrderBody,
        response: { 200: okEnvelope(order) },
      },
    },
    async (req) => ok(await orders.pay(ownerOf(req), req.body.orderId)),
  );

  app.put(
    '/api/v1/order/:id/cancel',
    { onRequest: app.requireUser, schema: { tags, summary: '取消未支付的订单', security, params: orderParams, response: { 200: okEnvelope(order) } } },
    async (req) => ok(await orders.cancel(ownerOf(req), req.params.id)),
  );

  app.post(
    '/api/v1/order/list',
    { onRequest: app.requireUser, schema: { tags, summary: '我的订单（分页，可按状态、类型筛选）', security, body: orderListQuery, response: { 200: okEnvelope(orderPage) } } },
    async (req) => ok(await orders.list(ownerOf(req), req.body)),
  );

  app.get(
    '/api/v1/order/:id',
    { onRequest: app.requireUser, schema: { tags, summary: '订单详情', security, params: orderParams, response: { 200: okEnvelope(order) } } },
    async (req) => ok(await orders.get(ownerOf(req), req.params.id)),
  );
}
