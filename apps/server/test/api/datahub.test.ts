import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { datahubs } from '../../src/db/schema/datahub.ts';
import { jobs } from '../../src/db/schema/job.ts';

type Dc = { dataCenterId: number; dataCenterName: string };

describe.each(engines)('datahub on %s', (engine) => {
  let t: TestApp;
  let dataDir: string;
  let localDcs: Dc[];
  let starlakeDcs: Dc[];

  const datacenters = async (token: string, host?: string) => {
    const res = await t.request({ method: 'GET', url: '/api/v1/ai-web/console/datacenters', token, host });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as Dc[];
  };
  const getHub = (token: string, id: number | string, host?: string) => t.request({ method: 'GET', url: `/api/v1/ai-web/datahub/${id}`, token, host });
  const activate = (token: string, payload: unknown, host?: string) =>
    t.request({ method: 'POST', url: '/api/v1/ai-web/datahub', token, host, payload: payload as object });

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-datahub-'));
    t = await buildTestApp({ engine, env: { DATA_DIR: dataDir } });
    localDcs = await datacenters((await createUser(t)).token);
    starlakeDcs = await datacenters((await createUser(t, { host: '127.0.0.1' })).token, '127.0.0.1');
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses every call without a session', async () => {
    const calls = [
      t.request({ method: 'GET', url: '/api/v1/ai-web/console/datacenters' }),
      t.request({ method: 'GET', url: `/api/v1/ai-web/datahub/${localDcs[0]!.dataCenterId}` }),
      t.request({ method: 'POST', url: '/api/v1/ai-web/datahub', payload: { center_id: localDcs[0]!.dataCenterId, name: 'hub' } }),
    ];
    for (const res of await Promise.all(calls)) {
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ code: 401, data: null });
      expect(res.json().msg).toMatch(/会话/);
    }
  });

  it("lists the tenant's own datacenters, in order, as a plain list", async () => {
    const { token } = await createUser(t);
    const res = await t.request({ method: 'GET', url: '/api/v1/ai-web/console/datacenters', token });
    expect(res.json()).toMatchObject({ code: 200, msg: '操作成功' });
    expect(Array.isArray(res.json().data)).toBe(true);
    expect(localDcs.map((d) => d.dataCenterName)).toEqual(['北京 A 区', '内蒙 B 区', '重庆 C 区']);
    expect(starlakeDcs.map((d) => d.dataCenterName)).toEqual(['杭州一区', '宁夏二区', '广州三区']);
    expect(Object.keys(localDcs[0]!).sort()).toEqual(['dataCenterId', 'dataCenterName']);
    const localIds = new Set(localDcs.map((d) => d.dataCenterId));
    expect(starlakeDcs.some((d) => localIds.has(d.dataCenterId))).toBe(false);
  });

  it('activates: null before, status 0 at once, status 1 with a storage folder once the job ran', async () => {
    const { token, user } = await createUser(t);
    const dc = localDcs[1]!;
    const before = await getHub(token, dc.dataCenterId);
    expect(before.statusCode).toBe(200);
    expect(before.json()).toEqual({ code: 200, msg: '操作成功', data: null });

    const res = await activate(token, { center_id: dc.dataCenterId, name: '  训练数据  ' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ code: 200, msg: '操作成功', data: { name: '训练数据', status: 0, dataCenterId: dc.dataCenterId, activatedAt: null } });

    // The job was persisted with the row, and nothing happened on disk yet.
    const [row] = await t.container.db.select().from(datahubs).where(eq(datahubs.userId, user.id));
    expect(row).toMatchObject({ status: 0, storagePath: null, tenantId: user.tenantId });
    const queued = await t.container.db.select().from(jobs).where(eq(jobs.kind, 'datahub.activate'));
    expect(queued.filter((j) => j.payload.datahubId === row!.id)).toHaveLength(1);
    const dir = path.join(dataDir, 'files', 'datahub', String(user.tenantId), String(user.id), String(dc.dataCenterId));
    expect(fs.existsSync(dir)).toBe(false);
    expect((await getHub(token, dc.dataCenterId)).json().data.status).toBe(0);

    expect(await t.container.jobs.runDue()).toBeGreaterThanOrEqual(1);

    const after = (await getHub(token, dc.dataCenterId)).json().data;
    expect(after).toMatchObject({ name: '训练数据', status: 1, dataCenterId: dc.dataCenterId });
    expect(new Date(after.activatedAt).toString()).not.toBe('Invalid Date');
    expect(fs.statSync(dir).isDirectory()).toBe(true);
    const [done] = await t.container.db.select().from(datahubs).where(eq(datahubs.id, row!.id));
    expect(done!.storagePath).toBe(`datahub/${user.tenantId}/${user.id}/${dc.dataCenterId}`);

    // Other datacenters, and other users, are untouched.
    expect((await getHub(token, localDcs[0]!.dataCenterId)).json().data).toBeNull();
    const other = await createUser(t);
    expect((await getHub(other.token, dc.dataCenterId)).json().data).toBeNull();
  });

  it('answers 409 to a second activation, while activating and once activated', async () => {
    const { token } = await createUser(t);
    const id = localDcs[0]!.dataCenterId;
    expect((await activate(token, { center_id: id, name: 'a' })).statusCode).toBe(200);
    const again = await activate(token, { center_id: id, name: 'b' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 409, data: null, msg: expect.stringContaining('正在激活中') });

    await t.container.jobs.runDue();
    const third = await activate(token, { center_id: id, name: 'c' });
    expect(third.statusCode).toBe(409);
    expect(third.json().msg).toContain('已激活');
    expect((await getHub(token, id)).json().data).toMatchObject({ name: 'a', status: 1 });
  });

  it('lets exactly one of five concurrent activations through', async () => {
    const { token, user } = await createUser(t);
    const id = localDcs[2]!.dataCenterId;
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => activate(token, { center_id: id, name: `hub-${i}` })));
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes, results.map((r) => r.body).join('\n')).toEqual([200, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.statusCode === 409)) expect(r.json().msg).toMatch(/激活/);
    const rows = await t.container.db.select().from(datahubs).where(eq(datahubs.userId, user.id));
    expect(rows).toHaveLength(1);
    const queued = (await t.container.db.select().from(jobs).where(eq(jobs.kind, 'datahub.activate'))).filter((j) => j.payload.datahubId === rows[0]!.id);
    expect(queued).toHaveLength(1);
  });

  it("answers a foreign tenant's datacenter exactly like a missing one", async () => {
    const { token } = await createUser(t);
    const foreign = starlakeDcs[0]!.dataCenterId;
    const missing = 2_000_000_000;
    const strip = (body: string) => {
      const { requestId: _r, ...rest } = JSON.parse(body) as Record<string, unknown>;
      return rest;
    };
    const gf = await getHub(token, foreign);
    const gm = await getHub(token, missing);
    expect(gf.statusCode).toBe(404);
    expect(gm.statusCode).toBe(404);
    expect(strip(gf.body)).toEqual({ code: 404, msg: '资源不存在', data: null });
    expect(strip(gm.body)).toEqual(strip(gf.body));

    const af = await activate(token, { center_id: foreign, name: 'x' });
    const am = await activate(token, { center_id: missing, name: 'x' });
    expect(af.statusCode).toBe(404);
    expect(strip(af.body)).toEqual(strip(am.body));
    const rows = await t.container.db.select().from(datahubs).where(eq(datahubs.datacenterId, foreign));
    expect(rows).toHaveLength(0);
  });

  it('refuses bad ids and bodies with a Chinese message naming the problem', async () => {
    const { token } = await createUser(t);
    const id = localDcs[0]!.dataCenterId;
    for (const bad of ['abc', '0', '-3', '1.5', '99999999999']) {
      const res = await getHub(token, bad);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().msg, bad).toMatch(/数据中心编号/);
    }
    const cases: [unknown, RegExp][] = [
      [{ center_id: id }, /名称/],
      [{ center_id: String(id), name: 'x' }, /center_id/],
      [{ center_id: id, name: 'x', extra: 1 }, /不支持的参数：extra/],
      [{ center_id: id, name: 'x'.repeat(65) }, /不能超过 64/],
      [{ center_id: id, name: 'a\u0007b' }, /控制字符/],
      [{ center_id: id, name: '   ' }, /名称/],
      [{ center_id: 1.5, name: 'x' }, /center_id/],
      [{ center_id: 99_999_999_999, name: 'x' }, /center_id/],
    ];
    for (const [payload, msg] of cases) {
      const res = await activate(token, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ code: 400, data: null });
      expect(res.json().msg, JSON.stringify(payload)).toMatch(msg);
      expect(res.json().msg).toMatch(/[\u4e00-\u9fa5]/);
    }
    expect((await getHub(token, id)).json().data).toBeNull();
  });

  it('finishes an activation whose job crashed after making the folder, and tolerates running twice', async () => {
    const { token, user } = await createUser(t, { host: '127.0.0.1' });
    const dc = starlakeDcs[1]!;
    expect((await activate(token, { center_id: dc.dataCenterId, name: 'retry' }, '127.0.0.1')).statusCode).toBe(200);
    const dir = path.join(dataDir, 'files', 'datahub', String(user.tenantId), String(user.id), String(dc.dataCenterId));
    fs.mkdirSync(dir, { recursive: true }); // the first attempt got this far
    fs.writeFileSync(path.join(dir, 'kept.txt'), 'user data');

    await t.container.jobs.runDue();
    const first = (await getHub(token, dc.dataCenterId, '127.0.0.1')).json().data;
    expect(first).toMatchObject({ status: 1, name: 'retry' });
    expect(fs.readFileSync(path.join(dir, 'kept.txt'), 'utf8')).toBe('user data');

    const [row] = await t.container.db.select().from(datahubs).where(eq(datahubs.userId, user.id));
    await t.container.datahub.runActivation({ datahubId: row!.id }); // a redelivered job
    expect((await getHub(token, dc.dataCenterId, '127.0.0.1')).json().data).toEqual(first);
    await expect(t.container.datahub.runActivation({ datahubId: 'nope' })).rejects.toThrow(/bad payload/);
  });

  it('lists the datahub routes in the OpenAPI document', async () => {
    const res = await t.request({ method: 'GET', url: '/api/docs/json' });
    expect(Object.keys(res.json().paths)).toEqual(
      expect.arrayContaining(['/api/v1/ai-web/console/datacenters', '/api/v1/ai-web/datahub/{dataCenterId}', '/api/v1/ai-web/datahub']),
    );
  });
});
