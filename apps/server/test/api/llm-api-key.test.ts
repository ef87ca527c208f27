import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { API_KEY_SECRET_RE, MAX_API_KEYS } from '@suanli/contract/llm';
import { apiKeys } from '../../src/db/schema/llm.ts';
import { sha256 } from '../../src/lib/crypto.ts';
import { createApiKeyService, isIpOrCidr } from '../../src/modules/llm/api-key.service.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { addApiKey, addModel, addUpstream } from '../helpers/llm.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read loosely, asserted field by field
type Json = { code: number; msg: string; data: any };

describe('IP allow-list entries', () => {
  it.each(['1.2.3.4', '10.0.0.0/8', '0.0.0.0/0', '192.168.1.1/32', '::1', '2001:db8::/32', 'fe80::1/128', '::ffff:1.2.3.4'])('accepts %s', (e) => {
    expect(isIpOrCidr(e)).toBe(true);
  });
  it.each(['1.2.3', '1.2.3.256', '10.0.0.0/33', '2001:db8::/129', '10.0.0.0/', '/8', '10.0.0.0/8/8', 'example.com', '1.2.3.4/-1', '1.2.3.4/ 8', '::1/0x10', ''])('refuses %s', (e) => {
    expect(isIpOrCidr(e)).toBe(false);
  });
});

