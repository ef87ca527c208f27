import { okEnvelope } from '@suanli/contract/envelope';
import { order } from '@suanli/contract/order';
import { availableExpandDisk, changePreview, chargeTypePaygBody, chargeTypePrepayBody, dataDiskChangeBody, expandDiskQuery, renewalBody, specChangeBody } from '@suanli/contract/instance-ops';
import type { App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import { ownerOf } from '../plugins/auth.ts';
import type { InstanceChangeService } from '../../modules/order/instance-change.service.ts';


/**
 * Issue #10 (billing changes): charge-type conversions, renewal, GPU count and data disk of an
 * instance (docs/instance-operations.md). Changes that cost money answer an unpaid order (paid
 * with POST /api/v1/order/pay); refunds and free changes are applied at once (a paid order, amount ≤ 0).
 * The calls that create or apply a change honour an Idempotency-Key (a retry replays the answer).
 */
export function orderOpsRoutes(app: App, changes: InstanceChangeService) {
  const tags = ['订单'];
  const security = [{ bearer: [] }];
  const preview = { 200: okEnvelope(changePreview) };
  const anOrder = { 200: okEnvelope(order) };

  app.post(
    '/api/v1/order/charge_type/prepay/preview',
    { onRequest: app.requireUser, schema: { tags, summary: '询价：按量转包周期', security, body: chargeTypePrepayBody, response: preview } },
    async (req) => ok(await changes.previewToPrepaid(ownerOf(req), req.body)),
  );
  app.post(
    '/api/v1/order/charge_type/prepay',
    {
      config: { idempotent: true }, onRequest: app.requireUser,
      schema: { tags, summary: '按量转包周期（创建未支付订单，从支付时起计算时长）', description: '运行中的实例支付后停止按量计费；已关机的实例支付时需重新占用 GPU（不足时 409）。', security, body: chargeTypePrepayBody, response: anOrder },
    },
    async (req) => ok(await changes.toPrepaid(ownerOf(req), req.body)),
  );
  app.post(
    '/api/v1/order/charge_type/payg/preview',
    { onRequest: app.requireUser, schema: { tags, summary: '询价：包周期转按量（按秒折算退还未使用时长）', security, body: chargeTypePaygBody, response: preview } },
    async (req) => ok(await changes.previewToPayg(ownerOf(req), req.body)),
  );
  app.post(
    '/api/v1/order/charge_type/payg',
    {
      config: { idempotent: true }, onRequest: app.requireUser,
      schema: { tags, summary: '包周期转按量（立即生效，未使用时长按秒折算退回余额）', description: '运行中的实例转换后按量计费，需余额（含退款）至少够一小时；已关机的实例释放 GPU。', security, body: chargeTypePaygBody, response: anOrder },
    },
    async (req) => ok(await changes.toPayg(ownerOf(req), req.body)),
  );
  app.post(
    '/api/v1/order/instance/renewal/preview',
    { onRequest: app.requireUser, schema: { tags, summary: '询价：续费包周期实例', security, body: renewalBody, response: preview } },
    async (req) => ok(await changes.previewRenewal(ownerOf(req), req.body)),
  );
  app.post(
    '/api/v1/order/instance/renewal',
    { config: { idempotent: true }, onRequest: app.requireUser, schema: { tags, summary: '续费包周期实例（创建未支付订单；已到期未释放的实例也可续费）', security, body: renewalBody, response: anOrder } },
    async (req) => ok(await changes.renew(ownerOf(req), req.body)),
  );
  app.post(
    '/api/v1/order/instance/change/preview',
    { onRequest: app.requireUser, schema: { tags, summary: '询价：变更 GPU 数量（同一机器，仅关机状态）', security, body: specChangeBody, response: preview } },
    async (req) => ok(await changes.previewSpec(ownerOf(req), req.body)),
  );
  app.post(
    '/api/v1/order/instance/change',
    {
      config: { idempotent: true }, onRequest: app.requireUser,
      schema: { tags, summary: '变更 GPU 数量（同一机器，仅关机状态）', description: '包周期升配按剩余时长补差价（创建未支付订单），降配按剩余时长退款（立即生效）；按量计费下次开机起按新单价计费。', security, body: specChangeBody, response: anOrder },
    },
    async (req) => ok(await changes.changeSpec(ownerOf(req), req.body)),
  );
  app.post(
    '/api/v1/order/data_disk/change/preview',
    { onRequest: app.requireUser, schema: { tags, summary: '询价：调整数据盘大小', security, body: dataDiskChangeBody, response: preview } },
    async (req) => ok(await changes.previewDisk(ownerOf(req), req.body)),
  );
  app.post(
    '/api/v1/order/data_disk/change',
    {
      config: { idempotent: true }, onRequest: app.requireUser,
      schema: { tags, summary: '调整数据盘大小（扩容可在运行中进行；缩容需关机且不小于已用空间）', description: '包周期扩容按剩余时长补差价（创建未支付订单），缩容按剩余时长退款；按量计费立即按新单价计费。', security, body: dataDiskChangeBody, response: anOrder },
    },
    async (req) => ok(await changes.changeDisk(ownerOf(req), req.body)),
  );
  app.get(
    '/api/v1/instance/available_expand_disk',
    { onRequest: app.requireUser, schema: { tags: ['实例'], summary: '数据盘可调整的范围（当前大小、已用、最小、最大、单价）', security, querystring: expandDiskQuery, response: { 200: okEnvelope(availableExpandDisk) } } },
    async (req) => ok(await changes.availableExpandDisk(ownerOf(req), req.query.instanceId)),
  );
}
