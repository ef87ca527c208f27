import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmCost } from '@suanli/contract/llm';
import { eq } from 'drizzle-orm';
import { apiKeys } from '../../src/db/schema/llm.ts';
import { LLM_SWEEP_TASK } from '../../src/modules/llm/billing.service.ts';
import { createApiKeyAuth, KEY_CACHE_TTL_MS, KEY_NEGATIVE_TTL_MS } from '../../src/modules/llm/key-auth.ts';
import { fakePromptTokens, fakeTokens } from '../fakes/llm-upstream.ts';
import { engines } from '../helpers/db.ts';
import { buildGatewayApp, sseFrames, type GatewayWorld } from '../helpers/llm-gateway.ts';

const IN = 1_234_567;
const OUT = 2_345_678;
const HELLO = [{ role: 'user', content: 'hello' }];

describe.each(engines)('llm gateway /v1 on %s', (engine) => {
  let w: GatewayWorld;
  let modelId: string;
  beforeAll(async () => {
    w = await buildGatewayApp({ engine, script: { tokens: fakeTokens(5) } });
    modelId = (await w.model({ inputPrice: IN, outputPrice: OUT, contextLength: 4096 })).modelId;
  });
  afterAll(() => w.t.close());

  const call = (secret: string | undefined, body: unknown, extra: { host?: string; remoteAddress?: string; headers?: Record<string, string>; raw?: string } = {}) =>
    w.t.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      remoteAddress: extra.remoteAddress,
      headers: { host: extra.host ?? 'localhost', 'content-type': 'application/json', ...(secret ? { authorization: `Bearer ${secret}` } : {}), ...extra.headers },
      payload: extra.raw ?? JSON.stringify(body),
    });
  const models = (secret: string | undefined, extra: { host?: string; remoteAddress?: string } = {}) =>
    w.t.app.inject({ method: 'GET', url: '/v1/models', remoteAddress: extra.remoteAddress, headers: { host: extra.host ?? 'localhost', ...(secret ? { authorization: `Bearer ${secret}` } : {}) } });
  const errorOf = (res: { json: () => unknown }) => (res.json() as { error: { message: string; type: string; param: string | null; code: string } }).error;

  async function userWithKey(balance = 1_000_000, keyOpts: Parameters<GatewayWorld['key']>[1] = {}) {
    const u = await w.fundedUser(balance);
    const k = await w.key(u.user.id, keyOpts);
    return { ...u, key: k };
  }

  it('answers a non-streamed completion in OpenAI’s shape and charges exactly tokens × price', async () => {
    const { user, key } = await userWithKey();
    const res = await call(key.secret, { model: modelId, messages: HELLO, some_future_field: { x: 1 } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    // 9 prompt tokens (3 + 4 + ceil(5/4)) and 5 completion tokens; 22.839493 units rounded up.
    expect(fakePromptTokens(HELLO as never)).toBe(9);
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: modelId,
      choices: [{ index: 0, message: { role: 'assistant', content: 't0 t1 t2 t3 t4 ' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 },
    });
    expect(body.id).toMatch(/^chatcmpl-/);
    expect(typeof body.created).toBe('number');
    expect(llmCost(9, 5, IN, OUT)).toBe(23);
    expect(await w.wallet(user.id)).toEqual({ balance: 1_000_000 - 23, held: 0 });
    expect(await w.charged(user.id)).toBe(-23);
    const [row] = await w.usage(user.id);
    expect(row).toMatchObject({ keyId: key.id, source: 'api', model: modelId, promptTokens: 9, completionTokens: 5, cost: 23, status: 200, errorCode: '', stream: false });
    expect(row?.ttftMs).not.toBeNull();
    const k = await w.keyRow(key.id);
    expect(k).toMatchObject({ used: 23, held: 0 });
    expect(k.lastUsedAt).not.toBeNull();
    expect(await w.holds(user.id)).toEqual([]);
    expect(await w.t.container.ledger.check()).toEqual([]);
  });

  it('streams chat.completion.chunk frames: role first, finish_reason last, the usage chunk, then [DONE]', async () => {
    const { user, key } = await userWithKey();
    const res = await call(key.secret, { model: modelId, messages: HELLO, stream: true, stream_options: { include_usage: true } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.body.endsWith('data: [DONE]\n\n')).toBe(true);
    const frames = sseFrames(res.body) as Record<string, unknown>[];
    expect(frames.at(-1)).toBe('[DONE]');
    const chunks = frames.slice(0, -1) as { id: string; object: string; choices: { delta: { role?: string; content?: string }; finish_reason: string | null }[]; usage?: unknown }[];
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0]?.id).toMatch(/^chatcmpl-/);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    const usageChunk = chunks.at(-1);
    expect(usageChunk).toMatchObject({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 } });
    const last = chunks.at(-2);
    expect(last?.choices[0]?.finish_reason).toBe('stop');
    expect(last?.usage).toBeNull();
    expect(chunks.slice(0, -2).every((c) => c.choices[0]?.finish_reason === null)).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('t0 t1 t2 t3 t4 ');
    expect((await w.wallet(user.id)).balance).toBe(1_000_000 - llmCost(9, 5, IN, OUT));
    expect((await w.usage(user.id))[0]).toMatchObject({ stream: true, status: 200, cost: 23 });
  });

  it('streams without a usage chunk unless include_usage is asked for', async () => {
    const { key } = await userWithKey();
    const res = await call(key.secret, { model: modelId, messages: HELLO, stream: true });
    const frames = sseFrames(res.body) as Record<string, unknown>[];
    expect(frames.at(-1)).toBe('[DONE]');
    expect(frames.slice(0, -1).every((f) => !('usage' in f) && Array.isArray(f.choices) && (f.choices as unknown[]).length === 1)).toBe(true);
  });

  it('lists the models the key may call in OpenAI’s list shape', async () => {
    const other = await w.model({});
    const hidden = await w.model({ published: false });
    const { key } = await userWithKey(0, { models: [modelId] });
    const { key: all } = await userWithKey(0);
    const res = await models(key.secret);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ object: 'list', data: [{ id: modelId, object: 'model', created: expect.any(Number), owned_by: 'Test' }] });
    const ids = (await models(all.secret)).json().data.map((m: { id: string }) => m.id);
    expect(ids).toEqual(expect.arrayContaining([modelId, other.modelId]));
    expect(ids).not.toContain(hidden.modelId);
    const one = await w.t.app.inject({ method: 'GET', url: `/v1/models/${modelId}`, headers: { host: 'localhost', authorization: `Bearer ${key.secret}` } });
    expect(one.json()).toMatchObject({ id: modelId, object: 'model' });
    const notAllowed = await w.t.app.inject({ method: 'GET', url: `/v1/models/${other.modelId}`, headers: { host: 'localhost', authorization: `Bearer ${key.secret}` } });
    expect(notAllowed.statusCode).toBe(404);
  });

  it('refuses missing, malformed, unknown, disabled, expired and foreign-tenant keys with 401', async () => {
    const { user } = await userWithKey(1000);
    const disabled = await w.key(user.id, { enabled: false });
    const expired = await w.key(user.id, { expiresAt: new Date(Date.now() - 1000) });
    const future = await w.key(user.id, { expiresAt: new Date(Date.now() + 3_600_000) });
    // A key of the tenant on 127.0.0.1, used on localhost (another tenant).
    const foreignTenant = await w.t.container.tenants.resolve('127.0.0.1');
    expect(foreignTenant.id).not.toBe(w.tenantId);
    const foreignUser = await w.fundedUser(1000, '127.0.0.1');
    const foreign = await w.key(foreignUser.user.id, { tenantId: foreignTenant.id });

    const cases: [string | undefined, string, Record<string, string>?][] = [
      [undefined, 'missing_api_key'],
      ['sk-short', 'invalid_api_key'],
      [`sk-${'A'.repeat(48)}`, 'invalid_api_key'],
      [disabled.secret, 'api_key_disabled'],
      [expired.secret, 'api_key_expired'],
      [foreign.secret, 'invalid_api_key'],
    ];
    for (const [secret, code] of cases) {
      for (const res of [await call(secret, { model: modelId, messages: HELLO }), await models(secret)]) {
        expect(res.statusCode, code).toBe(401);
        expect(errorOf(res)).toMatchObject({ type: 'authentication_error', code });
        expect(typeof errorOf(res).message).toBe('string');
      }
    }
    const basic = await call(undefined, { model: modelId, messages: HELLO }, { headers: { authorization: 'Basic abc' } });
    expect(errorOf(basic).code).toBe('missing_api_key');
    expect((await models(future.secret)).statusCode).toBe(200);
    // The foreign key works on its own tenant's host.
    expect((await models(foreign.secret, { host: '127.0.0.1' })).statusCode).toBe(200);
  });

  it('refuses a source address outside the key’s IP allow-list with 403 (addresses and CIDRs, v4 and v6)', async () => {
    const { key } = await userWithKey(1_000_000, { ipAllow: ['10.0.0.0/8', '192.168.1.7', '2001:db8::/32'] });
    const at = (remoteAddress: string) => models(key.secret, { remoteAddress });
    expect((await at('127.0.0.1')).statusCode).toBe(403);
    expect(errorOf(await at('127.0.0.1'))).toMatchObject({ type: 'permission_error', code: 'ip_not_allowed' });
    expect((await at('192.168.1.8')).statusCode).toBe(403);
    expect((await at('10.20.30.40')).statusCode).toBe(200);
    expect((await at('::ffff:10.1.1.1')).statusCode).toBe(200);
    expect((await at('192.168.1.7')).statusCode).toBe(200);
    expect((await at('2001:db8:1::5')).statusCode).toBe(200);
    expect((await at('2001:db9::5')).statusCode).toBe(403);
    const refused = await call(key.secret, { model: modelId, messages: HELLO }, { remoteAddress: '8.8.8.8' });
    expect(refused.statusCode).toBe(403);
  });

  it('answers 404 for an unknown or unpublished model and 403 for a model the key may not call', async () => {
    const hidden = await w.model({ published: false });
    const other = await w.model({});
    const { user, key } = await userWithKey(1_000_000, { models: [modelId] });
    const unknown = await call(key.secret, { model: 'no-such-model', messages: HELLO });
    expect(unknown.statusCode).toBe(404);
    expect(errorOf(unknown)).toMatchObject({ type: 'not_found_error', code: 'model_not_found' });
    expect((await call(key.secret, { model: hidden.modelId, messages: HELLO })).statusCode).toBe(404);
    const refused = await call(key.secret, { model: other.modelId, messages: HELLO });
    expect(refused.statusCode).toBe(403);
    expect(errorOf(refused)).toMatchObject({ type: 'permission_error', code: 'model_not_allowed' });
    expect(await w.usage(user.id)).toEqual([]);
  });

  it('answers every bad body with a 400 in OpenAI’s shape naming the parameter', async () => {
    const { user, key } = await userWithKey();
    const bad: [unknown, string | null, string?][] = [
      [[1, 2], null],
      [{ model: modelId }, 'messages'],
      [{ model: modelId, messages: [] }, 'messages'],
      [{ messages: HELLO }, 'model'],
      [{ model: modelId, messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].role'],
      [{ model: modelId, messages: [{ role: 'user', content: 42 }] }, 'messages[0].content'],
      [{ model: modelId, messages: [{ role: 'user' }] }, 'messages[0].content'],
      [{ model: modelId, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://x' } }] }] }, 'messages[0].content[0]', 'image_url'],
      [{ model: modelId, messages: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] }, 'messages[0].content[0]'],
      [{ model: modelId, messages: HELLO, temperature: 2.5 }, 'temperature'],
      [{ model: modelId, messages: HELLO, temperature: 'hot' }, 'temperature'],
      [{ model: modelId, messages: HELLO, top_p: 1.5 }, 'top_p'],
      [{ model: modelId, messages: HELLO, max_tokens: 0 }, 'max_tokens'],
      [{ model: modelId, messages: HELLO, max_tokens: -3 }, 'max_tokens'],
      [{ model: modelId, messages: HELLO, max_tokens: 1.5 }, 'max_tokens'],
      [{ model: modelId, messages: HELLO, max_completion_tokens: 0 }, 'max_completion_tokens'],
      [{ model: modelId, messages: HELLO, stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
      [{ model: modelId, messages: HELLO, n: 2 }, 'n'],
      [{ model: modelId, messages: HELLO, stream: 'yes' }, 'stream'],
      [{ model: modelId, messages: HELLO, seed: 1.5 }, 'seed'],
    ];
    for (const [body, param, inMessage] of bad) {
      const res = await call(key.secret, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      const e = errorOf(res);
      expect(e, JSON.stringify(body)).toMatchObject({ type: 'invalid_request_error', param });
      expect(e.message).toMatch(/[\u4e00-\u9fff]/);
      if (inMessage) expect(e.message).toContain(inMessage);
    }
    for (const raw of ['{"model":', 'not json', '']) {
      const res = await call(key.secret, undefined, { raw });
      expect(res.statusCode, raw).toBe(400);
      expect(errorOf(res)).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
    }
    // Any content type is read as JSON, as OpenAI does; text/plain is not the console's encrypted body here.
    const plain = await call(key.secret, { model: modelId, messages: HELLO }, { headers: { 'content-type': 'text/plain' } });
    expect(plain.statusCode).toBe(200);
    expect(await w.usage(user.id)).toHaveLength(1);
  });

  it('accepts every listed parameter, content parts, developer messages and passes them upstream', async () => {
    const { key } = await userWithKey();
    const res = await call(key.secret, {
      model: modelId,
      messages: [
        { role: 'developer', content: 'be brief' },
        { role: 'system', content: [{ type: 'text', text: 'sys' }] },
        { role: 'user', content: [{ type: 'text', text: 'hel' }, { type: 'text', text: 'lo' }] },
        { role: 'assistant', content: null },
        { role: 'user', content: 'a\u0000b' },
      ],
      temperature: 0.5,
      top_p: 0.9,
      max_tokens: 100,
      max_completion_tokens: 3,
      stop: 'END',
      seed: 7,
      n: 1,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().choices[0].finish_reason).toBe('length');
    expect(res.json().usage.completion_tokens).toBe(3);
    const req = w.fake.calls.at(-1)?.request;
    expect(req).toMatchObject({ maxTokens: 3, temperature: 0.5, topP: 0.9, stop: ['END'], seed: 7 });
    expect(req?.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: '' },
      { role: 'user', content: 'a\u0000b' },
    ]);
  });

  it('refuses a prompt past the context length with 400 context_length_exceeded', async () => {
    const small = await w.model({ contextLength: 256 });
    const { user, key } = await userWithKey();
    const res = await call(key.secret, { model: small.modelId, messages: [{ role: 'user', content: 'x'.repeat(4 * 260) }] });
    expect(res.statusCode).toBe(400);
    expect(errorOf(res)).toMatchObject({ code: 'context_length_exceeded', param: 'messages' });
    expect(await w.wallet(user.id)).toEqual({ balance: 1_000_000, held: 0 });
    // max_tokens past what the context leaves is capped to it, not refused.
    const ok = await call(key.secret, { model: small.modelId, messages: HELLO, max_tokens: 100_000 });
    expect(ok.statusCode).toBe(200);
    expect(w.fake.calls.at(-1)?.request.maxTokens).toBe(256 - 9);
  });

  it('answers 402 when the balance can’t pay, and shrinks the hold when no max_tokens was given', async () => {
    const broke = await userWithKey(0);
    const res = await call(broke.key.secret, { model: modelId, messages: HELLO });
    expect(res.statusCode).toBe(402);
    expect(errorOf(res)).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_balance' });
    // 30 units: the 9-token prompt costs 11.11 units, each output token 2.35: 8 tokens cost 29.88 → 30 (fits), 9 cost 32.22 → 33.
    expect(llmCost(9, 8, IN, OUT)).toBe(30);
    expect(llmCost(9, 9, IN, OUT)).toBe(33);
    w.fake.setScript(modelId, { tokens: fakeTokens(20) });
    try {
      const poor = await userWithKey(30);
      const shrunk = await call(poor.key.secret, { model: modelId, messages: HELLO });
      expect(shrunk.statusCode).toBe(200);
      expect(w.fake.calls.at(-1)?.request.maxTokens).toBe(8);
      expect(shrunk.json()).toMatchObject({ choices: [{ finish_reason: 'length' }], usage: { completion_tokens: 8 } });
      expect(await w.wallet(poor.user.id)).toEqual({ balance: 0, held: 0 });

      const exact = await userWithKey(30);
      const refused = await call(exact.key.secret, { model: modelId, messages: HELLO, max_tokens: 9 });
      expect(refused.statusCode).toBe(402);
      expect((await call(exact.key.secret, { model: modelId, messages: HELLO, max_tokens: 8 })).statusCode).toBe(200);
      expect(await w.wallet(exact.user.id)).toEqual({ balance: 0, held: 0 });
    } finally {
      w.fake.setScript(modelId, { tokens: fakeTokens(5) });
    }
  });

  it('answers 429 when the key’s quota is used up, and counts what it spent', async () => {
    const { user, key } = await userWithKey(1_000_000, { quota: 50 });
    expect((await call(key.secret, { model: modelId, messages: HELLO })).statusCode).toBe(200);
    expect((await w.keyRow(key.id)).used).toBe(23);
    // 27 units left: a call that must hold 23 still fits, then 4 left: not even the prompt (12).
    expect((await call(key.secret, { model: modelId, messages: HELLO, max_tokens: 5 })).statusCode).toBe(200);
    const res = await call(key.secret, { model: modelId, messages: HELLO, max_tokens: 1 });
    expect(res.statusCode).toBe(429);
    expect(errorOf(res)).toMatchObject({ type: 'insufficient_quota', code: 'quota_exceeded' });
    expect(await w.keyRow(key.id)).toMatchObject({ used: 46, held: 0 });
    expect((await w.wallet(user.id)).balance).toBe(1_000_000 - 46);
  });

  it('maps upstream faults before the first token to 502/504/429 and charges nothing', async () => {
    const faults = [
      [{ kind: 'refuse' }, 502, 'upstream_error'],
      [{ kind: 'timeout' }, 504, 'upstream_timeout'],
      [{ kind: 'garbage' }, 502, 'upstream_error'],
      [{ kind: 'busy' }, 429, 'upstream_busy'],
    ] as const;
    const { user, key } = await userWithKey();
    try {
      for (const [fault, status, code] of faults) {
        w.fake.setScript(modelId, { tokens: fakeTokens(5), fault });
        for (const stream of [false, true]) {
          const res = await call(key.secret, { model: modelId, messages: HELLO, stream });
          expect(res.statusCode, fault.kind).toBe(status);
          expect(errorOf(res).code).toBe(code);
        }
      }
    } finally {
      w.fake.setScript(modelId, { tokens: fakeTokens(5) });
    }
    expect(await w.wallet(user.id)).toEqual({ balance: 1_000_000, held: 0 });
    const rows = await w.usage(user.id);
    expect(rows.map((r) => [r.status, r.cost, r.errorCode])).toEqual([
      [502, 0, 'upstream_error'],
      [502, 0, 'upstream_error'],
      [504, 0, 'upstream_timeout'],
      [504, 0, 'upstream_timeout'],
      [502, 0, 'upstream_error'],
      [502, 0, 'upstream_error'],
      [429, 0, 'upstream_busy'],
      [429, 0, 'upstream_busy'],
    ]);
  });

  it('charges only what arrived when the upstream closes mid-stream, and ends the stream with an error frame', async () => {
    const { user, key } = await userWithKey();
    w.fake.setScript(modelId, { tokens: fakeTokens(10), fault: { kind: 'close', after: 3 } });
    try {
      const res = await call(key.secret, { model: modelId, messages: HELLO, stream: true, stream_options: { include_usage: true } });
      expect(res.statusCode).toBe(200);
      const frames = sseFrames(res.body) as Record<string, unknown>[];
      expect(frames.at(-1)).toMatchObject({ error: { code: 'upstream_error', type: 'api_error' } });
      expect(frames).not.toContain('[DONE]');
      const text = frames.flatMap((f) => (f.choices as { delta: { content?: string } }[] | undefined) ?? []).map((c) => c.delta.content ?? '').join('');
      expect(text).toBe('t0 t1 t2 ');
      const plain = await call(key.secret, { model: modelId, messages: HELLO });
      expect(plain.statusCode).toBe(502);
    } finally {
      w.fake.setScript(modelId, { tokens: fakeTokens(5) });
    }
    const cost = llmCost(9, 3, IN, OUT);
    expect(await w.wallet(user.id)).toEqual({ balance: 1_000_000 - 2 * cost, held: 0 });
    expect((await w.usage(user.id)).map((r) => [r.status, r.completionTokens, r.cost, r.stream])).toEqual([
      [502, 3, cost, true],
      [502, 3, cost, false],
    ]);
  });

  it('charges the prompt bound plus the counted tokens when the upstream reports no usage', async () => {
    const { user, key } = await userWithKey();
    w.fake.setScript(modelId, { tokens: fakeTokens(4), usage: false });
    try {
      const res = await call(key.secret, { model: modelId, messages: HELLO });
      expect(res.json().usage).toEqual({ prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 });
    } finally {
      w.fake.setScript(modelId, { tokens: fakeTokens(5) });
    }
    expect((await w.wallet(user.id)).balance).toBe(1_000_000 - llmCost(9, 4, IN, OUT));
  });

  it('answers unknown /v1 paths, wrong methods and oversized bodies in OpenAI’s shape', async () => {
    const { key } = await userWithKey();
    for (const [method, url] of [
      ['GET', '/v1/nope'],
      ['GET', '/v1/chat/completions'],
      ['POST', '/v1/embeddings'],
    ] as const) {
      const res = await w.t.app.inject({ method, url, headers: { host: 'localhost', authorization: `Bearer ${key.secret}` } });
      expect(res.statusCode, url).toBe(404);
      expect(errorOf(res)).toMatchObject({ type: 'invalid_request_error', code: 'unknown_url' });
      expect(res.json()).not.toHaveProperty('code');
    }
    const big = await call(key.secret, undefined, { raw: JSON.stringify({ model: modelId, messages: [{ role: 'user', content: 'x'.repeat(5 * 1024 * 1024) }] }) });
    expect(big.statusCode).toBe(413);
    expect(errorOf(big)).toMatchObject({ code: 'request_too_large' });
    // Past the console's 1 MB limit, within the gateway's 4 MB: read (and refused for the context, not the size).
    const mid = await call(key.secret, { model: modelId, messages: [{ role: 'user', content: 'x'.repeat(2 * 1024 * 1024) }] });
    expect(errorOf(mid).code).toBe('context_length_exceeded');
  });

  it('keeps the console’s answers as they were, and schedules the sweep', async () => {
    const res = await w.t.app.inject({ method: 'GET', url: '/api/v1/nope', headers: { host: 'localhost' } });
    expect(res.json()).toMatchObject({ code: 404 });
    const docs = await w.t.app.inject({ method: 'GET', url: '/api/docs/json', headers: { host: 'localhost' } });
    expect(Object.keys(docs.json().paths).some((p) => p.startsWith('/v1'))).toBe(false);
    expect(w.t.container.scheduledTasks.find((s) => s.name === LLM_SWEEP_TASK)?.everyMs).toBe(60_000);
  });

  it('authenticates from the cache: a flood of one bad key or one good key queries the key once', async () => {
    const { key } = await userWithKey();
    const auth = w.t.container.llmKeyAuth;
    const first = await auth.authenticate(key.secret);
    expect(await auth.authenticate(key.secret)).toBe(first);
    const bad = `sk-${'B'.repeat(48)}`;
    const results = await Promise.all(Array.from({ length: 20 }, () => auth.authenticate(bad)));
    expect(results.every((r) => r === undefined)).toBe(true);
    auth.forget(key.id);
    const again = await auth.authenticate(key.secret);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it('re-reads a key after its TTL, at once after forget(), and remembers an unknown secret briefly', async () => {
    let now = 1_000_000;
    const auth = createApiKeyAuth({ db: w.t.container.db, now: () => now });
    const { key } = await userWithKey();
    const set = (v: Partial<typeof apiKeys.$inferInsert>) => w.t.container.db.update(apiKeys).set(v).where(eq(apiKeys.id, key.id));
    expect((await auth.authenticate(key.secret))?.enabled).toBe(true);
    await set({ enabled: false });
    expect((await auth.authenticate(key.secret))?.enabled).toBe(true);
    now += KEY_CACHE_TTL_MS - 1;
    expect((await auth.authenticate(key.secret))?.enabled).toBe(true);
    now += 1;
    expect((await auth.authenticate(key.secret))?.enabled).toBe(false);
    await set({ deletedAt: new Date() });
    auth.forget(key.id);
    expect(await auth.authenticate(key.secret)).toBeUndefined();
    await set({ deletedAt: null, enabled: true });
    expect(await auth.authenticate(key.secret)).toBeUndefined();
    now += KEY_NEGATIVE_TTL_MS;
    expect((await auth.authenticate(key.secret))?.keyId).toBe(key.id);
  });

  it('refuses a deleted key once the key service forgets it', async () => {
    const { key } = await userWithKey();
    expect((await models(key.secret)).statusCode).toBe(200);
    await w.t.container.db.update(apiKeys).set({ deletedAt: new Date() }).where(eq(apiKeys.id, key.id));
    w.t.container.llmKeyAuth.forget(key.id);
    expect(errorOf(await models(key.secret)).code).toBe('invalid_api_key');
  });
});
