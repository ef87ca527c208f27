import { z } from 'zod';
import { okEnvelope } from '@suanli/contract/envelope';
import {
  apiKeyIdBody,
  apiKeyItem,
  apiKeyList,
  createApiKeyBody,
  createdApiKey,
  modelBody,
  modelList,
  modelListQuery,
  modelPatch,
  operatorModelItem,
  operatorModelList,
  updateApiKeyBody,
  upstreamBody,
  upstreamHealth,
  upstreamItem,
  upstreamList,
  upstreamPatch,
  type ModelItem,
} from '@suanli/contract/llm';
import { idParams } from '@suanli/contract/machine';
import type { App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import { authOf, ownerOf } from '../plugins/auth.ts';
import type { LlmCatalog } from '../../modules/llm/types.ts';
import { presentModel } from '../../modules/llm/catalog.service.ts';
import type { LlmCatalogAdmin } from '../../modules/llm/catalog-admin.service.ts';
import type { ApiKeyService } from '../../modules/llm/api-key.service.ts';

/** Per client IP: a person creates a few keys; MAX_API_KEYS caps what is kept. */
const API_KEY_CREATE_LIMIT = { max: 20, timeWindow: '1 minute' } as const;

/** The model square: the tenant's published models, filtered by keyword and tag. */
export async function squareModels(catalog: Pick<LlmCatalog, 'publishedModels'>, tenantId: number, q: { keyword?: string; tag?: string }) {
  const published = await catalog.publishedModels(tenantId);
  const tags = [...new Set(published.flatMap((m) => m.tags))];
  const keyword = q.keyword?.toLowerCase();
  const list: ModelItem[] = published
    .filter((m) => !q.tag || m.tags.includes(q.tag))
    .filter((m) => !keyword || [m.name, m.modelId, m.provider, m.description].some((s) => s.toLowerCase().includes(keyword)))
    .map(presentModel);
  return { list, tags };
}

/** Issue #9 (catalog): the model square, the user's API keys, and the operator's upstreams and models. */
export function llmRoutes(app: App, deps: { catalog: LlmCatalog; admin: LlmCatalogAdmin; apiKeys: ApiKeyService }) {
  const { catalog, admin, apiKeys } = deps;
  const security = [{ bearer: [] }];
  const squareTags = ['大模型'];
  const keyTags = ['大模型：API 密钥'];
  const opTags = ['运营：大模型'];

  app.get(
    '/api/v1/llm/model/list',
    { onRequest: app.requireUser, schema: { tags: squareTags, summary: '模型广场：已上架的模型（按关键词、标签筛选）', security, querystring: modelListQuery, response: { 200: okEnvelope(modelList) } } },
    async (req) => ok(await squareModels(catalog, authOf(req).user.tenantId, req.query)),
  );

  // ---- API keys -------------------------------------------------------------------------------

  app.get(
    '/api/v1/llm/api_key/list',
    { onRequest: app.requireUser, schema: { tags: keyTags, summary: '我的 API 密钥（未删除，新的在前）', security, response: { 200: okEnvelope(apiKeyList) } } },
    async (req) => ok(await apiKeys.list(ownerOf(req))),
  );
  app.post(
    '/api/v1/llm/api_key/create',
    {
      onRequest: app.requireUser,
      config: { rateLimit: API_KEY_CREATE_LIMIT },
      schema: { tags: keyTags, summary: '创建 API 密钥（密钥明文只在此返回一次）', security, body: createApiKeyBody, response: { 200: okEnvelope(createdApiKey) } },
    },
    async (req) => ok(await apiKeys.create(ownerOf(req), req.body)),
  );
  app.post(
    '/api/v1/llm/api_key/update',
    { onRequest: app.requireUser, schema: { tags: keyTags, summary: '修改 API 密钥（名称、过期时间、模型、额度、IP 白名单、限额，启用/停用）', security, body: updateApiKeyBody, response: { 200: okEnvelope(apiKeyItem) } } },
    async (req) => ok(await apiKeys.update(ownerOf(req), req.body)),
  );
  app.post(
    '/api/v1/llm/api_key/delete',
    { onRequest: app.requireUser, schema: { tags: keyTags, summary: '删除 API 密钥（立即失效）', security, body: apiKeyIdBody, response: { 200: okEnvelope(z.null()) } } },
    async (req) => {
      await apiKeys.remove(ownerOf(req), req.body.id);
      return ok(null);
    },
  );

  // ---- Operator: upstreams and models ----------------------------------------------------------

  const tenantOf = (req: Parameters<typeof authOf>[0]) => authOf(req).user.tenantId;

  app.get(
    '/api/v1/operate/llm/upstream',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '上游列表（含已停用）', security, response: { 200: okEnvelope(upstreamList) } } },
    async (req) => ok(await admin.listUpstreams(tenantOf(req))),
  );
  app.post(
    '/api/v1/operate/llm/upstream',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '新建上游（openai 兼容服务或内置 CPU 推理；密钥加密保存）', security, body: upstreamBody, response: { 200: okEnvelope(upstreamItem) } } },
    async (req) => ok(await admin.createUpstream(tenantOf(req), req.body)),
  );
  app.put(
    '/api/v1/operate/llm/upstream/:id',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '修改上游（apiKey 传空字符串清除密钥）', security, params: idParams, body: upstreamPatch, response: { 200: okEnvelope(upstreamItem) } } },
    async (req) => ok(await admin.updateUpstream(tenantOf(req), req.params.id, req.body)),
  );
  app.delete(
    '/api/v1/operate/llm/upstream/:id',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '停用上游（仍有已上架模型使用时拒绝）', security, params: idParams, response: { 200: okEnvelope(z.null()) } } },
    async (req) => {
      await admin.retireUpstream(tenantOf(req), req.params.id);
      return ok(null);
    },
  );
  app.post(
    '/api/v1/operate/llm/upstream/:id/test',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '测试上游连通性（延迟与可用模型）', security, params: idParams, response: { 200: okEnvelope(upstreamHealth) } } },
    async (req) => ok(await admin.testUpstream(tenantOf(req), req.params.id)),
  );

  app.get(
    '/api/v1/operate/llm/model',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '模型列表（含未上架、已下线）', security, response: { 200: okEnvelope(operatorModelList) } } },
    async (req) => ok(await admin.listModels(tenantOf(req))),
  );
  app.post(
    '/api/v1/operate/llm/model',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '新建模型（价格为每百万 token 的金额单位）', security, body: modelBody, response: { 200: okEnvelope(operatorModelItem) } } },
    async (req) => ok(await admin.createModel(tenantOf(req), req.body)),
  );
  app.put(
    '/api/v1/operate/llm/model/:id',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '修改模型（价格、上架/下架、上游…）', security, params: idParams, body: modelPatch, response: { 200: okEnvelope(operatorModelItem) } } },
    async (req) => ok(await admin.updateModel(tenantOf(req), req.params.id, req.body)),
  );
  app.delete(
    '/api/v1/operate/llm/model/:id',
    { onRequest: app.requireOperator, schema: { tags: opTags, summary: '下线模型（模型 ID 可再用于新模型）', security, params: idParams, response: { 200: okEnvelope(z.null()) } } },
    async (req) => {
      await admin.retireModel(tenantOf(req), req.params.id);
      return ok(null);
    },
  );
}
