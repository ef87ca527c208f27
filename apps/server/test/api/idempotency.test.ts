import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { createTestClock } from '../helpers/clock.ts';
import { engines } from '../helpers/db.ts';
import { createUser, randomPhone } from '../helpers/factories.ts';
import { datahubs } from '../../src/db/schema/datahub.ts';
import { idempotencyKeys } from '../../src/db/schema/idempotency.ts';
import { jobs } from '../../src/db/schema/job.ts';
import { questions } from '../../src/db/schema/question.ts';
import { users } from '../../src/db/schema/user.ts';
import { conflict, tooMany } from '../../src/lib/errors.ts';
import { ok } from '../../src/http/envelope.ts';
import { canonicalJson, IdempotencyMessages, openAnswer, sealAnswer } from '../../src/http/plugins/idempotency.ts';

const DATAHUB = '/api/v1/ai-web/datahub';
const QUESTIONS = '/api/v1/questions/';
const PASSWORD = 'Passw0rd2026';
const HOUR_MS = 3_600_000;

type Dc = { dataCenterId: number };

const replayed = (res: LightMyRequestResponse) => res.headers['idempotent-replayed'] === 'true';
const withoutRequestId = (body: string) => {
  const { requestId: _r, ...rest } = JSON.parse(body) as Record<string, unknown>;
  return rest;
};

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('canonical request and sealed answers', () => {
  it('ignores key order at every depth and drops undefined like JSON', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: undefined }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"z":1}]},"b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('opens an answer only with the key and scope it was sealed with', () => {
    const sealed = sealAnswer('{"token":"secret"}', 'k1', 'scope');
    expect(sealed).not.toContain('secret');
    expect(openAnswer(sealed, 'k1', 'scope')).toBe('{"token":"secret"}');
    expect(() => openAnswer(sealed, 'k2', 'scope')).toThrow();
    expect(() => openAnswer(sealed, 'k1', 'other')).toThrow();
  });
});

