import { z } from 'zod';
import { okEnvelope } from '@suanli/contract/envelope';
import { changeImageBody, instanceDashboard, instanceItem, instanceListQuery, instanceNameBody, instancePage, instancePasswordBody, instanceRef, statusTag, storageDashboard } from '@suanli/contract/instance';
import type { App } from '../route-types.ts';
import { RATE_LIMITS } from '../route-types.ts';
import { ok } from '../envelope.ts';
import { ownerOf } from '../plugins/auth.ts';
import { powerOnBody } from '@suanli/contract/instance-ops';
import type { InstanceService } from '../../modules/instance/instance.service.ts';


export function instanceRoutes(app: App, instances: InstanceService) {
  const tags = ['实例'];
  const security = [{ bearer: [] }];
  const item = { 200: okEnvelope(instanceItem) };

  app.get(
    '/api/v1/instance/list',
    { onRequest: app.requireUser, schema: { tags, summary: '我的实例（分页；可按状态、计费方式、名称或 ID 筛选；默认不含已释放）', security, querystring: instanceListQuery, response: { 200: okEnvelope(instancePage) } } },
    async (req) => ok(await instances.list(ownerOf(req), req.query, req.headers.host)),
  );

  app.get(
    '/api/v1/instance/status_tag',
    { onRequest: app.requireUser, schema: { tags, summary: '各状态的实例数（筛选标签）', security, response: { 200: okEnvelope(z.array(statusTag)) } } },
    async (req) => ok(await instances.statusTags(ownerOf(req))),
  );

  app.post(
    '/api/v1/instance/modify_name',
    { onRequest: app.requireUser, schema: { tags, summary: '修改实例名称', security, body: instanceNameBody, response: item } },
    async (req) => ok(await instances.rename(ownerOf(req), req.body.instanceId, req.body.name, req.headers.host)),
  );

  app.post(
    '/api/v1/instance/modify_password',
    // argon2 runs here: the shared per-IP hashing budget applies.
    { onRequest: app.requireUser, config: { rateLimit: RATE_LIMITS.hashing }, schema: { tags, summary: '修改实例 root 密码（SSH 登录用）', security, body: instancePasswordBody, response: item } },
    async (req) => ok(await instances.changePassword(ownerOf(req), req.body.instanceId, req.body.password, req.headers.host)),
  );

  app.post(
    '/api/v1/instance/init',
    { onRequest: app.requireUser, schema: { tags, summary: '重置系统盘（仅关机状态；数据盘保留）', security, body: instanceRef, response: item } },
    async (req) => ok(await instances.init(ownerOf(req), req.body.instanceId, req.headers.host)),
  );

  app.post(
    '/api/v1/instance/change_image',
    { onRequest: app.requireUser, schema: { tags, summary: '更换镜像（仅关机状态；系统盘重置，数据盘保留）', security, body: changeImageBody, response: item } },
    async (req) => ok(await instances.changeImage(ownerOf(req), req.body.instanceId, req.body.imageId, req.headers.host)),
  );

  app.post(
    '/api/v1/ide-instance/power_off',
    { onRequest: app.requireUser, schema: { tags, summary: '关机（按量计费实例关机后释放 GPU、停止计费）', security, body: instanceRef, response: item } },
    async (req) => ok(await instances.powerOff(ownerOf(req), req.body.instanceId, req.headers.host)),
  );

  app.post(
    '/api/v1/ide-instance/power_on',
    {
      onRequest: app.requireUser,
      schema: {
        tags,
        summary: '开机（按量计费需余额至少够一小时，并重新占用 GPU）；noGpu: true 为无卡模式开机',
        description: '无卡模式（noGpu: true）：仅限已关机的按量计费实例，不占用 GPU，以 1 核 CPU、2 GB 内存运行，按 ¥0.10/小时计费，用于在 GPU 被占满时取用数据。',
        security,
        body: powerOnBody,
        response: item,
      },
    },
    async (req) => ok(await instances.powerOn(ownerOf(req), req.body.instanceId, req.headers.host, { noGpu: req.body.noGpu === true })),
  );

  app.post(
    '/api/v1/ide-instance/release',
    { onRequest: app.requireUser, schema: { tags, summary: '释放实例（删除磁盘，不可恢复）', security, body: instanceRef, response: item } },
    async (req) => ok(await instances.release(ownerOf(req), req.body.instanceId, req.headers.host)),
  );

  app.get(
    '/api/v1/dashboard/common/instance',
    { onRequest: app.requireUser, schema: { tags, summary: '实例概览（总数、运行中、已关机、即将到期）', security, response: { 200: okEnvelope(instanceDashboard) } } },
    async (req) => ok(await instances.dashboard(ownerOf(req))),
  );

  app.get(
    '/api/v1/dashboard/common/storage',
    { onRequest: app.requireUser, schema: { tags, summary: '存储概览（数据盘、系统盘总量）', security, response: { 200: okEnvelope(storageDashboard) } } },
    async (req) => ok(await instances.storage(ownerOf(req))),
  );
}
