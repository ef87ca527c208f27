import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { LlmUpstream, UpstreamConfig, UpstreamHealthResult, UpstreamRegistry } from '../../src/adapters/llm/port.ts';
import { llmModels, llmUpstreams } from '../../src/db/schema/llm.ts';
import { tenants } from '../../src/db/schema/tenant.ts';
import { upstreamKeyContext } from '../../src/modules/llm/catalog.service.ts';
import { EMBEDDED_SEED, ensureLlmSeeded } from '../../src/modules/llm/llm-seed.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser, signInSeededOperator } from '../helpers/factories.ts';

/** A registry whose adapters answer health() from a script; records what it was given. */
function scriptedRegistry() {
  const state = {
    health: async (): Promise<UpstreamHealthResult> => ({ ok: true, latencyMs: 12, models: ['m1', 'm2'], error: null }),
    configs: [] as UpstreamConfig[],
    forgotten: [] as number[],
  };
  const registry: UpstreamRegistry = {
    get(config) {
      state.configs.push(config);
      const upstream: LlmUpstream = {
        kind: config.kind,
        countPromptTokens: async () => 0,
        stream: () => {
          throw new Error('not used');
        },
        health: () => state.health(),
        close: async () => {},
      };
      return upstream;
    },
    async forget(id) {
      state.forgotten.push(id);
    },
    async closeAll() {},
  };
  return { registry, state };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read loosely, asserted field by field
type Json = { code: number; msg: string; data: any };

describe.each(engines)('LLM catalog: operator calls and the model square (%s)', (engine) => {
  let t: TestApp;
  let op: string;
  let otherOp: string;
  let user: string;
  const fake = scriptedRegistry();
  beforeAll(async () => {
    t = await buildTestApp({ engine, overrides: { llmUpstreams: fake.registry } });
    op = (await signInSeededOperator(t)).token;
    otherOp = (await signInSeededOperator(t, '127.0.0.1')).token;
    user = (await createUser(t)).token;
  });
  afterAll(async () => {
    await t?.close();
  });

  const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, token: string | undefined, payload?: object, host?: string): Promise<{ status: number; body: Json; raw: string }> => {
    const res = await t.request({ method, url, token, host, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json<Json>(), raw: res.body };
  };
  const openaiUpstream = (over: object = {}) => ({ name: 'vLLM 集群', kind: 'openai', baseUrl: 'http://10.0.0.5:8000/v1', apiKey: 'sk-upstream-secret-123456', ...over });
  const newUpstream = async (over: object = {}): Promise<number> => {
    const r = await call('POST', '/api/v1/operate/llm/upstream', op, openaiUpstream(over));
    expect(r.status, r.raw).toBe(200);
    return r.body.data.id as number;
  };
  const modelFor = (upstreamId: number, over: object = {}) => ({
    modelId: `qwen-${Math.random().toString(36).slice(2, 8)}`,
    name: 'Qwen 测试',
    provider: '通义千问',
    description: 'A helpful model',
    tags: ['对话'],
    contextLength: 32_768,
    inputPrice: 20_000,
    outputPrice: 60_000,
    published: true,
    upstreamId,
    upstreamModel: 'Qwen/Qwen2.5-7B-Instruct',
    ...over,
  });
  const square = async (query = '') => {
    const r = await call('GET', `/api/v1/llm/model/list${query}`, user);
    expect(r.status, r.raw).toBe(200);
    return r.body.data as { list: { id: string; name: string; tags: string[]; description: string }[]; tags: string[] };
  };

  it('creates an openai upstream with its key sealed: the row holds no plain key, answers show only hasKey', async () => {
    const r = await call('POST', '/api/v1/operate/llm/upstream', op, openaiUpstream({ timeoutMs: 30_000, maxConcurrency: 8 }));
    expect(r.status, r.raw).toBe(200);
    expect(r.body.data).toMatchObject({ name: 'vLLM 集群', kind: 'openai', baseUrl: 'http://10.0.0.5:8000/v1', hasKey: true, modelPath: '', timeoutMs: 30_000, maxConcurrency: 8, retired: false });
    expect(r.raw).not.toContain('sk-upstream-secret-123456');
    const [row] = await t.container.db.select().from(llmUpstreams).where(eq(llmUpstreams.id, r.body.data.id));
    expect(row!.apiKeySealed).toBeTruthy();
    expect(JSON.stringify(row)).not.toContain('sk-upstream-secret-123456');
    expect(await t.container.llmVault.open(upstreamKeyContext(row!.tenantId), row!.apiKeySealed!)).toBe('sk-upstream-secret-123456');
    // Bound to the tenant: another tenant's context does not open it.
    await expect(t.container.llmVault.open(upstreamKeyContext(row!.tenantId + 1), row!.apiKeySealed!)).rejects.toThrow();

    const list = await call('GET', '/api/v1/operate/llm/upstream', op);
    expect(list.body.data.list.map((u: { id: number }) => u.id)).toContain(r.body.data.id);
    expect(list.raw).not.toContain('sk-upstream-secret-123456');
  });

  it('changes an upstream: a new key is sealed, "" clears it, the adapter is forgotten; switching to embedded drops URL and key', async () => {
    const id = await newUpstream();
    fake.state.forgotten.length = 0;
    const renamed = await call('PUT', `/api/v1/operate/llm/upstream/${id}`, op, { name: '新名字', apiKey: 'sk-another-key-0000' });
    expect(renamed.status, renamed.raw).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: '新名字', hasKey: true, baseUrl: 'http://10.0.0.5:8000/v1' });
    const [row] = await t.container.db.select().from(llmUpstreams).where(eq(llmUpstreams.id, id));
    expect(await t.container.llmVault.open(upstreamKeyContext(row!.tenantId), row!.apiKeySealed!)).toBe('sk-another-key-0000');
    expect(fake.state.forgotten).toEqual([id]);

    const cleared = await call('PUT', `/api/v1/operate/llm/upstream/${id}`, op, { apiKey: '' });
    expect(cleared.body.data.hasKey).toBe(false);
    const embedded = await call('PUT', `/api/v1/operate/llm/upstream/${id}`, op, { kind: 'embedded', apiKey: '' });
    expect(embedded.status, embedded.raw).toBe(200);
    expect(embedded.body.data).toMatchObject({ kind: 'embedded', baseUrl: '', hasKey: false });
    const back = await call('PUT', `/api/v1/operate/llm/upstream/${id}`, op, { kind: 'openai' });
    expect(back.status).toBe(400);
    expect(back.body.msg).toContain('baseUrl');
  });

  it('refuses bad upstreams with 400 and a Chinese message naming the field', async () => {
    const cases: [object, RegExp][] = [
      [{ kind: 'openai', name: 'x' }, /上游地址（baseUrl）/],
      [{ kind: 'embedded', name: 'x', baseUrl: 'http://a.example/v1' }, /embedded.*baseUrl/],
      [{ kind: 'embedded', name: 'x', apiKey: 'k' }, /embedded.*apiKey/],
      [{ kind: 'embedded', name: 'x', modelPath: 'models/x.gguf' }, /模型文件路径/],
      [{ kind: 'embedded', name: 'x', modelPath: '/srv/../etc/passwd.gguf' }, /模型文件路径/],
      [{ kind: 'openai', name: 'x', baseUrl: 'http://a.example/v1', modelPath: '/m.gguf' }, /modelPath/],
      [{ kind: 'grpc', name: 'x' }, /上游类型应为 openai 或 embedded/],
      [{ kind: 'openai', name: 'x', baseUrl: 'http://a.example/v1', apiKey: 'sk-a\r\nX-Evil: 1' }, /上游密钥只能包含可见的 ASCII 字符/],
      [{ kind: 'openai', name: 'x', baseUrl: 'http://a.example/v1', apiKey: '密钥' }, /上游密钥只能包含可见的 ASCII 字符/],
      [{ kind: 'openai', baseUrl: 'http://a.example/v1' }, /上游名称/],
      [{ kind: 'openai', name: 'x', baseUrl: 'ftp://a.example/v1' }, /上游地址应为 http\(s\) URL/],
      [{ kind: 'openai', name: 'x', baseUrl: 'http://a.example/v1', timeoutMs: 10 }, /超时至少 1000 毫秒/],
      [{ kind: 'openai', name: 'x', baseUrl: 'http://a.example/v1', extra: 1 }, /extra|未知|不支持/],
    ];
    const before = (await call('GET', '/api/v1/operate/llm/upstream', op)).body.data.total;
    for (const [payload, msg] of cases) {
      const r = await call('POST', '/api/v1/operate/llm/upstream', op, payload);
      expect(r.status, JSON.stringify(payload)).toBe(400);
      expect(r.body.msg, JSON.stringify(payload)).toMatch(msg);
      expect(r.body.data).toBeNull();
    }
    expect((await call('GET', '/api/v1/operate/llm/upstream', op)).body.data.total).toBe(before);
    const embedded = await call('POST', '/api/v1/operate/llm/upstream', op, { kind: 'embedded', name: '本机', modelPath: '/data/models/qwen.gguf' });
    expect(embedded.status, embedded.raw).toBe(200);
    expect(embedded.body.data).toMatchObject({ kind: 'embedded', baseUrl: '', hasKey: false, modelPath: '/data/models/qwen.gguf' });
  });

  it('tests an upstream through its adapter with the unsealed key, and never echoes the key', async () => {
    const id = await newUpstream({ apiKey: 'sk-health-key-abcdef' });
    fake.state.configs.length = 0;
    fake.state.health = async () => ({ ok: true, latencyMs: 7.6, models: ['Qwen/Qwen2.5-7B-Instruct'], error: null });
    const good = await call('POST', `/api/v1/operate/llm/upstream/${id}/test`, op);
    expect(good.status, good.raw).toBe(200);
    expect(good.body.data).toEqual({ ok: true, latencyMs: 8, models: ['Qwen/Qwen2.5-7B-Instruct'], error: null });
    expect(fake.state.configs[0]).toMatchObject({ id, kind: 'openai', apiKey: 'sk-health-key-abcdef', baseUrl: 'http://10.0.0.5:8000/v1' });

    fake.state.health = async () => ({ ok: false, latencyMs: 3, models: [], error: 'HTTP 401 for key sk-health-key-abcdef' });
    const refused = await call('POST', `/api/v1/operate/llm/upstream/${id}/test`, op);
    expect(refused.body.data).toMatchObject({ ok: false, error: 'HTTP 401 for key ***' });
    fake.state.health = async () => {
      throw new Error('connect ECONNREFUSED with sk-health-key-abcdef');
    };
    const thrown = await call('POST', `/api/v1/operate/llm/upstream/${id}/test`, op);
    expect(thrown.status).toBe(200);
    expect(thrown.body.data).toMatchObject({ ok: false, models: [], error: 'connect ECONNREFUSED with ***' });
    expect(thrown.raw).not.toContain('sk-health-key-abcdef');
    fake.state.health = async () => ({ ok: true, latencyMs: 12, models: [], error: null });

    expect((await call('POST', '/api/v1/operate/llm/upstream/999999/test', op)).status).toBe(404);
    const foreign = await call('POST', `/api/v1/operate/llm/upstream/${id}/test`, otherOp, undefined, '127.0.0.1');
    expect(foreign.status).toBe(404);
    expect(foreign.body.msg).toBe('上游不存在');
  });

  it('operate routes need an operator of the tenant: 401 without a session, 403 for a user, 404 for another tenant', async () => {
    const id = await newUpstream();
    for (const [method, url, payload] of [
      ['GET', '/api/v1/operate/llm/upstream', undefined],
      ['POST', '/api/v1/operate/llm/upstream', openaiUpstream()],
      ['PUT', `/api/v1/operate/llm/upstream/${id}`, { name: 'x' }],
      ['DELETE', `/api/v1/operate/llm/upstream/${id}`, undefined],
      ['POST', `/api/v1/operate/llm/upstream/${id}/test`, undefined],
      ['GET', '/api/v1/operate/llm/model', undefined],
      ['POST', '/api/v1/operate/llm/model', modelFor(id)],
      ['PUT', '/api/v1/operate/llm/model/1', { name: 'x' }],
      ['DELETE', '/api/v1/operate/llm/model/1', undefined],
    ] as const) {
      expect((await call(method, url, undefined, payload)).status, `${method} ${url}`).toBe(401);
      expect((await call(method, url, user, payload)).status, `${method} ${url}`).toBe(403);
    }
    // Another tenant's operator: the upstream is not theirs.
    expect((await call('PUT', `/api/v1/operate/llm/upstream/${id}`, otherOp, { name: '抢' }, '127.0.0.1')).status).toBe(404);
    expect((await call('DELETE', `/api/v1/operate/llm/upstream/${id}`, otherOp, undefined, '127.0.0.1')).status).toBe(404);
    const theirs = await call('GET', '/api/v1/operate/llm/upstream', otherOp, undefined, '127.0.0.1');
    expect(theirs.body.data.list.map((u: { id: number }) => u.id)).not.toContain(id);
    // Nor can they hang a model on it.
    const hung = await call('POST', '/api/v1/operate/llm/model', otherOp, modelFor(id), '127.0.0.1');
    expect(hung.status).toBe(404);
    expect(hung.body.msg).toBe('上游不存在');
    const [row] = await t.container.db.select().from(llmUpstreams).where(eq(llmUpstreams.id, id));
    expect(row!.retiredAt).toBeNull();
    expect(row!.name).toBe('vLLM 集群');
  });

  it('creates, changes and retires models; a model the operator publishes is in the square at once', async () => {
    const up = await newUpstream();
    const before = await square(); // fills the catalog's cache
    const body = modelFor(up, { tags: ['对话', '代码'], description: 'Writes CODE well', published: false });
    const created = await call('POST', '/api/v1/operate/llm/model', op, body);
    expect(created.status, created.raw).toBe(200);
    expect(created.body.data).toMatchObject({ id: body.modelId, published: false, upstreamId: up, retired: false, sort: 0, inputPrice: 20_000 });
    const dbId = created.body.data.dbId as number;
    expect((await square()).list.map((m) => m.id)).not.toContain(body.modelId);

    const published = await call('PUT', `/api/v1/operate/llm/model/${dbId}`, op, { published: true, inputPrice: 30_000 });
    expect(published.status, published.raw).toBe(200);
    const after = await square();
    expect(after.list.length).toBe(before.list.length + 1);
    expect(after.list.find((m) => m.id === body.modelId)).toEqual({
      id: body.modelId,
      name: body.name,
      provider: body.provider,
      description: 'Writes CODE well',
      tags: ['对话', '代码'],
      contextLength: 32_768,
      inputPrice: 30_000,
      outputPrice: 60_000,
    });
    expect(after.tags).toEqual(expect.arrayContaining(['对话', '代码']));
    // Filters: keyword over name, id, provider and description (any case), and tag.
    expect((await square('?keyword=code')).list.map((m) => m.id)).toContain(body.modelId);
    expect((await square(`?keyword=${encodeURIComponent(body.modelId.toUpperCase())}`)).list.map((m) => m.id)).toEqual([body.modelId]);
    expect((await square(`?keyword=${encodeURIComponent('通义')}`)).list.map((m) => m.id)).toContain(body.modelId);
    expect((await square(`?tag=${encodeURIComponent('代码')}`)).list.map((m) => m.id)).toContain(body.modelId);
    expect((await square(`?tag=${encodeURIComponent('绘画')}`)).list).toEqual([]);
    expect((await square('?keyword=no-such-model-anywhere')).list).toEqual([]);
    expect((await call('GET', `/api/v1/llm/model/list?keyword=${'x'.repeat(65)}`, user)).status).toBe(400);
    expect((await call('GET', '/api/v1/llm/model/list', undefined)).status).toBe(401);

    // The operator's list shows it with its operator fields.
    const ops = await call('GET', '/api/v1/operate/llm/model', op);
    expect(ops.body.data.list.find((m: { dbId: number }) => m.dbId === dbId)).toMatchObject({ published: true, upstreamModel: 'Qwen/Qwen2.5-7B-Instruct' });
    // Another tenant neither sees nor touches it.
    expect((await call('GET', '/api/v1/operate/llm/model', otherOp, undefined, '127.0.0.1')).body.data.list.map((m: { dbId: number }) => m.dbId)).not.toContain(dbId);
    expect((await call('PUT', `/api/v1/operate/llm/model/${dbId}`, otherOp, { published: false }, '127.0.0.1')).status).toBe(404);
    expect((await call('DELETE', `/api/v1/operate/llm/model/${dbId}`, otherOp, undefined, '127.0.0.1')).status).toBe(404);
    expect((await call('GET', '/api/v1/llm/model/list', (await createUser(t, { host: '127.0.0.1' })).token, undefined, '127.0.0.1')).body.data.list.map((m: { id: string }) => m.id)).not.toContain(body.modelId);

    // Retired: gone from the square at once, its id free for a new model, no more changes.
    expect((await call('DELETE', `/api/v1/operate/llm/model/${dbId}`, op)).status).toBe(200);
    expect((await square()).list.map((m) => m.id)).not.toContain(body.modelId);
    expect((await call('PUT', `/api/v1/operate/llm/model/${dbId}`, op, { published: true })).status).toBe(409);
    const again = await call('POST', '/api/v1/operate/llm/model', op, body);
    expect(again.status, again.raw).toBe(200);
    expect(again.body.data.dbId).not.toBe(dbId);
    expect((await call('DELETE', `/api/v1/operate/llm/model/${again.body.data.dbId}`, op)).status).toBe(200);
    expect((await call('DELETE', '/api/v1/operate/llm/model/999999', op)).status).toBe(404);
  });

  it('refuses bad models: a taken model id (409 naming it), a missing or retired upstream, bad fields (400 in Chinese)', async () => {
    const up = await newUpstream();
    const first = modelFor(up);
    expect((await call('POST', '/api/v1/operate/llm/model', op, first)).status).toBe(200);
    const dup = await call('POST', '/api/v1/operate/llm/model', op, modelFor(up, { modelId: first.modelId }));
    expect(dup.status).toBe(409);
    expect(dup.body.msg).toBe(`模型 ID ${first.modelId} 已被使用`);
    const second = await call('POST', '/api/v1/operate/llm/model', op, modelFor(up));
    const renamed = await call('PUT', `/api/v1/operate/llm/model/${second.body.data.dbId}`, op, { modelId: first.modelId });
    expect(renamed.status).toBe(409);
    expect(renamed.body.msg).toContain(first.modelId);

    const missing = await call('POST', '/api/v1/operate/llm/model', op, modelFor(999_999));
    expect(missing.status).toBe(404);
    expect(missing.body.msg).toBe('上游不存在');

    const cases: [object, RegExp][] = [
      [{ modelId: 'bad id with spaces' }, /模型 ID 只能包含/],
      [{ inputPrice: -1 }, /输入价格不能为负/],
      [{ outputPrice: 1.5 }, /输出价格必须是整数/],
      [{ contextLength: 10 }, /上下文长度至少 256/],
      [{ name: '' }, /请输入模型名称/],
      [{ tags: Array.from({ length: 17 }, (_, i) => `t${i}`) }, /最多 16 个标签/],
      [{ upstreamModel: '' }, /请输入上游模型名/],
      [{ upstreamId: 0 }, /上游不存在/],
    ];
    for (const [over, msg] of cases) {
      const r = await call('POST', '/api/v1/operate/llm/model', op, modelFor(up, over));
      expect(r.status, JSON.stringify(over)).toBe(400);
      expect(r.body.msg, JSON.stringify(over)).toMatch(msg);
    }
    expect((await call('PUT', '/api/v1/operate/llm/model/abc', op, { name: 'x' })).status).toBe(400);
  });

  it('two parallel creates of one model id: exactly one is stored, the other is 409', async () => {
    const up = await newUpstream();
    const body = modelFor(up);
    const results = await Promise.all([call('POST', '/api/v1/operate/llm/model', op, body), call('POST', '/api/v1/operate/llm/model', op, body)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const rows = await t.container.db.select().from(llmModels).where(eq(llmModels.modelId, body.modelId));
    expect(rows).toHaveLength(1);
  });

  it('retiring an upstream is refused while published models use it (naming them), then allowed; a retired upstream serves no model', async () => {
    const up = await newUpstream();
    const a = await call('POST', '/api/v1/operate/llm/model', op, modelFor(up, { sort: 2 }));
    const b = await call('POST', '/api/v1/operate/llm/model', op, modelFor(up, { sort: 1 }));
    const refused = await call('DELETE', `/api/v1/operate/llm/upstream/${up}`, op);
    expect(refused.status).toBe(409);
    expect(refused.body.msg).toBe(`该上游仍有已上架的模型：${b.body.data.id}、${a.body.data.id}，请先下架或改用其他上游`);

    expect((await call('PUT', `/api/v1/operate/llm/model/${a.body.data.dbId}`, op, { published: false })).status).toBe(200);
    expect((await call('DELETE', `/api/v1/operate/llm/model/${b.body.data.dbId}`, op)).status).toBe(200);
    fake.state.forgotten.length = 0;
    expect((await call('DELETE', `/api/v1/operate/llm/upstream/${up}`, op)).status).toBe(200);
    expect(fake.state.forgotten).toEqual([up]);
    const list = await call('GET', '/api/v1/operate/llm/upstream', op);
    expect(list.body.data.list.find((u: { id: number }) => u.id === up)).toMatchObject({ retired: true });

    // Its remaining model can't be published again, nor can a new model use it; the upstream is frozen.
    const republish = await call('PUT', `/api/v1/operate/llm/model/${a.body.data.dbId}`, op, { published: true });
    expect(republish.status).toBe(400);
    expect(republish.body.msg).toMatch(/已停用/);
    const sameUpstream = await call('PUT', `/api/v1/operate/llm/model/${a.body.data.dbId}`, op, { published: true, upstreamId: up });
    expect(sameUpstream.status).toBe(400);
    // An unpublished model there can still be edited (e.g. renamed before moving it).
    expect((await call('PUT', `/api/v1/operate/llm/model/${a.body.data.dbId}`, op, { name: '待迁移' })).status).toBe(200);
    const onRetired = await call('POST', '/api/v1/operate/llm/model', op, modelFor(up));
    expect(onRetired.status).toBe(400);
    expect((await call('PUT', `/api/v1/operate/llm/upstream/${up}`, op, { name: 'x' })).status).toBe(409);
    expect((await call('POST', `/api/v1/operate/llm/upstream/${up}/test`, op)).status).toBe(409);
    // Moving the model to a live upstream works.
    const live = await newUpstream();
    const moved = await call('PUT', `/api/v1/operate/llm/model/${a.body.data.dbId}`, op, { upstreamId: live, published: true });
    expect(moved.status, moved.raw).toBe(200);
    expect((await square()).list.map((m) => m.id)).toContain(a.body.data.id);
    // Retiring twice is fine; a missing id is 404.
    expect((await call('DELETE', `/api/v1/operate/llm/upstream/${up}`, op)).status).toBe(200);
    expect((await call('DELETE', '/api/v1/operate/llm/upstream/999999', op)).status).toBe(404);
  });
});

describe.each(engines)('LLM seeding of the embedded model (%s)', (engine) => {
  let t: TestApp;
  const log = { info: () => {} };
  beforeAll(async () => {
    t = await buildTestApp({ engine });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('the demo seed writes no LLM rows', async () => {
    expect(await t.container.db.select().from(llmUpstreams)).toEqual([]);
    expect(await t.container.db.select().from(llmModels)).toEqual([]);
  });

  it('seeds every tenant without an upstream once, even with two replicas at once; the model is in the square', async () => {
    const all = await t.container.db.select({ id: tenants.id }).from(tenants);
    // A tenant that already has an upstream (even a retired one) is left alone.
    const [skipped] = all;
    await t.container.db.insert(llmUpstreams).values({ tenantId: skipped!.id, name: 'own', kind: 'openai', baseUrl: 'http://x.example/v1', retiredAt: new Date() });

    const [a, b] = await Promise.all([
      ensureLlmSeeded({ db: t.container.db, log, embedded: { available: true } }),
      ensureLlmSeeded({ db: t.container.db, log, embedded: { available: true } }),
    ]);
    expect([...a, ...b].sort()).toEqual(all.slice(1).map((x) => x.id).sort());
    expect(await ensureLlmSeeded({ db: t.container.db, log, embedded: { available: true } })).toEqual([]);

    const ups = await t.container.db.select().from(llmUpstreams);
    const models = await t.container.db.select().from(llmModels);
    for (const tenant of all.slice(1)) {
      const mine = ups.filter((u) => u.tenantId === tenant.id);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({ name: '内置 CPU 推理', kind: 'embedded', baseUrl: '', apiKeySealed: null, modelPath: '' });
      const m = models.filter((x) => x.tenantId === tenant.id);
      expect(m).toHaveLength(1);
      expect(m[0]).toMatchObject({
        modelId: 'smollm2-135m-instruct',
        name: 'SmolLM2 135M Instruct',
        provider: 'Hugging Face',
        tags: ['对话', '英文', 'CPU'],
        contextLength: 8192,
        inputPrice: 5_000,
        outputPrice: 10_000,
        sort: 0,
        published: true,
        upstreamId: mine[0]!.id,
        upstreamModel: 'smollm2-135m-instruct',
      });
      expect(m[0]!.description).toMatch(/CPU/);
    }
    expect(models.filter((x) => x.tenantId === skipped!.id)).toEqual([]);

    t.container.llmCatalog.changed();
    const { token } = await createUser(t, { host: '127.0.0.1' });
    const res = await t.request({ method: 'GET', url: '/api/v1/llm/model/list', token, host: '127.0.0.1' });
    expect(res.json<Json>().data.list).toEqual([
      { id: EMBEDDED_SEED.modelId, name: EMBEDDED_SEED.name, provider: EMBEDDED_SEED.provider, description: EMBEDDED_SEED.description, tags: ['对话', '英文', 'CPU'], contextLength: 8192, inputPrice: 5_000, outputPrice: 10_000 },
    ]);
  });

  it('without the embedded runtime the model is seeded unpublished', async () => {
    const [tenant] = await t.container.db.insert(tenants).values({ code: `llm-seed-${engine}`, title: '种子测试', settings: { primaryColor: '#000000', contactPhone: '', contactEmail: '', companyName: '', icp: '' } }).returning({ id: tenants.id });
    expect(await ensureLlmSeeded({ db: t.container.db, log, embedded: { available: false } })).toEqual([tenant!.id]);
    const [m] = await t.container.db.select().from(llmModels).where(eq(llmModels.tenantId, tenant!.id));
    expect(m).toMatchObject({ modelId: 'smollm2-135m-instruct', published: false });
    expect(await t.container.llmCatalog.publishedModels(tenant!.id)).toEqual([]);
  });
});
