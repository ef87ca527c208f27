import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { llmCost } from '@suanli/contract/llm';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';
import { addApiKey, addModel, addUpstream } from '../helpers/llm.ts';
import { balanceOf, recharge } from '../helpers/metering.ts';
import { testModelPath } from '../helpers/llm-weights.ts';

const IN = 5_000;
const OUT = 10_000;

/**
 * The whole path on the real embedded model (SmolLM2-135M on this CPU, no fakes): the official
 * openai client → /v1 → hold → node-llama-cpp → settlement. The charge equals llmCost of the tokens
 * the runtime counted, and the ledger holds.
 */
describe('the gateway on the embedded model', () => {
  let t: TestApp;
  let baseURL: string;
  let modelId: string;
  beforeAll(async () => {
    t = await buildTestApp({ env: { LLM_MODEL_PATH: await testModelPath(), LLM_THREADS: '1' } });
    const tenant = await t.container.tenants.resolve('localhost');
    const upstreamId = await addUpstream(t, { tenantId: tenant.id, kind: 'embedded', baseUrl: '', maxConcurrency: 2, timeoutMs: 120_000 });
    modelId = (await addModel(t, { tenantId: tenant.id, upstreamId, modelId: 'smollm2-test', inputPrice: IN, outputPrice: OUT, contextLength: 8192 })).modelId;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('not listening');
    baseURL = `http://localhost:${address.port}/v1`;
  }, 180_000);
  afterAll(() => t?.close());

  it('answers a streamed and a non-streamed call, each charged exactly', async () => {
    const { user } = await createUser(t);
    await recharge(t, user, 100_000);
    const key = await addApiKey(t, { tenantId: user.tenantId, userId: user.id });
    const openai = new OpenAI({ apiKey: key.secret, baseURL, maxRetries: 0, timeout: 120_000 });

    const done = await openai.chat.completions.create({ model: modelId, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 8, temperature: 0 });
    expect(done.choices[0]?.message.content?.length).toBeGreaterThan(0);
    const u1 = done.usage;
    if (!u1) throw new Error('no usage');
    expect(u1.completion_tokens).toBeGreaterThan(0);
    expect(u1.completion_tokens).toBeLessThanOrEqual(8);
    await t.container.llmCompletions.drain?.();
    const afterFirst = 100_000 - llmCost(u1.prompt_tokens, u1.completion_tokens, IN, OUT);
    expect(await balanceOf(t.container.db, user.id)).toBe(afterFirst);

    const stream = await openai.chat.completions.create({ model: modelId, messages: [{ role: 'user', content: 'Count to five.' }], max_tokens: 12, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let deltas = 0;
    let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
    for await (const chunk of stream) {
      const d = chunk.choices[0]?.delta.content;
      if (d) {
        text += d;
        deltas++;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(deltas).toBeGreaterThan(1);
    if (!usage) throw new Error('no usage chunk');
    await t.container.llmCompletions.drain?.();
    expect(await balanceOf(t.container.db, user.id)).toBe(afterFirst - llmCost(usage.prompt_tokens, usage.completion_tokens, IN, OUT));
    expect(await t.container.ledger.check()).toEqual([]);
  }, 180_000);
});
