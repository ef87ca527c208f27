import type { LimitRule, UpstreamKind } from '@suanli/contract/llm';
import { apiKeys, llmModels, llmUpstreams } from '../../src/db/schema/llm.ts';
import { upstreamKeyContext } from '../../src/modules/llm/catalog.service.ts';
import { apiKeyHint, apiKeySecretHash, newApiKeySecret } from '../../src/modules/llm/api-key-secret.ts';
import type { TestApp } from './app.ts';

/**
 * Issue #9 factories: rows inserted directly (the operator calls have their own tests). The
 * container's `llmCatalog.changed()` is called so cached model lists see them.
 */
export async function addUpstream(
  t: TestApp,
  v: { tenantId: number; kind?: UpstreamKind; name?: string; baseUrl?: string; apiKey?: string; modelPath?: string; timeoutMs?: number; maxConcurrency?: number },
): Promise<number> {
  const sealed = v.apiKey ? await t.container.llmVault.seal(upstreamKeyContext(v.tenantId), v.apiKey) : null;
  const [row] = await t.container.db
    .insert(llmUpstreams)
    .values({
      tenantId: v.tenantId,
      name: v.name ?? 'test upstream',
      kind: v.kind ?? 'openai',
      baseUrl: v.baseUrl ?? 'http://127.0.0.1:9/v1',
      apiKeySealed: sealed,
      modelPath: v.modelPath ?? '',
      timeoutMs: v.timeoutMs ?? 10_000,
      maxConcurrency: v.maxConcurrency ?? 64,
    })
    .returning({ id: llmUpstreams.id });
  if (!row) throw new Error('factory: upstream insert failed');
  t.container.llmCatalog.changed(v.tenantId);
  return row.id;
}

export async function addModel(
  t: TestApp,
  v: { tenantId: number; upstreamId: number; modelId?: string; upstreamModel?: string; inputPrice?: number; outputPrice?: number; contextLength?: number; published?: boolean; tags?: string[]; provider?: string },
): Promise<{ dbId: number; modelId: string }> {
  const modelId = v.modelId ?? `test-model-${Math.random().toString(36).slice(2, 8)}`;
  const [row] = await t.container.db
    .insert(llmModels)
    .values({
      tenantId: v.tenantId,
      modelId,
      name: modelId,
      provider: v.provider ?? 'Test',
      tags: v.tags ?? [],
      contextLength: v.contextLength ?? 4096,
      inputPrice: v.inputPrice ?? 20_000,
      outputPrice: v.outputPrice ?? 60_000,
      published: v.published ?? true,
      upstreamId: v.upstreamId,
      upstreamModel: v.upstreamModel ?? modelId,
    })
    .returning({ id: llmModels.id });
  if (!row) throw new Error('factory: model insert failed');
  t.container.llmCatalog.changed(v.tenantId);
  return { dbId: row.id, modelId };
}

/** An API key row and its secret (as the create call would show it once). */
export async function addApiKey(
  t: TestApp,
  v: { tenantId: number; userId: number; name?: string; enabled?: boolean; expiresAt?: Date | null; models?: string[] | null; quota?: number | null; ipAllow?: string[]; limits?: LimitRule[] },
): Promise<{ id: string; secret: string }> {
  const secret = newApiKeySecret();
  const [row] = await t.container.db
    .insert(apiKeys)
    .values({
      tenantId: v.tenantId,
      userId: v.userId,
      name: v.name ?? 'test key',
      secretHash: apiKeySecretHash(secret) ?? '',
      secretHint: apiKeyHint(secret),
      enabled: v.enabled ?? true,
      expiresAt: v.expiresAt ?? null,
      models: v.models ?? null,
      quota: v.quota ?? null,
      ipAllow: v.ipAllow ?? [],
      limits: v.limits ?? [],
    })
    .returning({ id: apiKeys.id });
  if (!row) throw new Error('factory: api key insert failed');
  return { id: row.id, secret };
}
