import { okEnvelope } from '@suanli/contract/envelope';
import { clonePaygBody, clonePrepayBody, copyDataBody, copyJob, copyJobList, copyStatusQuery, diskUsageList, migratableList, terminateCopyBody } from '@suanli/contract/instance-ops';
import { order } from '@suanli/contract/order';
import type { App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import { ownerOf } from '../plugins/auth.ts';
import type { InstanceService } from '../../modules/instance/instance.service.ts';
import type { CloneService } from '../../modules/instance/clone.service.ts';


/**
 * Per-IP limits of the issue #10 calls that make the compute node work: reading every disk's usage
 * (du over each disk) and starting copies (each holds two instances' disks).
 */
const OPS_LIMITS = {
  diskUsage: { max: 30, timeWindow: '1 minute' },
  copy: { max: 20, timeWindow: '1 minute' },
} as const;

/** Issue #10: clone orders, data copies, migratable instances, disk usage (docs/instance-operations.md). */
export function instanceOpsRoutes(app: App, deps: { instances: InstanceService; clones: CloneService }) {
  const { instances, clones } = deps;
  const security = [{ bearer: [] }];

  app.post(
    '/api/v1/order/instance/clone/payg',
    {
      onRequest: app.requireUser,
      schema: {
        tags: ['订单'],
        summary: '克隆实例（按量计费）：创建未支付的克隆订单',
        description: '源实例须为本人的、已关机的实例；目标机器须在线且有足够的空闲 GPU；数据盘不小于源实例。价格与新建实例相同。支付后复制源实例的系统盘和数据盘。',
        security,
        body: clonePaygBody,
        response: { 200: okEnvelope(order) },
      },
    },
    async (req) => ok(await clones.createPayg(ownerOf(req), req.body)),
  );

  app.post(
    '/api/v1/order/instance/clone/prepay',
    {
      onRequest: app.requireUser,
      schema: { tags: ['订单'], summary: '克隆实例（包周期）：创建未支付的克隆订单', description: '规则同按量计费克隆；价格与新建包周期实例相同。', security, body: clonePrepayBody, response: { 200: okEnvelope(order) } },
    },
    async (req) => ok(await clones.createPrepay(ownerOf(req), req.body)),
  );

  const tags = ['实例'];

  app.post(
    '/api/v1/instance/copy_data',
    {
      onRequest: app.requireUser,
      config: { rateLimit: OPS_LIMITS.copy },
      schema: {
        tags,
        summary: '数据拷贝：把一个实例数据盘上的文件拷贝到另一个实例（后台任务，可断点续传）',
        description: '两个实例都须是本人的；源实例关机时也可拷贝。拷贝进行中两个实例都不能开机、关机、重置或释放。',
        security,
        body: copyDataBody,
        response: { 200: okEnvelope(copyJob) },
      },
    },
    async (req) => ok(await instances.copies.create(ownerOf(req), req.body)),
  );

  app.get(
    '/api/v1/instance/copy_data_status',
    {
      onRequest: app.requireUser,
      schema: { tags, summary: '数据拷贝进度：按任务 ID、按实例，或最近的 20 个任务', security, querystring: copyStatusQuery, response: { 200: okEnvelope(copyJobList) } },
    },
    async (req) => ok(await instances.copies.status(ownerOf(req), req.query)),
  );

  app.post(
    '/api/v1/instance/terminate_copy',
    { onRequest: app.requireUser, schema: { tags, summary: '终止数据拷贝（已拷贝的文件保留）', security, body: terminateCopyBody, response: { 200: okEnvelope(copyJob) } } },
    async (req) => ok(await instances.copies.terminate(ownerOf(req), req.body.id)),
  );

  app.get(
    '/api/v1/instance/user_left_migrate',
    { onRequest: app.requireUser, schema: { tags, summary: '可迁移的实例：磁盘仍在的实例（含机器已下线的）', security, response: { 200: okEnvelope(migratableList) } } },
    async (req) => ok({ list: await instances.migratable(ownerOf(req)) }),
  );

  app.get(
    '/api/v1/instance/disk_usage',
    {
      onRequest: app.requireUser,
      config: { rateLimit: OPS_LIMITS.diskUsage },
      schema: { tags, summary: '系统盘与数据盘用量（超过 90% 时提醒）', security, response: { 200: okEnvelope(diskUsageList) } },
    },
    async (req) => ok({ list: await instances.diskUsage(ownerOf(req)) }),
  );
}
