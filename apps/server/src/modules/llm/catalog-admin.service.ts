import path from 'node:path';
import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type { modelBody, modelPatch, OperatorModelItem, upstreamBody, UpstreamHealth, UpstreamItem, upstreamPatch, UpstreamKind } from '@suanli/contract/llm';
import type { Db, DbOrTx } from '../../db/client.ts';
import { llmModels, llmUpstreams } from '../../db/schema/llm.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound } from '../../lib/errors.ts';
import type { SecretVault } from '../../lib/sealed-secrets.ts';
import type { UpstreamConfig, UpstreamRegistry } from '../../adapters/llm/port.ts';
import { isUniqueViolation } from '../user/user.repository.ts';
import { presentModel, upstreamKeyContext } from './catalog.service.ts';

type UpstreamRow = typeof llmUpstreams.$inferSelect;
type ModelRow = typeof llmModels.$inferSelect;
type UpstreamInput = z.infer<typeof upstreamBody>;
type UpstreamPatchInput = z.infer<typeof upstreamPatch>;
type ModelInput = z.infer<typeof modelBody>;
type ModelPatchInput = z.infer<typeof modelPatch>;

export const CatalogMessages = {
  upstreamMissing: '上游不存在',
  modelMissing: '模型不存在',
  upstreamRetired: '该上游已停用，不能修改或测试',
  modelRetired: '该模型已下线，不能修改',
  baseUrlNeeded: 'openai 类型的上游需要填写上游地址（baseUrl）',
  embeddedNoBaseUrl: 'embedded 类型的上游不接受上游地址（baseUrl）',
  embeddedNoKey: 'embedded 类型的上游不接受上游密钥（apiKey）',
  openaiNoModelPath: 'openai 类型的上游不接受模型文件路径（modelPath）',
  badModelPath: '模型文件路径应为服务器上以 .gguf 结尾的绝对路径',
  badApiKey: '上游密钥只能包含可见的 ASCII 字符（不含空格）',
  modelIdTaken: (modelId: string) => `模型 ID ${modelId} 已被使用`,
  upstreamOfModelRetired: (name: string) => `上游「${name}」已停用，不能用于模型`,
  upstreamInUse: (models: string[]) => `该上游仍有已上架的模型：${models.join('、')}，请先下架或改用其他上游`,
  healthUnavailable: '上游适配器不可用',
} as const;

const iso = (d: Date) => d.toISOString();

export function presentUpstream(u: UpstreamRow): UpstreamItem {
  return {
    id: u.id,
    name: u.name,
    kind: u.kind,
    baseUrl: u.baseUrl,
    hasKey: u.apiKeySealed !== null,
    modelPath: u.modelPath,
    timeoutMs: u.timeoutMs,
    maxConcurrency: u.maxConcurrency,
    retired: u.retiredAt !== null,
    createdAt: iso(u.createdAt),
    updatedAt: iso(u.updatedAt),
  };
}

export function presentOperatorModel(m: ModelRow): OperatorModelItem {
  return {
    ...presentModel(m),
    dbId: m.id,
    published: m.published,
    upstreamId: m.upstreamId,
    upstreamModel: m.upstreamModel,
    sort: m.sort,
    retired: m.retiredAt !== null,
    createdAt: iso(m.createdAt),
    updatedAt: iso(m.updatedAt),
  };
}

/** An embedded model file: an absolute path to a .gguf, no `..` (a tenant's operator names files of this server). */
function checkModelPath(p: string): void {
  if (!path.isAbsolute(p) || !p.toLowerCase().endsWith('.gguf') || p.split(/[\\/]/).includes('..') || [...p].some((c) => c.charCodeAt(0) < 0x20)) throw badRequest(CatalogMessages.badModelPath);
}

/** The kind's rules over the upstream as it will be stored (a patch merged onto the row). */
function checkKind(kind: UpstreamKind, v: { baseUrl: string; apiKey: string | null; modelPath: string }): void {
  // Sent in an HTTP header by the openai adapter: nothing that could break or split it.
  if (v.apiKey && !/^[\x21-\x7e]+$/.test(v.apiKey)) throw badRequest(CatalogMessages.badApiKey);
  if (kind === 'openai') {
    if (!v.baseUrl) throw badRequest(CatalogMessages.baseUrlNeeded);
    if (v.modelPath) throw badRequest(CatalogMessages.openaiNoModelPath);
  } else {
    if (v.baseUrl) throw badRequest(CatalogMessages.embeddedNoBaseUrl);
    if (v.apiKey) throw badRequest(CatalogMessages.embeddedNoKey);
    if (v.modelPath) checkModelPath(v.modelPath);
  }
}

