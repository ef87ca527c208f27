import { z } from 'zod';
import { okEnvelope } from '@suanli/contract/envelope';
import { imageBuildBody, imageIdParams, imageItem, imageUpdateBody, operatorImageItem } from '@suanli/contract/machine';
import type { App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import { authOf } from '../plugins/auth.ts';
import type { ImageService } from '../../modules/image/image.service.ts';

export function imageRoutes(app: App, images: ImageService) {
  const security = [{ bearer: [] }];

  app.get(
    '/api/v1/image/all',
    { onRequest: app.requireUser, schema: { tags: ['镜像'], summary: '可选镜像（平台镜像和本租户已发布的镜像，构建中的带进度；以及自己已保存完成的私有镜像）', security, response: { 200: okEnvelope(z.array(imageItem)) } } },
    async (req) => {
      const { user } = authOf(req);
      return ok(await images.listForTenant(req.tenant.id, { tenantId: user.tenantId, userId: user.id }));
    },
  );

  const tags = ['运营'];
  app.get(
    '/api/v1/operate/images',
    { onRequest: app.requireOperator, schema: { tags, summary: '全部镜像（含未发布、构建失败的原因）', security, response: { 200: okEnvelope(z.array(operatorImageItem)) } } },
    async (req) => ok(await images.listForOperator(authOf(req))),
  );

  app.post(
    '/api/v1/operate/images/build',
    {
      config: { idempotent: true },
      onRequest: app.requireOperator,
      schema: { tags, summary: '按配方构建镜像（后台任务，进度见镜像列表）', security, body: imageBuildBody, response: { 200: okEnvelope(operatorImageItem) } },
    },
    async (req) => ok(await images.startBuild(authOf(req), req.body.recipe)),
  );

  app.put(
    '/api/v1/operate/images/:id',
    { onRequest: app.requireOperator, schema: { tags, summary: '修改镜像名称、说明、是否发布', security, params: imageIdParams, body: imageUpdateBody, response: { 200: okEnvelope(operatorImageItem) } } },
    async (req) => ok(await images.update(authOf(req), req.params.id, req.body)),
  );

  app.delete(
    '/api/v1/operate/images/:id',
    { onRequest: app.requireOperator, schema: { tags, summary: '删除未被使用的镜像（连同其文件）', security, params: imageIdParams, response: { 200: okEnvelope(z.null()) } } },
    async (req) => {
      await images.remove(authOf(req), req.params.id);
      return ok(null);
    },
  );
}
