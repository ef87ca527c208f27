import { asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { llmModels, llmUpstreams } from '../../db/schema/llm.ts';
import { tenants } from '../../db/schema/tenant.ts';

/** The model every tenant starts with: SmolLM2-135M-Instruct on the server's CPU (adapters/llm/embedded). */
export const EMBEDDED_SEED = {
  upstreamName: '内置 CPU 推理',
  modelId: 'smollm2-135m-instruct',
  name: 'SmolLM2 135M Instruct',
  provider: 'Hugging Face',
  description: '在本服务器 CPU 上运行的小型对话模型（1.35 亿参数），以英文为主，中文能力有限；无需 GPU，适合体验平台的对话、API 调用与计费流程。',
  tags: ['对话', '英文', 'CPU'],
  contextLength: 8192,
  /** Units (0.0001 yuan) per million tokens: ¥0.5 in, ¥1 out. */
  inputPrice: 5_000,
  outputPrice: 10_000,
} as const;

/**
 * Gives every tenant that has no upstream at all the embedded upstream and its model (published
 * when the embedded runtime and its weights are available). Idempotent: a tenant with any upstream
 * (even retired ones: the operator's choice) is left alone. Safe with several replicas starting at
 * once: each tenant is seeded under a transaction-scoped advisory lock, checked again inside it.
 * Returns the ids of the tenants seeded now.
 */
export async function ensureLlmSeeded(deps: { db: Db; log: { info: (obj: object, msg?: string) => void }; embedded: { available: boolean } }): Promise<number[]> {
  const { db, log, embedded } = deps;
  const seeded: number[] = [];
  const all = await db.select({ id: tenants.id, code: tenants.code }).from(tenants).orderBy(asc(tenants.id));
  for (const tenant of all) {
    const done = await db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext('llm_seed:tenant'), ${tenant.id}::int)`);
      const [any] = await tx.select({ id: llmUpstreams.id }).from(llmUpstreams).where(eq(llmUpstreams.tenantId, tenant.id)).limit(1);
      if (any) return false;
      const [upstream] = await tx
        .insert(llmUpstreams)
        .values({ tenantId: tenant.id, name: EMBEDDED_SEED.upstreamName, kind: 'embedded', baseUrl: '', apiKeySealed: null, modelPath: '' })
        .returning({ id: llmUpstreams.id });
      if (!upstream) throw new Error('llm seed: upstream insert returned nothing');
      await tx
        .insert(llmModels)
        .values({
          tenantId: tenant.id,
          modelId: EMBEDDED_SEED.modelId,
          name: EMBEDDED_SEED.name,
          provider: EMBEDDED_SEED.provider,
          description: EMBEDDED_SEED.description,
          tags: [...EMBEDDED_SEED.tags],
          contextLength: EMBEDDED_SEED.contextLength,
          inputPrice: EMBEDDED_SEED.inputPrice,
          outputPrice: EMBEDDED_SEED.outputPrice,
          published: embedded.available,
          upstreamId: upstream.id,
          upstreamModel: EMBEDDED_SEED.modelId,
          sort: 0,
        })
        // An operator may already use this id (on another upstream): theirs stays.
        .onConflictDoNothing();
      return true;
    });
    if (done) {
      seeded.push(tenant.id);
      log.info({ tenant: tenant.code, published: embedded.available }, `llm: seeded the embedded model ${EMBEDDED_SEED.modelId}`);
    }
  }
  return seeded;
}
