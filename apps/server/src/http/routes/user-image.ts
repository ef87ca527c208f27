import { z } from 'zod';
import { okEnvelope } from '@suanli/contract/envelope';
import { communityImageQuery, privateImageQuery, snapshotBody, snapshotQuery, userImage, userImagePage, userImageParams, userImageUpdateBody } from '@suanli/contract/instance-ops';
import type { App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import { ownerOf } from '../plugins/auth.ts';
import type { UserImageService } from '../../modules/image/user-image.service.ts';


/** Issue #10: snapshots (saving an instance's system disk as a private image), the user's images and the image community. */
export function userImageRoutes(app: App, images: UserImageService) {
  const security = [{ bearer: [] }];
  const one = { 200: okEnvelope(userImage) };

  app.post(
    '/api/v1/instance/snapshot',
    {
      onRequest: app.requireUser,
      // Each save copies a whole system layer: a few a minute per client are plenty.
      config: { idempotent: true, rateLimit: { max: 10, timeWindow: '1 minute' } },
      schema: { tags: ['实例'], summary: '保存镜像：把已关机实例的系统盘保存为私有镜像（后台任务，进度见镜像列表）', security, body: snapshotBody, response: one },
    },
    async (req) => ok(await images.snapshot(ownerOf(req), req.body)),
  );

  app.get(
    '/api/v1/instance/snapshot',
    { onRequest: app.requireUser, schema: { tags: ['实例'], summary: '实例的快照：从该实例保存的私有镜像（已释放的实例也可查）', security, querystring: snapshotQuery, response: { 200: okEnvelope(z.object({ list: z.array(userImage) })) } } },
    async (req) => ok(await images.listForInstance(ownerOf(req), req.query.instanceId)),
  );

  const tags = ['镜像'];
  app.get(
    '/api/v1/image/private',
    { onRequest: app.requireUser, schema: { tags, summary: '我的私有镜像（分页，新的在前）', security, querystring: privateImageQuery, response: { 200: okEnvelope(userImagePage) } } },
    async (req) => ok(await images.listOwn(ownerOf(req), req.query)),
  );

  app.get(
    '/api/v1/image/private/:id',
    { onRequest: app.requireUser, schema: { tags, summary: '私有镜像详情', security, params: userImageParams, response: one } },
    async (req) => ok(await images.getOwn(ownerOf(req), req.params.id)),
  );

  app.put(
    '/api/v1/image/private/:id',
    { onRequest: app.requireUser, schema: { tags, summary: '修改私有镜像的名称、描述，分享到镜像社区或取消分享', security, params: userImageParams, body: userImageUpdateBody, response: one } },
    async (req) => ok(await images.updateOwn(ownerOf(req), req.params.id, req.body)),
  );

  app.delete(
    '/api/v1/image/private/:id',
    { onRequest: app.requireUser, schema: { tags, summary: '删除私有镜像（被实例、未支付订单或其他镜像使用时不能删除）', security, params: userImageParams, response: { 200: okEnvelope(z.null()) } } },
    async (req) => {
      await images.removeOwn(ownerOf(req), req.params.id);
      return ok(null);
    },
  );

  app.get(
    '/api/v1/image/community',
    { onRequest: app.requireUser, schema: { tags, summary: '镜像社区：本平台用户分享的镜像（可搜索；按热度或时间排序）', security, querystring: communityImageQuery, response: { 200: okEnvelope(userImagePage) } } },
    async (req) => ok(await images.listCommunity(ownerOf(req), req.query)),
  );

  app.get(
    '/api/v1/image/community/:id',
    { onRequest: app.requireUser, schema: { tags, summary: '镜像社区的镜像详情', security, params: userImageParams, response: one } },
    async (req) => ok(await images.getCommunity(ownerOf(req), req.params.id)),
  );
}