/** Removes the upstream's API key from a message meant for the operator's screen. */
function redact(message: string, secret: string | null): string {
  const text = secret && secret.length >= 4 ? message.split(secret).join('***') : message;
  return text.slice(0, 500);
}

/**
 * The operator's side of the model catalog (issue #9, docs/llm.md "Catalog and API keys"):
 * upstreams and models of the operator's own tenant, retired rather than deleted (usage rows keep
 * naming them). Upstream API keys are sealed with the vault, bound to the tenant; only `hasKey` is
 * ever shown. Every write drops the tenant's cached catalog, and an upstream's built adapter.
 */
export function createLlmCatalogAdmin(deps: { db: Db; clock: Clock; vault: SecretVault; catalog: { changed(tenantId?: number): void }; registry: UpstreamRegistry }) {
  const { db, clock, vault, catalog, registry } = deps;

  async function upstreamOf(q: DbOrTx, tenantId: number, id: number): Promise<UpstreamRow> {
    const [row] = await q
      .select()
      .from(llmUpstreams)
      .where(and(eq(llmUpstreams.tenantId, tenantId), eq(llmUpstreams.id, id)))
      .limit(1);
    if (!row) throw notFound(CatalogMessages.upstreamMissing);
    return row;
  }

  async function modelOf(q: DbOrTx, tenantId: number, id: number): Promise<ModelRow> {
    const [row] = await q
      .select()
      .from(llmModels)
      .where(and(eq(llmModels.tenantId, tenantId), eq(llmModels.id, id)))
      .limit(1);
    if (!row) throw notFound(CatalogMessages.modelMissing);
    return row;
  }

  /** The upstream a model is to use: the tenant's (else 404) and not retired (else 400). */
  async function usableUpstream(q: DbOrTx, tenantId: number, id: number): Promise<UpstreamRow> {
    const row = await upstreamOf(q, tenantId, id);
    if (row.retiredAt) throw badRequest(CatalogMessages.upstreamOfModelRetired(row.name));
    return row;
  }

  /** Serialises the catalog writes of one tenant (model id uniqueness is checked, then kept by the index). */
  const lockTenant = (tx: DbOrTx, tenantId: number) => tx.execute(sql`select pg_advisory_xact_lock(hashtext('llm_catalog:tenant'), ${tenantId}::int)`);

  async function modelIdFree(q: DbOrTx, tenantId: number, modelId: string, exceptId?: number): Promise<void> {
    const rows = await q
      .select({ id: llmModels.id })
      .from(llmModels)
      .where(and(eq(llmModels.tenantId, tenantId), eq(llmModels.modelId, modelId), isNull(llmModels.retiredAt)));
    if (rows.some((r) => r.id !== exceptId)) throw conflict(CatalogMessages.modelIdTaken(modelId));
  }

  /** A write that may hit the unique model id (another replica, same instant): 409 naming it. */
  async function guardUnique<T>(modelId: string | undefined, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (modelId !== undefined && isUniqueViolation(err)) throw conflict(CatalogMessages.modelIdTaken(modelId));
      throw err;
    }
  }

  async function configOf(u: UpstreamRow): Promise<UpstreamConfig> {
    return {
      id: u.id,
      kind: u.kind,
      baseUrl: u.baseUrl,
      apiKey: u.apiKeySealed ? await vault.open(upstreamKeyContext(u.tenantId), u.apiKeySealed) : null,
      modelPath: u.modelPath,
      timeoutMs: u.timeoutMs,
      maxConcurrency: u.maxConcurrency,
      version: u.updatedAt.toISOString(),
    };
  }

  async function upstreamChanged(tenantId: number, id: number): Promise<void> {
    catalog.changed(tenantId);
    await registry.forget(id);
  }

  return {
    async listUpstreams(tenantId: number): Promise<{ list: UpstreamItem[]; total: number }> {
      const rows = await db.select().from(llmUpstreams).where(eq(llmUpstreams.tenantId, tenantId)).orderBy(asc(llmUpstreams.id));
      return { list: rows.map(presentUpstream), total: rows.length };
    },

    async createUpstream(tenantId: number, input: UpstreamInput): Promise<UpstreamItem> {
      const baseUrl = input.baseUrl ?? '';
      const apiKey = input.apiKey ? input.apiKey : null;
      const modelPath = input.modelPath?.trim() ?? '';
      checkKind(input.kind, { baseUrl, apiKey, modelPath });
      const now = clock();
      const [row] = await db
        .insert(llmUpstreams)
        .values({
          tenantId,
          name: input.name,
          kind: input.kind,
          baseUrl,
          apiKeySealed: apiKey ? await vault.seal(upstreamKeyContext(tenantId), apiKey) : null,
          modelPath,
          ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
          ...(input.maxConcurrency !== undefined ? { maxConcurrency: input.maxConcurrency } : {}),
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      if (!row) throw new Error('llm upstream insert returned nothing');
      catalog.changed(tenantId);
      return presentUpstream(row);
    },

    /** `apiKey: ''` clears the key; switching to `embedded` drops the base URL and key. */
    async updateUpstream(tenantId: number, id: number, patch: UpstreamPatchInput): Promise<UpstreamItem> {
      const row = await db.transaction(async (tx) => {
        await lockTenant(tx, tenantId);
        const cur = await upstreamOf(tx, tenantId, id);
        if (cur.retiredAt) throw conflict(CatalogMessages.upstreamRetired);
        const kind = patch.kind ?? cur.kind;
        const toEmbedded = kind === 'embedded' && cur.kind !== 'embedded';
        const baseUrl = patch.baseUrl ?? (toEmbedded ? '' : cur.baseUrl);
        const modelPath = patch.modelPath !== undefined ? patch.modelPath.trim() : kind === 'openai' && cur.kind !== 'openai' ? '' : cur.modelPath;
        // The new key, if one is given ('' clears it); otherwise whether the stored one stays.
        const newKey = patch.apiKey === undefined ? undefined : patch.apiKey || null;
        checkKind(kind, { baseUrl, apiKey: newKey ?? null, modelPath });
        let apiKeySealed = cur.apiKeySealed;
        if (newKey !== undefined) apiKeySealed = newKey ? await vault.seal(upstreamKeyContext(tenantId), newKey) : null;
        else if (kind === 'embedded') apiKeySealed = null;
        const [updated] = await tx
          .update(llmUpstreams)
          .set({
            ...(patch.name !== undefined ? { name: patch.name } : {}),
            kind,
            baseUrl,
            apiKeySealed,
            modelPath,
            ...(patch.timeoutMs !== undefined ? { timeoutMs: patch.timeoutMs } : {}),
            ...(patch.maxConcurrency !== undefined ? { maxConcurrency: patch.maxConcurrency } : {}),
            updatedAt: clock(),
          })
          .where(eq(llmUpstreams.id, cur.id))
          .returning();
        if (!updated) throw notFound(CatalogMessages.upstreamMissing);
        return updated;
      });
      await upstreamChanged(tenantId, id);
      return presentUpstream(row);
    },

    /** Retires the upstream; refused (409, naming them) while published models still use it. */
    async retireUpstream(tenantId: number, id: number): Promise<void> {
      await db.transaction(async (tx) => {
        await lockTenant(tx, tenantId);
        const cur = await upstreamOf(tx, tenantId, id);
        if (cur.retiredAt) return;
        const users = await tx
          .select({ modelId: llmModels.modelId })
          .from(llmModels)
          .where(and(eq(llmModels.tenantId, tenantId), eq(llmModels.upstreamId, id), eq(llmModels.published, true), isNull(llmModels.retiredAt)))
          .orderBy(asc(llmModels.sort), asc(llmModels.id));
        if (users.length) throw conflict(CatalogMessages.upstreamInUse(users.map((u) => u.modelId)));
        const now = clock();
        await tx.update(llmUpstreams).set({ retiredAt: now, updatedAt: now }).where(eq(llmUpstreams.id, id));
      });
      await upstreamChanged(tenantId, id);
    },

    /** Asks the upstream (through its adapter) whether it answers; a failure is an answer too, never the key. */
    async testUpstream(tenantId: number, id: number): Promise<UpstreamHealth> {
      const row = await upstreamOf(db, tenantId, id);
      if (row.retiredAt) throw conflict(CatalogMessages.upstreamRetired);
      const config = await configOf(row);
      const started = Date.now();
      try {
        const h = await registry.get(config).health();
        return { ok: h.ok, latencyMs: Math.max(0, Math.round(h.latencyMs)), models: h.models.slice(0, 1000), error: h.error === null ? null : redact(h.error, config.apiKey) };
      } catch (err) {
        const message = err instanceof Error && err.message ? err.message : CatalogMessages.healthUnavailable;
        return { ok: false, latencyMs: Date.now() - started, models: [], error: redact(message, config.apiKey) };
      }
    },

    async listModels(tenantId: number): Promise<{ list: OperatorModelItem[]; total: number }> {
      const rows = await db.select().from(llmModels).where(eq(llmModels.tenantId, tenantId)).orderBy(asc(llmModels.sort), asc(llmModels.id));
      return { list: rows.map(presentOperatorModel), total: rows.length };
    },

    async createModel(tenantId: number, input: ModelInput): Promise<OperatorModelItem> {
      const row = await guardUnique(input.modelId, () =>
        db.transaction(async (tx) => {
          await lockTenant(tx, tenantId);
          await usableUpstream(tx, tenantId, input.upstreamId);
          await modelIdFree(tx, tenantId, input.modelId);
          const now = clock();
          const [inserted] = await tx
            .insert(llmModels)
            .values({
              tenantId,
              modelId: input.modelId,
              name: input.name,
              provider: input.provider,
              description: input.description ?? '',
              tags: [...new Set(input.tags ?? [])],
              contextLength: input.contextLength,
              inputPrice: input.inputPrice,
              outputPrice: input.outputPrice,
              published: input.published ?? false,
              upstreamId: input.upstreamId,
              upstreamModel: input.upstreamModel,
              sort: input.sort ?? 0,
              createdAt: now,
              updatedAt: now,
            })
            .returning();
          if (!inserted) throw new Error('llm model insert returned nothing');
          return inserted;
        }),
      );
      catalog.changed(tenantId);
      return presentOperatorModel(row);
    },

    async updateModel(tenantId: number, id: number, patch: ModelPatchInput): Promise<OperatorModelItem> {
      const row = await guardUnique(patch.modelId, () =>
        db.transaction(async (tx) => {
          await lockTenant(tx, tenantId);
          const cur = await modelOf(tx, tenantId, id);
          if (cur.retiredAt) throw conflict(CatalogMessages.modelRetired);
          // A new upstream must be live; so must the upstream of a model that is (or stays) published.
          const upstreamId = patch.upstreamId ?? cur.upstreamId;
          if (upstreamId !== cur.upstreamId || (patch.published ?? cur.published)) await usableUpstream(tx, tenantId, upstreamId);
          if (patch.modelId !== undefined && patch.modelId !== cur.modelId) await modelIdFree(tx, tenantId, patch.modelId, cur.id);
          const [updated] = await tx
            .update(llmModels)
            .set({
              ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)),
              ...(patch.tags !== undefined ? { tags: [...new Set(patch.tags)] } : {}),
              updatedAt: clock(),
            })
            .where(eq(llmModels.id, cur.id))
            .returning();
          if (!updated) throw notFound(CatalogMessages.modelMissing);
          return updated;
        }),
      );
      catalog.changed(tenantId);
      return presentOperatorModel(row);
    },

    /** Retires the model: it leaves the square and the gateway at once; its id may be reused. */
    async retireModel(tenantId: number, id: number): Promise<void> {
      const cur = await modelOf(db, tenantId, id);
      if (!cur.retiredAt) {
        const now = clock();
        await db.update(llmModels).set({ retiredAt: now, published: false, updatedAt: now }).where(eq(llmModels.id, cur.id));
      }
      catalog.changed(tenantId);
    },
  };
}
export type LlmCatalogAdmin = ReturnType<typeof createLlmCatalogAdmin>;

