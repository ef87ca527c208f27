import { and, asc, eq, isNull } from 'drizzle-orm';
import type { ModelItem } from '@suanli/contract/llm';
import type { Db } from '../../db/client.ts';
import { llmModels, llmUpstreams } from '../../db/schema/llm.ts';
import type { SecretVault } from '../../lib/sealed-secrets.ts';
import type { UpstreamConfig } from '../../adapters/llm/port.ts';
import type { LlmCatalog, ResolvedModel } from './types.ts';

/** A model as the square and every client see it (the catalog's and the operator's rows alike). */
export function presentModel(m: { modelId: string; name: string; provider: string; description: string; tags: string[]; contextLength: number; inputPrice: number; outputPrice: number }): ModelItem {
  return { id: m.modelId, name: m.name, provider: m.provider, description: m.description, tags: m.tags, contextLength: m.contextLength, inputPrice: m.inputPrice, outputPrice: m.outputPrice };
}

/** server_keys row of the key that seals upstream API keys. */
export const UPSTREAM_KEY_NAME = 'llm-upstream-key';
/** A sealed upstream key is bound to its tenant (lib/sealed-secrets.ts context). */
export const upstreamKeyContext = (tenantId: number) => `llm-upstream:${tenantId}`;

/** How long a tenant's published models are reused without asking the database (other replicas' changes show within this). */
export const CATALOG_TTL_MS = 5_000;

/**
 * The read side of the model catalog, cached per tenant: the gateway resolves a model per call
 * without a query. Every write to upstreams or models (catalog-admin.service.ts) calls `changed()`.
 */
export function createLlmCatalog(deps: { db: Db; vault: SecretVault; now?: () => number }): LlmCatalog & { changed(tenantId?: number): void } {
  const now = deps.now ?? Date.now;
  const cache = new Map<number, { at: number; list: Promise<ResolvedModel[]>; byId: Promise<Map<string, ResolvedModel>> }>();

  async function load(tenantId: number): Promise<ResolvedModel[]> {
    const rows = await deps.db
      .select({ m: llmModels, u: llmUpstreams })
      .from(llmModels)
      .innerJoin(llmUpstreams, eq(llmUpstreams.id, llmModels.upstreamId))
      .where(and(eq(llmModels.tenantId, tenantId), eq(llmModels.published, true), isNull(llmModels.retiredAt), isNull(llmUpstreams.retiredAt)))
      .orderBy(asc(llmModels.sort), asc(llmModels.id));
    const keys = new Map<number, string | null>();
    for (const { u } of rows) {
      if (!keys.has(u.id)) keys.set(u.id, u.apiKeySealed ? await deps.vault.open(upstreamKeyContext(u.tenantId), u.apiKeySealed) : null);
    }
    return rows.map(({ m, u }) => {
      const upstream: UpstreamConfig = {
        id: u.id,
        kind: u.kind,
        baseUrl: u.baseUrl,
        apiKey: keys.get(u.id) ?? null,
        modelPath: u.modelPath,
        timeoutMs: u.timeoutMs,
        maxConcurrency: u.maxConcurrency,
        version: u.updatedAt.toISOString(),
      };
      return {
        dbId: m.id,
        tenantId: m.tenantId,
        modelId: m.modelId,
        name: m.name,
        provider: m.provider,
        description: m.description,
        tags: m.tags,
        contextLength: m.contextLength,
        inputPrice: m.inputPrice,
        outputPrice: m.outputPrice,
        upstreamModel: m.upstreamModel,
        upstream,
        createdAt: m.createdAt,
      };
    });
  }

  function entry(tenantId: number) {
    const hit = cache.get(tenantId);
    if (hit && now() - hit.at < CATALOG_TTL_MS) return hit;
    const list = load(tenantId);
    const fresh = { at: now(), list, byId: list.then((l) => new Map(l.map((m) => [m.modelId, m]))) };
    // A failed load is not kept: the next call asks again.
    list.catch(() => {
      if (cache.get(tenantId) === fresh) cache.delete(tenantId);
    });
    cache.set(tenantId, fresh);
    return fresh;
  }

  return {
    async resolveModel(tenantId, modelId) {
      return (await entry(tenantId).byId).get(modelId);
    },
    async publishedModels(tenantId) {
      return entry(tenantId).list;
    },
    changed(tenantId) {
      if (tenantId === undefined) cache.clear();
      else cache.delete(tenantId);
    },
  };
}
export type LlmCatalogService = ReturnType<typeof createLlmCatalog>;