describe.each(engines)('LLM API keys (%s)', (engine) => {
  let t: TestApp;
  let tenantId: number;
  let modelA: string;
  let modelB: string;
  let unpublished: string;
  beforeAll(async () => {
    t = await buildTestApp({ engine });
    tenantId = (await t.container.tenants.resolve('localhost')).id;
    const up = await addUpstream(t, { tenantId });
    modelA = (await addModel(t, { tenantId, upstreamId: up })).modelId;
    modelB = (await addModel(t, { tenantId, upstreamId: up })).modelId;
    unpublished = (await addModel(t, { tenantId, upstreamId: up, published: false })).modelId;
  });
  afterAll(async () => {
    await t?.close();
  });

  const post = async (url: string, token: string | undefined, payload: object) => {
    const res = await t.request({ method: 'POST', url: `/api/v1/llm/api_key/${url}`, token, payload });
    return { status: res.statusCode, body: res.json<Json>(), raw: res.body };
  };
  const list = async (token: string) => {
    const res = await t.request({ method: 'GET', url: '/api/v1/llm/api_key/list', token });
    expect(res.statusCode).toBe(200);
    return res.json<Json>().data as { list: { id: string; name: string; status: string; maskedKey: string }[]; total: number };
  };
  const future = () => new Date(Date.now() + 7 * 86_400_000).toISOString();

  it('creates a key: the secret is shown once, only its sha256 and hint are stored', async () => {
    const { token, user } = await createUser(t);
    const expiresAt = future();
    const r = await post('create', token, {
      name: '生产环境',
      expiresAt,
      models: [modelA, modelA],
      quota: 1_000_000,
      ipAllow: ['10.0.0.0/8', '2001:db8::1'],
      limits: [
        { window: 'day', unit: 'money', limit: 50_000 },
        { window: 'day', unit: 'tokens', limit: 1_000_000 },
      ],
    });
    expect(r.status, r.raw).toBe(200);
    const { key, secret } = r.body.data as { key: Record<string, unknown>; secret: string };
    expect(secret).toMatch(API_KEY_SECRET_RE);
    expect(key).toMatchObject({
      name: '生产环境',
      maskedKey: `${secret.slice(0, 7)}…${secret.slice(-4)}`,
      status: 'active',
      expiresAt,
      models: [modelA],
      quota: 1_000_000,
      used: 0,
      ipAllow: ['10.0.0.0/8', '2001:db8::1'],
      lastUsedAt: null,
    });
    expect(key.limits).toHaveLength(2);

    const [row] = await t.container.db.select().from(apiKeys).where(eq(apiKeys.id, key.id as string));
    expect(row).toMatchObject({ userId: user.id, tenantId, secretHash: sha256(secret), enabled: true, deletedAt: null });
    expect(JSON.stringify(row)).not.toContain(secret.slice(3));

    const l = await list(token);
    expect(l.total).toBe(1);
    expect(l.list[0]).toMatchObject({ id: key.id, maskedKey: key.maskedKey, status: 'active' });
    expect(JSON.stringify(l)).not.toContain(secret.slice(3));
    expect(JSON.stringify(l)).not.toContain('secret');

    // Defaults: no expiry, all models, no quota, anywhere, no limits.
    const bare = await post('create', token, { name: '测试' });
    expect(bare.status, bare.raw).toBe(200);
    expect(bare.body.data.key).toMatchObject({ expiresAt: null, models: null, quota: null, ipAllow: [], limits: [], status: 'active' });
    expect(bare.body.data.secret).not.toBe(secret);
    expect((await list(token)).list.map((k) => k.id)).toEqual([bare.body.data.key.id, key.id]); // newest first
  });

  it('refuses bad keys with 400 naming the field or the bad entry, and writes nothing', async () => {
    const { token } = await createUser(t);
    const cases: [object, string | RegExp][] = [
      [{ name: '' }, '请输入密钥名称'],
      [{}, '请输入密钥名称'],
      [{ name: 'n'.repeat(33) }, /密钥名称不能超过 32 个字符/],
      [{ name: 'k', models: [modelA, 'gpt-9'] }, '模型 gpt-9 不存在或未上架'],
      [{ name: 'k', models: [unpublished] }, `模型 ${unpublished} 不存在或未上架`],
      [{ name: 'k', ipAllow: ['10.0.0.1', '10.0.0.0/33'] }, 'IP 白名单中的 10.0.0.0/33 不是有效的 IP 地址或 CIDR 网段'],
      [{ name: 'k', ipAllow: ['localhost'] }, /localhost 不是有效的 IP/],
      [{ name: 'k', ipAllow: Array.from({ length: 33 }, (_, i) => `10.0.0.${i}`) }, /IP 白名单最多 32 条/],
      [{ name: 'k', expiresAt: new Date(Date.now() - 60_000).toISOString() }, '过期时间必须晚于当前时间'],
      [{ name: 'k', expiresAt: 'tomorrow' }, /过期时间/],
      [{ name: 'k', quota: 0 }, /额度必须大于 0/],
      [{ name: 'k', quota: 1.5 }, /额度必须是整数/],
      [{ name: 'k', limits: [{ window: 'hour', unit: 'money', limit: 1 }] }, /限额周期应为 5h、day、week 或 month/],
      [{ name: 'k', limits: [{ window: 'day', unit: 'yuan', limit: 1 }] }, /限额单位应为 tokens 或 money/],
      [{ name: 'k', limits: [{ window: 'day', unit: 'money', limit: 0 }] }, /限额必须大于 0/],
      [
        {
          name: 'k',
          limits: [
            { window: 'week', unit: 'tokens', limit: 10 },
            { window: 'week', unit: 'tokens', limit: 20 },
          ],
        },
        '限额规则重复：周期 week、单位 tokens 只能设置一条',
      ],
      [{ name: 'k', secret: 'sk-mine' }, /secret/],
    ];
    for (const [payload, msg] of cases) {
      const r = await post('create', token, payload);
      expect(r.status, JSON.stringify(payload).slice(0, 80)).toBe(400);
      if (typeof msg === 'string') expect(r.body.msg).toBe(msg);
      else expect(r.body.msg).toMatch(msg);
      expect(r.body.data).toBeNull();
    }
    expect((await list(token)).total).toBe(0);
  });

  it(`keeps at most ${MAX_API_KEYS} keys per user (deleted ones don't count)`, async () => {
    const { token, user } = await createUser(t);
    for (let i = 0; i < MAX_API_KEYS - 1; i++) await addApiKey(t, { tenantId, userId: user.id, name: `k${i}` });
    const last = await post('create', token, { name: 'last' });
    expect(last.status, last.raw).toBe(200);
    const over = await post('create', token, { name: 'over' });
    expect(over.status).toBe(409);
    expect(over.body.msg).toBe(`最多只能创建 ${MAX_API_KEYS} 个 API 密钥，请先删除不用的密钥`);
    expect((await post('delete', token, { id: last.body.data.key.id })).status).toBe(200);
    expect((await post('create', token, { name: 'again' })).status).toBe(200);
  });

  it('updates fields, disables and enables; status follows enabled and expiry', async () => {
    const { token, user } = await createUser(t);
    const created = await post('create', token, { name: 'a', models: [modelA] });
    const id = created.body.data.key.id as string;

    const r = await post('update', token, { id, name: 'b', models: [modelA, modelB], quota: 500, ipAllow: ['::1'], limits: [{ window: '5h', unit: 'tokens', limit: 100 }], expiresAt: future() });
    expect(r.status, r.raw).toBe(200);
    expect(r.body.data).toMatchObject({ id, name: 'b', models: [modelA, modelB], quota: 500, ipAllow: ['::1'], status: 'active', limits: [{ window: '5h', unit: 'tokens', limit: 100 }] });
    const disabled = await post('update', token, { id, enabled: false });
    expect(disabled.body.data).toMatchObject({ status: 'disabled', name: 'b', quota: 500 });
    const [row] = await t.container.db.select().from(apiKeys).where(eq(apiKeys.id, id));
    expect(row!.enabled).toBe(false);
    expect((await post('update', token, { id, enabled: true, models: null, quota: null, expiresAt: null })).body.data).toMatchObject({ status: 'active', models: null, quota: null, expiresAt: null });

    // Bad changes: 400, nothing written.
    for (const [payload, msg] of [
      [{ id, models: ['nope'] }, '模型 nope 不存在或未上架'],
      [{ id, ipAllow: ['300.1.1.1'] }, 'IP 白名单中的 300.1.1.1 不是有效的 IP 地址或 CIDR 网段'],
      [{ id, expiresAt: '2020-01-01T00:00:00Z' }, '过期时间必须晚于当前时间'],
      [{ id, enabled: 'yes' }, 'enabled 必须是布尔值'],
      [{ id: 'not-a-uuid', name: 'x' }, '密钥 ID 格式不正确'],
    ] as const) {
      const bad = await post('update', token, payload);
      expect(bad.status, JSON.stringify(payload)).toBe(400);
      expect(bad.body.msg).toBe(msg);
    }
    expect((await list(token)).list[0]).toMatchObject({ name: 'b', status: 'active' });

    // An expired key (past expiry) shows as expired, whatever enabled says.
    const old = await addApiKey(t, { tenantId, userId: user.id, expiresAt: new Date(Date.now() - 1000) });
    const oldDisabled = await addApiKey(t, { tenantId, userId: user.id, enabled: false, expiresAt: new Date(Date.now() - 1000) });
    const statuses = Object.fromEntries((await list(token)).list.map((k) => [k.id, k.status]));
    expect(statuses[old.id]).toBe('expired');
    expect(statuses[oldDisabled.id]).toBe('expired');
  });

  it('deletes softly: the row stays with deleted_at, the key leaves the list and answers 404 afterwards', async () => {
    const { token } = await createUser(t);
    const id = (await post('create', token, { name: 'gone' })).body.data.key.id as string;
    expect((await post('delete', token, { id })).status).toBe(200);
    const [row] = await t.container.db.select().from(apiKeys).where(eq(apiKeys.id, id));
    expect(row!.deletedAt).not.toBeNull();
    expect(row!.enabled).toBe(false);
    expect((await list(token)).total).toBe(0);
    expect((await post('delete', token, { id })).status).toBe(404);
    const upd = await post('update', token, { id, enabled: true });
    expect(upd.status).toBe(404);
    expect(upd.body.msg).toBe('密钥不存在');
  });

  it("another user's or tenant's key, or a missing id, answers 404 alike and is not changed", async () => {
    const owner = await createUser(t);
    const id = (await post('create', owner.token, { name: 'mine' })).body.data.key.id as string;
    const stranger = await createUser(t);
    const foreignTenant = await createUser(t, { host: '127.0.0.1' });
    for (const target of [id, '00000000-0000-4000-8000-000000000000']) {
      for (const [u, host] of [
        [stranger.token, 'localhost'],
        [foreignTenant.token, '127.0.0.1'],
      ] as const) {
        for (const [url, payload] of [
          ['update', { id: target, enabled: false, name: 'pwned' }],
          ['delete', { id: target }],
        ] as const) {
          const res = await t.request({ method: 'POST', url: `/api/v1/llm/api_key/${url}`, token: u, host, payload });
          expect(res.statusCode, `${url} ${host}`).toBe(404);
          expect(res.json<Json>()).toMatchObject({ code: 404, msg: '密钥不存在', data: null });
        }
      }
    }
    expect((await list(owner.token)).list[0]).toMatchObject({ id, name: 'mine', status: 'active' });
    expect((await list(stranger.token)).total).toBe(0);
  });

  it('a model of another tenant is unknown here', async () => {
    const other = (await t.container.tenants.resolve('127.0.0.1')).id;
    const theirs = (await addModel(t, { tenantId: other, upstreamId: await addUpstream(t, { tenantId: other }) })).modelId;
    const { token } = await createUser(t);
    const r = await post('create', token, { name: 'k', models: [theirs] });
    expect(r.status).toBe(400);
    expect(r.body.msg).toBe(`模型 ${theirs} 不存在或未上架`);
  });

  it('needs a session', async () => {
    expect((await t.request({ method: 'GET', url: '/api/v1/llm/api_key/list' })).statusCode).toBe(401);
    for (const url of ['create', 'update', 'delete']) expect((await post(url, undefined, { name: 'x' })).status).toBe(401);
  });

  it('tells the gateway about every change (onKeyChanged)', async () => {
    const changed: string[] = [];
    const service = createApiKeyService({ db: t.container.db, clock: () => new Date(), catalog: t.container.llmCatalog, onKeyChanged: (id) => changed.push(id) });
    const { user } = await createUser(t);
    const owner = { tenantId, userId: user.id };
    const { key } = await service.create(owner, { name: 'k' });
    await service.update(owner, { id: key.id, enabled: false });
    await service.remove(owner, key.id);
    expect(changed).toEqual([key.id, key.id, key.id]);
    await expect(service.remove(owner, key.id)).rejects.toMatchObject({ status: 404 });
    expect(changed).toHaveLength(3);
  });
});