describe.each(engines)('Idempotency-Key on %s', (engine) => {
  let t: TestApp;
  const clock = createTestClock(new Date());
  let localDcs: Dc[];
  const calls = { flaky: 0, limited: 0, refused: 0, slow: 0, items: 0 };
  let gate = deferred();
  let slowStarted = deferred();

  const activate = (token: string, payload: object, key?: string) =>
    t.request({ method: 'POST', url: DATAHUB, token, payload, headers: key === undefined ? {} : { 'idempotency-key': key } });
  const ask = (payload: object, opts: { key?: string; token?: string; host?: string } = {}) =>
    t.request({ method: 'POST', url: QUESTIONS, payload, token: opts.token, host: opts.host, headers: opts.key === undefined ? {} : { 'idempotency-key': opts.key } });
  const question = (over: object = {}) => ({ name: '张三', phone: randomPhone(), content: '需要 8 卡 A800', ...over });
  const post = (url: string, key: string, payload: object = {}) => t.request({ method: 'POST', url, payload, headers: { 'idempotency-key': key } });
  const rowsOf = (route: string) => t.container.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.route, route));

  beforeAll(async () => {
    t = await buildTestApp({ engine, clock });
    // Flagged routes whose answers the tests control; added before the app's first request makes it ready.
    const config = { idempotent: true };
    t.app.post('/test/idem/flaky', { config }, async () => {
      calls.flaky++;
      if (calls.flaky === 1) throw new Error('database went away');
      return ok({ calls: calls.flaky });
    });
    t.app.post('/test/idem/limited', { config }, async () => {
      calls.limited++;
      throw tooMany();
    });
    t.app.post('/test/idem/refused', { config }, async () => {
      calls.refused++;
      throw conflict(`第 ${calls.refused} 次：余额不足`);
    });
    t.app.post('/test/idem/slow', { config }, async () => {
      calls.slow++;
      slowStarted.resolve();
      await gate.promise;
      return ok({ calls: calls.slow });
    });
    t.app.post<{ Params: { id: string } }>('/test/idem/items/:id', { config }, async (req) => {
      calls.items++;
      return ok({ id: req.params.id, calls: calls.items });
    });
    const { token } = await createUser(t);
    localDcs = (await t.request({ method: 'GET', url: '/api/v1/ai-web/console/datacenters', token })).json().data as Dc[];
  });
  afterAll(() => t.close());

  describe('datahub activation', () => {
    it('replays the first answer with Idempotent-Replayed, creating one row and one job', async () => {
      const { token, user } = await createUser(t);
      const payload = { center_id: localDcs[0]!.dataCenterId, name: '训练数据' };
      const first = await activate(token, payload, 'act-1');
      expect(first.statusCode, first.body).toBe(200);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(first.json()).toMatchObject({ code: 200, data: { name: '训练数据', status: 0 } });

      // Same request again, keys of the body in another order: the same answer, byte for byte.
      const again = await activate(token, { name: '训练数据', center_id: localDcs[0]!.dataCenterId }, 'act-1');
      expect(again.statusCode).toBe(200);
      expect(replayed(again)).toBe(true);
      expect(again.body).toBe(first.body);
      expect(again.headers['content-type']).toBe(first.headers['content-type']);

      const rows = await t.container.db.select().from(datahubs).where(eq(datahubs.userId, user.id));
      expect(rows).toHaveLength(1);
      const queued = (await t.container.db.select().from(jobs).where(eq(jobs.kind, 'datahub.activate'))).filter((j) => j.payload.datahubId === rows[0]!.id);
      expect(queued).toHaveLength(1);
    });

    it('leaves requests without a key, or with a new key, to the route: a second activation is a 409', async () => {
      const { token } = await createUser(t);
      const payload = { center_id: localDcs[1]!.dataCenterId, name: 'a' };
      expect((await activate(token, payload)).statusCode).toBe(200);
      const plain = await activate(token, payload);
      expect(plain.statusCode).toBe(409);
      expect(plain.json().msg).toContain('正在激活中');
      const fresh = await activate(token, payload, 'another-key');
      expect(fresh.statusCode).toBe(409);
      expect(replayed(fresh)).toBe(false);
      expect(fresh.json().msg).toContain('正在激活中');
    });

    it('answers 422 when the key comes back with a different body, and changes nothing', async () => {
      const { token, user } = await createUser(t);
      const dc = localDcs[2]!.dataCenterId;
      expect((await activate(token, { center_id: dc, name: 'first' }, 'act-2')).statusCode).toBe(200);
      const other = await activate(token, { center_id: dc, name: 'second' }, 'act-2');
      expect(other.statusCode).toBe(422);
      expect(other.json()).toMatchObject({ code: 422, msg: IdempotencyMessages.keyReused, data: null, requestId: expect.any(String) });
      expect(replayed(other)).toBe(false);
      const rows = await t.container.db.select().from(datahubs).where(eq(datahubs.userId, user.id));
      expect(rows.map((r) => r.name)).toEqual(['first']);
    });

    it("keeps users apart: user B's request with user A's key runs for B", async () => {
      const a = await createUser(t);
      const b = await createUser(t);
      const payload = { center_id: localDcs[0]!.dataCenterId, name: 'shared' };
      const ra = await activate(a.token, payload, 'same-key');
      const rb = await activate(b.token, payload, 'same-key');
      expect(ra.statusCode).toBe(200);
      expect(rb.statusCode).toBe(200);
      expect(replayed(rb)).toBe(false);
      for (const u of [a.user, b.user]) expect(await t.container.db.select().from(datahubs).where(eq(datahubs.userId, u.id))).toHaveLength(1);
    });

    it('lets exactly one of ten concurrent requests with one key through', async () => {
      const { token, user } = await createUser(t);
      const payload = { center_id: localDcs[1]!.dataCenterId, name: 'race' };
      const results = await Promise.all(Array.from({ length: 10 }, () => activate(token, payload, 'race-key')));
      const bodies = results.map((r) => `${r.statusCode} ${r.body}`).join('\n');
      const ran = results.filter((r) => r.statusCode === 200 && !replayed(r));
      expect(ran, bodies).toHaveLength(1);
      for (const r of results) {
        if (r.statusCode === 200) expect(r.body).toBe(ran[0]!.body);
        else {
          expect(r.statusCode, bodies).toBe(409);
          expect(r.json().msg).toBe(IdempotencyMessages.inProgress);
        }
      }
      const rows = await t.container.db.select().from(datahubs).where(eq(datahubs.userId, user.id));
      expect(rows).toHaveLength(1);
      const queued = (await t.container.db.select().from(jobs).where(eq(jobs.kind, 'datahub.activate'))).filter((j) => j.payload.datahubId === rows[0]!.id);
      expect(queued).toHaveLength(1);
      // Once the first finished, the key replays.
      const later = await activate(token, payload, 'race-key');
      expect(replayed(later)).toBe(true);
      expect(later.body).toBe(ran[0]!.body);
    });

    it('refuses a malformed key with 400 before anything happens', async () => {
      const { token, user } = await createUser(t);
      for (const bad of ['', 'x'.repeat(129), 'clé', 'a\tb']) {
        const res = await activate(token, { center_id: localDcs[0]!.dataCenterId, name: 'bad' }, bad);
        expect(res.statusCode, JSON.stringify(bad)).toBe(400);
        expect(res.json()).toMatchObject({ code: 400, data: null });
        expect(res.json().msg).toMatch(/^Idempotency-Key 格式不正确/);
      }
      expect(await t.container.db.select().from(datahubs).where(eq(datahubs.userId, user.id))).toHaveLength(0);
      // The longest key allowed, with spaces and punctuation, is fine.
      const longest = 'order #42 / {a:b} ~'.padEnd(128, '!');
      expect((await activate(token, { center_id: localDcs[0]!.dataCenterId, name: 'ok' }, longest)).statusCode).toBe(200);
    });
  });

  describe('questions', () => {
    it('replays a submission: the same id, one row', async () => {
      const body = question();
      const first = await ask(body, { key: 'q-1' });
      expect(first.statusCode, first.body).toBe(200);
      const again = await ask(body, { key: 'q-1' });
      expect(replayed(again)).toBe(true);
      expect(again.json().data.id).toBe(first.json().data.id);
      const rows = await t.container.db.select().from(questions).where(eq(questions.phone, body.phone));
      expect(rows).toHaveLength(1);
    });

    it('keeps a visitor, a signed-in user and another tenant apart', async () => {
      const body = question();
      const { token } = await createUser(t);
      const ids = [
        (await ask(body, { key: 'q-2' })).json().data.id,
        (await ask(body, { key: 'q-2', token })).json().data.id,
        (await ask(body, { key: 'q-2', host: '127.0.0.1' })).json().data.id,
      ];
      expect(new Set(ids).size).toBe(3);
      expect(await t.container.db.select().from(questions).where(eq(questions.phone, body.phone))).toHaveLength(3);
    });

    it('forgets keys after 24 hours and clears old rows', async () => {
      const body = question();
      const first = (await ask(body, { key: 'q-3' })).json().data.id;
      clock.advance(23 * HOUR_MS);
      const replay = await ask(body, { key: 'q-3' });
      expect(replayed(replay)).toBe(true);
      expect(replay.json().data.id).toBe(first);

      clock.advance(HOUR_MS + 60_000);
      const fresh = await ask(body, { key: 'q-3' });
      expect(fresh.statusCode).toBe(200);
      expect(replayed(fresh)).toBe(false);
      expect(fresh.json().data.id).not.toBe(first);
      // The cleanup that ran with that request took every expired row.
      const expired = await t.container.db
        .select({ n: sql<number>`count(*)::int` })
        .from(idempotencyKeys)
        .where(sql`${idempotencyKeys.expiresAt} < ${clock().toISOString()}`);
      expect(expired[0]!.n).toBe(0);
    });
  });

  describe('register over the encrypted channel', () => {
    it('replays the same token, creates one user, and keeps neither key nor token in clear', async () => {
      const phone = randomPhone();
      clock.advance(61_000);
      expect((await t.request({ method: 'POST', url: '/user/send-code', payload: { phone, purpose: 'register' } })).statusCode).toBe(200);
      const code = t.sms.lastCode(phone);
      const register = () =>
        t.request({ method: 'POST', url: '/user/register', payload: { phone, code, password: PASSWORD }, encrypted: true, headers: { 'idempotency-key': 'reg-k1' } });

      const first = await register();
      expect(first.statusCode, first.body).toBe(200);
      expect(first.headers['encrypt-key']).toBeDefined();
      const token = first.json().data.token as string;
      expect(token).toEqual(expect.any(String));

      // A new AES key, so new ciphertext: the decrypted body is what is compared.
      const again = await register();
      expect(again.statusCode).toBe(200);
      expect(replayed(again)).toBe(true);
      expect(again.headers['encrypt-key']).toBeDefined();
      expect(again.headers['content-type']).toMatch(/^text\/plain/);
      expect(again.json().data.token).toBe(token);
      expect(await t.container.db.select().from(users).where(eq(users.phone, phone))).toHaveLength(1);

      const [row] = await rowsOf('/user/register');
      expect(row).toMatchObject({ status: 'completed', statusCode: 200, scope: 'anonymous' });
      expect(row!.keyHash).not.toContain('reg-k1');
      expect(row!.response).not.toContain(token);
      expect(row!.response).not.toContain('操作成功');

      // The same key with another body is refused, encrypted too.
      const other = await t.request({
        method: 'POST',
        url: '/user/register',
        payload: { phone, code, password: `${PASSWORD}x` },
        encrypted: true,
        headers: { 'idempotency-key': 'reg-k1' },
      });
      expect(other.statusCode).toBe(422);
      expect(other.headers['encrypt-key']).toBeDefined();
      expect(other.json().msg).toBe(IdempotencyMessages.keyReused);
    });
  });

  describe('what is stored', () => {
    it('does not store a 5xx: the key is freed and the retry runs', async () => {
      const failed = await post('/test/idem/flaky', 'f-1');
      expect(failed.statusCode).toBe(500);
      expect(await rowsOf('/test/idem/flaky')).toHaveLength(0);
      const retried = await post('/test/idem/flaky', 'f-1');
      expect(retried.statusCode).toBe(200);
      expect(retried.json().data).toEqual({ calls: 2 });
      const replay = await post('/test/idem/flaky', 'f-1');
      expect(replayed(replay)).toBe(true);
      expect(replay.json().data).toEqual({ calls: 2 });
      expect(calls.flaky).toBe(2);
    });

    it('stores a 4xx answer and replays it, but not a 429', async () => {
      const first = await post('/test/idem/refused', 'r-1');
      expect(first.statusCode).toBe(409);
      const again = await post('/test/idem/refused', 'r-1');
      expect(again.statusCode).toBe(409);
      expect(replayed(again)).toBe(true);
      expect(again.body).toBe(first.body);
      expect(calls.refused).toBe(1);

      expect((await post('/test/idem/limited', 'l-1')).statusCode).toBe(429);
      const limited = await post('/test/idem/limited', 'l-1');
      expect(limited.statusCode).toBe(429);
      expect(replayed(limited)).toBe(false);
      expect(calls.limited).toBe(2);
    });

    it('counts path parameters as part of the request', async () => {
      expect((await post('/test/idem/items/1', 'i-1')).json().data).toEqual({ id: '1', calls: 1 });
      const other = await post('/test/idem/items/2', 'i-1');
      expect(other.statusCode).toBe(422);
      expect(replayed(await post('/test/idem/items/1', 'i-1'))).toBe(true);
      expect(calls.items).toBe(1);
    });

    it('answers 409 while the first request runs, then replays its answer', async () => {
      gate = deferred();
      slowStarted = deferred();
      const first = post('/test/idem/slow', 's-1');
      await slowStarted.promise;
      const during = await post('/test/idem/slow', 's-1');
      expect(during.statusCode).toBe(409);
      expect(withoutRequestId(during.body)).toEqual({ code: 409, msg: IdempotencyMessages.inProgress, data: null });
      expect(during.headers['retry-after']).toBe('1');
      const differs = await post('/test/idem/slow', 's-1', { other: true });
      expect(differs.statusCode).toBe(422);
      gate.resolve();
      expect((await first).json().data).toEqual({ calls: 1 });
      const after = await post('/test/idem/slow', 's-1');
      expect(replayed(after)).toBe(true);
      expect(calls.slow).toBe(1);
    });

    it('takes over a reservation whose lease lapsed (its request stopped renewing it)', async () => {
      gate = deferred();
      slowStarted = deferred();
      const before = calls.slow;
      const stuck = post('/test/idem/slow', 's-2');
      await slowStarted.promise;
      clock.advance(6 * 60_000);
      slowStarted = deferred();
      const second = post('/test/idem/slow', 's-2');
      await slowStarted.promise;
      expect(calls.slow).toBe(before + 2);
      gate.resolve();
      const [a, b] = await Promise.all([stuck, second]);
      expect(a.statusCode).toBe(200);
      expect(b.statusCode).toBe(200);
      // The answer of the request that holds the reservation is the one kept.
      const replay = await post('/test/idem/slow', 's-2');
      expect(replay.json().data).toEqual({ calls: before + 2 });
      const rows = await t.container.db
        .select()
        .from(idempotencyKeys)
        .where(and(eq(idempotencyKeys.route, '/test/idem/slow'), eq(idempotencyKeys.status, 'completed')));
      expect(rows).toHaveLength(2);
    });
  });

  it('documents the header on flagged routes in the OpenAPI document', async () => {
    const doc = (await t.request({ method: 'GET', url: '/api/docs/json' })).json();
    for (const p of ['/api/v1/ai-web/datahub', '/api/v1/questions/', '/user/register']) expect(doc.paths[p].post.description, p).toContain('Idempotency-Key');
    expect(doc.paths['/user/login/password'].post.description ?? '').not.toContain('Idempotency-Key');
  });
});
