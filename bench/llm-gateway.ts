/**
 * Issue #9 (gateway): what the /v1 gateway adds to an upstream's latency, and its throughput.
 *
 * - Overhead: a non-streamed 1-token completion through POST /v1/chat/completions (HTTP over
 *   loopback, key auth, catalog, hold, settle, usage row) against the same call made directly on
 *   the fake upstream (test/fakes/llm-upstream.ts, no delay), sequentially; p50/p99 of the difference
 *   (aim ≤ 1 ms and ≤ 5 ms).
 * - Throughput: 64 concurrent streamed completions of 20 tokens each, for BENCH_SECONDS.
 *
 * In one process (client and server share the event loop, so the throughput is a lower bound).
 * PGlite in memory, or PostgreSQL with BENCH_DATABASE_URL (a fresh database is created and dropped).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { loadConfig } from '../apps/server/src/config.ts';
import { createContainer } from '../apps/server/src/container.ts';
import { buildApp } from '../apps/server/src/app.ts';
import { seedDemo } from '../apps/server/src/db/seed.ts';
import { openPglite, openPostgres, type Database } from '../apps/server/src/db/client.ts';
import { users } from '../apps/server/src/db/schema/user.ts';
import { wallets } from '../apps/server/src/db/schema/wallet.ts';
import { apiKeys, llmModels, llmUpstreams } from '../apps/server/src/db/schema/llm.ts';
import { apiKeyHint, apiKeySecretHash, newApiKeySecret } from '../apps/server/src/modules/llm/api-key-secret.ts';
import { startFakeOpenAi } from '../apps/server/test/fakes/openai-server.ts';

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
};

export async function benchLlmGateway(seconds: number): Promise<string[]> {
  const pgUrl = process.env.BENCH_DATABASE_URL;
  let database: Database;
  let dropDb = async () => {};
  if (pgUrl) {
    const name = `suanli_bench_llm_${crypto.randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(pgUrl);
    url.pathname = `/${name}`;
    database = await openPostgres(url.toString(), { max: 64 });
    dropDb = async () => {
      const a = new pg.Client({ connectionString: pgUrl });
      await a.connect();
      await a.query(`drop database if exists ${name} with (force)`);
      await a.end();
    };
  } else {
    database = await openPglite();
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-bench-llm-'));
  // The upstream is a real HTTP server speaking OpenAI's API (test/fakes/openai-server.ts, no delay):
  // the gateway reaches it through the real `openai` adapter, and "direct" is the same call made to it.
  const fake = await startFakeOpenAi({ tokens: ['Hi'] });
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', CAPTCHA: 'off', RATE_LIMIT: 'off', LLM_EMBEDDED: 'off' });
  const container = await createContainer(config, { database });
  const lines: string[] = [];
  try {
    await seedDemo(container.db, () => {});
    // fetch sends Host 127.0.0.1:<port>: that host's tenant.
    const tenantId = (await container.tenants.resolve('127.0.0.1')).id;
    const [user] = await container.db.insert(users).values({ tenantId, phone: '13700009999', userName: 'bench', passwordHash: 'x' }).returning({ id: users.id });
    if (!user) throw new Error('no user');
    await container.db.insert(wallets).values({ userId: user.id, tenantId });
    await container.ledger.post({ tenantId, userId: user.id, kind: 'adjustment', amount: 2_000_000_000, ref: 'bench:fund' });
    const [up] = await container.db.insert(llmUpstreams).values({ tenantId, name: 'fake', kind: 'openai', baseUrl: fake.url, maxConcurrency: 256 }).returning({ id: llmUpstreams.id });
    if (!up) throw new Error('no upstream');
    await container.db.insert(llmModels).values({ tenantId, modelId: 'bench', name: 'bench', provider: 'bench', contextLength: 4096, inputPrice: 1_000_000, outputPrice: 2_000_000, published: true, upstreamId: up.id, upstreamModel: 'bench' });
    container.llmCatalog.changed(tenantId);
    const secret = newApiKeySecret();
    await container.db.insert(apiKeys).values({ tenantId, userId: user.id, name: 'bench', secretHash: apiKeySecretHash(secret) ?? '', secretHint: apiKeyHint(secret) });
    const app = await buildApp(container);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    const url = `http://127.0.0.1:${port}/v1/chat/completions`;
    const model = await container.llmCatalog.resolveModel(tenantId, 'bench');
    if (!model) throw new Error('model did not resolve');
    const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
    const messages = [{ role: 'user' as const, content: 'hello' }];
    const direct = async () => {
      const res = await fetch(`${fake.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'bench', messages, max_tokens: 1, stream: false }) });
      if (res.status !== 200) throw new Error(`fake upstream answered ${res.status}`);
      await res.text();
    };
    const viaGateway = async (stream: boolean, maxTokens: number) => {
      const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ model: 'bench', messages, max_tokens: maxTokens, stream }) });
      if (res.status !== 200) throw new Error(`gateway answered ${res.status}: ${await res.text()}`);
      await res.text();
    };

    for (let i = 0; i < 200; i++) {
      await direct();
      await viaGateway(false, 1); // warm-up
    }
    const N = 1_000;
    const gw: number[] = [];
    const dr: number[] = [];
    for (let i = 0; i < N; i++) {
      let t = performance.now();
      await direct();
      dr.push(performance.now() - t);
      t = performance.now();
      await viaGateway(false, 1);
      gw.push(performance.now() - t);
    }
    // The part without a database round trip: GET /v1/models (key auth and catalog from their caches).
    const listing: number[] = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      const res = await fetch(`http://127.0.0.1:${port}/v1/models`, { headers: { authorization: headers.authorization } });
      await res.text();
      listing.push(performance.now() - t);
    }
    const over = gw.map((g, i) => g - (dr[i] ?? 0));
    lines.push(
      `[bench] llm gateway overhead (${database.engine}, ${N} sequential non-streamed 1-token calls over loopback HTTP, through the gateway minus straight to the fake OpenAI server): ` +
        `p50 ${quantile(over, 0.5).toFixed(2)} ms, p99 ${quantile(over, 0.99).toFixed(2)} ms (aim ≤ 1 ms / ≤ 5 ms); the upstream alone p50 ${quantile(dr, 0.5).toFixed(2)} ms, through the gateway p50 ${quantile(gw, 0.5).toFixed(2)} ms; ` +
        `GET /v1/models (no database round trip) p50 ${quantile(listing, 0.5).toFixed(2)} ms, p99 ${quantile(listing, 0.99).toFixed(2)} ms`,
    );

    // What stands in the way: the billing's own round trips, measured alone (same user, sequential).
    const caller = { tenantId, userId: user.id, keyId: null, quota: null, limits: [], source: 'api' as const };
    const holdMs: number[] = [];
    const settleMs: number[] = [];
    for (let i = 0; i < 300; i++) {
      let t = performance.now();
      const h = await container.llmBilling.hold({ caller, model, promptTokens: 10, maxCompletionTokens: 1, exact: true });
      holdMs.push(performance.now() - t);
      t = performance.now();
      await container.llmBilling.settle(h, caller, model, { promptTokens: 10, completionTokens: 1, status: 200, errorCode: '', latencyMs: 1, ttftMs: 1, stream: false });
      settleMs.push(performance.now() - t);
    }
    lines.push(
      `[bench] llm billing alone (${database.engine}): hold p50 ${quantile(holdMs, 0.5).toFixed(2)} ms (answered after it), settle p50 ${quantile(settleMs, 0.5).toFixed(2)} ms (after the answer; the next hold of the same user waits for its row lock)`,
    );

    fake.setScript({ tokens: Array.from({ length: 20 }, (_, i) => ` t${i}`) });
    const deadline = Date.now() + seconds * 1000;
    let streams = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (Date.now() < deadline) {
          await viaGateway(true, 20);
          streams++;
        }
      }),
    );
    const secs = (performance.now() - started) / 1000;
    lines.push(`[bench] llm gateway throughput (${database.engine}), 64 concurrent streams of 20 tokens: ${(streams / secs).toFixed(0)} streams/s, ${((streams * 20) / secs).toFixed(0)} tokens/s`);
    await app.close();
  } finally {
    await container.close();
    await fake.close();
    await dropDb();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return lines;
}
