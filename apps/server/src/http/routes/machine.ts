import { z } from 'zod';
import { okEnvelope } from '@suanli/contract/envelope';
import {
  datacenterBody,
  datacenterItem,
  diskOptions,
  diskQuery,
  gpuType,
  gpuTypeBody,
  idParams,
  machineCreateBody,
  machineItem,
  machineListQuery,
  machinePage,
  machineUpdateBody,
  tag,
  tagBody,
} from '@suanli/contract/machine';
import type { App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import type { InventoryService } from '../../modules/inventory/inventory.service.ts';

/** The market's inventory (GET, signed-in users) and the operators' inventory calls (/api/v1/operate/…). */
export function machineRoutes(app: App, inventory: InventoryService) {
  const tags = ['算力市场'];
  const opTags = ['运营：库存'];
  const security = [{ bearer: [] }];

  app.get(
    '/api/v1/machine/list',
    { onRequest: app.requireUser, schema: { tags, summary: '机器列表（筛选、分页；下线或售罄的机器 rentable=false）', security, querystring: machineListQuery, response: { 200: okEnvelope(machinePage) } } },
    async (req) => ok(await inventory.listMachines(req.tenant.id, req.query)),
  );
  app.get(
    '/api/v1/machine/gpu_type',
    { onRequest: app.requireUser, schema: { tags, summary: 'GPU 型号', security, response: { 200: okEnvelope(z.array(gpuType)) } } },
    async (req) => ok(await inventory.gpuTypes(req.tenant.id)),
  );
  app.get(
    '/api/v1/machine/disk',
    { onRequest: app.requireUser, schema: { tags, summary: '数据盘选项（指定机器，或默认）', security, querystring: diskQuery, response: { 200: okEnvelope(diskOptions) } } },
    async (req) => ok(await inventory.diskOptions(req.tenant.id, req.query.machineId)),
  );
  app.get(
    '/api/v1/common/tag',
    { onRequest: app.requireUser, schema: { tags, summary: '机器标签', security, response: { 200: okEnvelope(z.array(tag)) } } },
    async (req) => ok(await inventory.tags(req.tenant.id)),
  );

  app.get(
    '/api/v1/operate/datacenter/list',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '数据中心列表', security, response: { 200: okEnvelope(z.array(datacenterItem)) } } },
    async (req) => ok(await inventory.datacenters(req.tenant.id)),
  );
  app.post(
    '/api/v1/operate/datacenter',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '新建数据中心', security, body: datacenterBody, response: { 200: okEnvelope(datacenterItem) } } },
    async (req) => ok(await inventory.createDatacenter(req.tenant.id, req.body)),
  );
  app.put(
    '/api/v1/operate/datacenter/:id',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '修改数据中心', security, params: idParams, body: datacenterBody.partial(), response: { 200: okEnvelope(datacenterItem) } } },
    async (req) => ok(await inventory.updateDatacenter(req.tenant.id, req.params.id, req.body)),
  );
  app.post(
    '/api/v1/operate/gpu_type',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '新建 GPU 型号', security, body: gpuTypeBody, response: { 200: okEnvelope(gpuType) } } },
    async (req) => ok(await inventory.createGpuType(req.tenant.id, req.body)),
  );
  app.put(
    '/api/v1/operate/gpu_type/:id',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '修改 GPU 型号', security, params: idParams, body: gpuTypeBody.partial(), response: { 200: okEnvelope(gpuType) } } },
    async (req) => ok(await inventory.updateGpuType(req.tenant.id, req.params.id, req.body)),
  );
  app.post(
    '/api/v1/operate/tag',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '新建机器标签', security, body: tagBody, response: { 200: okEnvelope(tag) } } },
    async (req) => ok(await inventory.createTag(req.tenant.id, req.body)),
  );
  app.put(
    '/api/v1/operate/tag/:id',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '修改机器标签（改名同步到机器）', security, params: idParams, body: tagBody.partial(), response: { 200: okEnvelope(tag) } } },
    async (req) => ok(await inventory.updateTag(req.tenant.id, req.params.id, req.body)),
  );
  app.post(
    '/api/v1/operate/machine',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '新建机器', security, body: machineCreateBody, response: { 200: okEnvelope(machineItem) } } },
    async (req) => ok(await inventory.createMachine(req.tenant.id, req.body)),
  );
  app.put(
    '/api/v1/operate/machine/:id',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '修改机器（价格、上下线、磁盘、标签…）', security, params: idParams, body: machineUpdateBody, response: { 200: okEnvelope(machineItem) } } },
    async (req) => ok(await inventory.updateMachine(req.tenant.id, req.params.id, req.body)),
  );
}
