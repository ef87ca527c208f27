import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import OpenAI from 'openai';
import { llmCost } from '@suanli/contract/llm';
import type { ResolvedModel } from '../../src/modules/llm/types.ts';
import { fakeTokens } from '../fakes/llm-upstream.ts';
import { engines } from '../helpers/db.ts';
import { buildGatewayApp, type GatewayWorld } from '../helpers/llm-gateway.ts';

const IN = 1_234_567;
const OUT = 2_345_678;
const HELLO = [{ role: 'user' as const, content: 'hello' }];

/**
 * The official `openai` client (v6, unchanged) against the gateway listening on a real socket:
 * what any OpenAI client does works, and each call costs exactly llmCost(tokens).
 */
describe.each(engines)('the openai client against /v1 on %s', (engine) => {
  let w: GatewayWorld;
  let model: ResolvedModel;
  let baseURL: string;
  beforeAll(async () => {
    w = await buildGatewayApp({ engine, script: { tokens: fakeTokens(7) } });
    model = await w.model({ inputPrice: IN, outputPrice: OUT });
    await w.t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = w.t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('not listening');
    // Host localhost:<port>: the demo tenant.
    baseURL = `http://localhost:${address.port}/v1`;
  });
  afterAll(() => w.t.close());

  async function client(balance = 1_000_000) {
    const u = await w.fundedUser(balance);
    const key = await w.key(u.user.id);
    return { ...u, key, openai: new OpenAI({ apiKey: key.secret, baseURL, maxRetries: 0, timeout: 10_000 }) };
  }

  it('lists models', async () => {
    const { openai } = await client();
    const ids: string[] = [];
    for await (const m of openai.models.list()) ids.push(m.id);
    expect(ids).toContain(model.modelId);
    const one = await openai.models.retrieve(model.modelId);
    expect(one).toMatchObject({ id: model.modelId, object: 'model', owned_by: 'Test' });
  });

  it('completes without streaming and charges exactly the tokens', async () => {
    const { openai, user } = await client();
    const r = await openai.chat.completions.create({ model: model.modelId, messages: HELLO, max_tokens: 50, temperature: 0.2 });
    expect(r.object).toBe('chat.completion');
    expect(r.choices[0]?.message.content).toBe('t0 t1 t2 t3 t4 t5 t6 ');
    expect(r.choices[0]?.finish_reason).toBe('stop');
    expect(r.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 7, total_tokens: 16 });
    expect(await w.wallet(user.id)).toEqual({ balance: 1_000_000 - llmCost(9, 7, IN, OUT), held: 0 });
  });

  it('streams with include_usage and charges exactly the tokens', async () => {
    const { openai, user } = await client();
    const stream = await openai.chat.completions.create({ model: model.modelId, messages: HELLO, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      if (c.choices[0]?.finish_reason) finish = c.choices[0].finish_reason;
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe('t0 t1 t2 t3 t4 t5 t6 ');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 7 });
    expect(await w.wallet(user.id)).toEqual({ balance: 1_000_000 - llmCost(9, 7, IN, OUT), held: 0 });
  });

  it('an aborted stream is charged for the tokens delivered up to the abort, and the upstream is cancelled', async () => {
    const slow = await w.model({ inputPrice: IN, outputPrice: OUT });
    w.fake.setScript(slow.upstreamModel, { tokens: fakeTokens(500), delayMs: 2 });
    const { openai, user } = await client();
    const ac = new AbortController();
    const stream = await openai.chat.completions.create({ model: slow.modelId, messages: HELLO, stream: true }, { signal: ac.signal });
    let received = 0;
    // The v6 client ends the iteration quietly (or with an abort error) once its signal fires.
    try {
      for await (const c of stream) {
        if (c.choices[0]?.delta.content) received++;
        if (received === 3) ac.abort();
      }
    } catch (err) {
      expect(err).toBeInstanceOf(OpenAI.APIUserAbortError);
    }
    expect(received).toBe(3);
    const row = await vi.waitFor(
      async () => {
        const [r] = await w.usage(user.id);
        if (!r) throw new Error('not settled yet');
        return r;
      },
      { timeout: 5_000, interval: 20 },
    );
    expect(row.status).toBe(499);
    expect(row.completionTokens).toBeGreaterThanOrEqual(3);
    expect(row.completionTokens).toBeLessThan(500);
    expect(w.fake.calls.at(-1)).toMatchObject({ aborted: true, ended: false });
    expect(w.fake.calls.at(-1)?.delivered).toBe(row.completionTokens);
    expect(await w.wallet(user.id)).toEqual({ balance: 1_000_000 - llmCost(9, row.completionTokens, IN, OUT), held: 0 });
  });

  it('raises the client’s typed errors: 401, 404, 402, 400, and an error frame mid-stream', async () => {
    const bad = new OpenAI({ apiKey: `sk-${'Z'.repeat(48)}`, baseURL, maxRetries: 0 });
    await expect(bad.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const { openai } = await client();
    await expect(openai.chat.completions.create({ model: 'nope', messages: HELLO })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(openai.chat.completions.create({ model: model.modelId, messages: HELLO, max_tokens: 0 })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    const poor = await client(0);
    await expect(poor.openai.chat.completions.create({ model: model.modelId, messages: HELLO })).rejects.toMatchObject({ status: 402, code: 'insufficient_balance' });

    const broken = await w.model({ inputPrice: IN, outputPrice: OUT });
    w.fake.setScript(broken.upstreamModel, { tokens: fakeTokens(10), fault: { kind: 'close', after: 2 } });
    const stream = await openai.chat.completions.create({ model: broken.modelId, messages: HELLO, stream: true });
    let text = '';
    await expect(
      (async () => {
        for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
      })(),
    ).rejects.toBeInstanceOf(OpenAI.APIError);
    expect(text).toBe('t0 t1 ');
  });
});
