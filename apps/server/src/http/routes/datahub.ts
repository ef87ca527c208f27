import { z } from 'zod';
import { okEnvelope } from '@suanli/contract/envelope';
import { activateDatahubBody, datacenter, datahub, datahubParams } from '@suanli/contract/datahub';
import type { App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import { authOf } from '../plugins/auth.ts';
import type { DatahubService } from '../../modules/datahub/datahub.service.ts';

export function datahubRoutes(app: App, datahubs: DatahubService) {
  const tags = ['数据中转站'];
  const security = [{ bearer: [] }];

  app.get(
    '/api/v1/ai-web/console/datacenters',
    { onRequest: app.requireUser, schema: { tags, summary: '数据中心列表（当前租户）', security, response: { 200: okEnvelope(z.array(datacenter)) } } },
    async (req) => ok(await datahubs.listDatacenters(req.tenant.id)),
  );

  app.get(
    '/api/v1/ai-web/datahub/:dataCenterId',
    {
      onRequest: app.requireUser,
      schema: { tags, summary: '当前用户在该数据中心的数据中转站（未激活为 null）', security, params: datahubParams, response: { 200: okEnvelope(datahub.nullable()) } },
    },
    async (req) => ok(await datahubs.get(authOf(req).user, req.params.dataCenterId)),
  );

  app.post(
    '/api/v1/ai-web/datahub',
    { config: { idempotent: true }, onRequest: app.requireUser, schema: { tags, summary: '激活数据中转站（异步完成，status 0 → 1）', security, body: activateDatahubBody, response: { 200: okEnvelope(datahub) } } },
    async (req) => ok(await datahubs.activate(authOf(req).user, req.body)),
  );
}
