import { eq, sql } from 'drizzle-orm';
import type { LimitRule } from '@suanli/contract/llm';
import { apiKeys, llmHolds, llmUsage } from '../../src/db/schema/llm.ts';
import { ledgerEntries, wallets } from '../../src/db/schema/wallet.ts';
import type { Clock } from '../../src/lib/clock.ts';
import type { CompletionCaller, ResolvedModel } from '../../src/modules/llm/types.ts';
import { createFakeUpstreams, type FakeScript, type FakeUpstreams } from '../fakes/llm-upstream.ts';
import { buildTestApp, type TestApp } from './app.ts';
import type { Engine } from './db.ts';
import { createUser } from './factories.ts';
import { addApiKey, addModel, addUpstream } from './llm.ts';

/** The gateway tests' world: an app on the fake upstream, and helpers to make users, models and keys. */
export async function buildGatewayApp(opts: { engine?: Engine; clock?: Clock; script?: FakeScript } = {}) {
  const fake: FakeUpstreams = createFakeUpstreams(opts.script);
  const t: TestApp = await buildTestApp({ engine: opts.engine, clock: opts.clock, overrides: { llmUpstreams: fake.registry } });
  const tenantId = (await t.container.tenants.resolve('localhost')).id;
  const upstreamId = await addUpstream(t, { tenantId });

  async function fundedUser(balance: number, host = 'localhost') {
    const u = await createUser(t, { host });
    if (balance > 0) await t.container.ledger.post({ tenantId: u.user.tenantId, userId: u.user.id, kind: 'adjustment', amount: balance, ref: `test:fund:${u.user.id}` });
    return u;
  }

  async function model(v: { inputPrice?: number; outputPrice?: number; contextLength?: number; published?: boolean; modelId?: string } = {}): Promise<ResolvedModel> {
    const m = await addModel(t, { tenantId, upstreamId, ...v });
    const resolved = await t.container.llmCatalog.resolveModel(tenantId, m.modelId);
    if (!resolved && v.published !== false) throw new Error('test: model did not resolve');
    return resolved ?? ({ modelId: m.modelId } as ResolvedModel);
  }

  async function key(userId: number, v: { models?: string[] | null; quota?: number | null; ipAllow?: string[]; limits?: LimitRule[]; enabled?: boolean; expiresAt?: Date | null; tenantId?: number } = {}) {
    return addApiKey(t, { tenantId: v.tenantId ?? tenantId, userId, ...v });
  }

  const caller = (userId: number, k?: { id: string; quota?: number | null; limits?: LimitRule[] }): CompletionCaller => ({
    tenantId,
    userId,
    keyId: k?.id ?? null,
    quota: k?.quota ?? null,
    limits: k?.limits ?? [],
    source: k ? 'api' : 'chat',
  });

  const db = t.container.db;
  /** The gateway answers before it settles (onFinish): reads of money wait for the settlements first. */
  const settled = () => t.container.llmCompletions.drain?.() ?? Promise.resolve();
  return {
    t,
    fake,
    tenantId,
    upstreamId,
    fundedUser,
    model,
    key,
    caller,
    async wallet(userId: number) {
      await settled();
      const [w] = await db.select({ balance: wallets.balance, held: wallets.held }).from(wallets).where(eq(wallets.userId, userId));
      if (!w) throw new Error('test: no wallet');
      return w;
    },
    async keyRow(keyId: string) {
      await settled();
      const [k] = await db.select().from(apiKeys).where(eq(apiKeys.id, keyId));
      if (!k) throw new Error('test: no key');
      return k;
    },
    async usage(userId: number) {
      await settled();
      return await db.select().from(llmUsage).where(eq(llmUsage.userId, userId)).orderBy(llmUsage.id);
    },
    async holds(userId: number) {
      await settled();
      return await db.select().from(llmHolds).where(eq(llmHolds.userId, userId));
    },
    /** Sum of the user's llm_usage ledger entries (negative). */
    async charged(userId: number) {
      await settled();
      const [r] = await db
        .select({ s: sql<string>`coalesce(sum(${ledgerEntries.amount}), 0)` })
        .from(ledgerEntries)
        .where(sql`${ledgerEntries.userId} = ${userId} and ${ledgerEntries.kind} = 'llm_usage'`);
      return Number(r?.s ?? 0);
    },
  };
}
export type GatewayWorld = Awaited<ReturnType<typeof buildGatewayApp>>;

/** The SSE frames of a streamed answer: the parsed `data:` values, '[DONE]' as the string. */
export function sseFrames(body: string): unknown[] {
  return body
    .split('\n\n')
    .filter((f) => f.startsWith('data: '))
    .map((f) => {
      const data = f.slice('data: '.length);
      return data === '[DONE]' ? data : (JSON.parse(data) as unknown);
    });
}
