import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { QUESTION_HOURLY_LIMIT } from '@suanli/contract/question';
import { questions } from '../../src/db/schema/question.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser, randomPhone, signInSeededOperator } from '../helpers/factories.ts';

const URL = '/api/v1/questions/';

describe.each(engines)('contact-sales questions (%s)', (engine) => {
  let t: TestApp;
  // A clock the tests move forward: ordering and the hourly window don't depend on wall time.
  let offsetMs = 0;
  const clock = () => new Date(Date.now() + offsetMs);
  const tick = (ms = 1000) => {
    offsetMs += ms;
  };

  beforeAll(async () => {
    t = await buildTestApp({ engine, clock });
  });
  afterAll(() => t.close());

  const body = (over: Record<string, unknown> = {}) => ({ name: '张三', phone: randomPhone(), content: '需要 8 卡 A800 训练集群，周期三个月', ...over });
  const post = (payload: unknown, opts: { host?: string; token?: string } = {}) => {
    tick();
    return t.request({ method: 'POST', url: URL, payload: payload as Record<string, unknown>, ...opts });
  };
  const rowById = async (id: string) => (await t.container.db.select().from(questions).where(sql`${questions.id} = ${id}`))[0];

  describe('POST /api/v1/questions/', () => {
    it('stores a minimal request of a signed-out visitor under the tenant of the host', async () => {
      const res = await post(body());
      expect(res.statusCode).toBe(200);
      const json = res.json();
      expect(json).toMatchObject({ code: 200, msg: '操作成功', data: { id: expect.any(String) } });
      const row = await rowById(json.data.id);
      const tenant = await t.container.tenants.resolve('localhost');
      expect(row).toMatchObject({ tenantId: tenant.id, userId: null, name: '张三', company: null, email: null, gpuType: null, gpuCount: null });
    });

    it('ties the request to the signed-in user and keeps every field, trimmed', async () => {
      const { token, user } = await createUser(t);
      const phone = randomPhone();
      const res = await post(
        { name: '  李四 ', phone: ` ${phone} `, company: '某某大学 AI 实验室', email: 'lisi@example.edu.cn', gpuType: 'H800', gpuCount: 64, content: '长期租用' },
        { token },
      );
      expect(res.statusCode).toBe(200);
      expect(await rowById(res.json().data.id)).toMatchObject({
        userId: user.id,
        name: '李四',
        phone,
        company: '某某大学 AI 实验室',
        email: 'lisi@example.edu.cn',
        gpuType: 'H800',
        gpuCount: 64,
        content: '长期租用',
      });
    });

    it('accepts the path without the trailing slash too', async () => {
      tick();
      const res = await t.request({ method: 'POST', url: '/api/v1/questions', payload: body() });
      expect(res.statusCode).toBe(200);
    });

    it('treats an invalid token as signed out instead of refusing the lead', async () => {
      const res = await post(body(), { token: 'not-a-real-token' });
      expect(res.statusCode).toBe(200);
      expect((await rowById(res.json().data.id))?.userId).toBeNull();
    });

    const long = (n: number) => '字'.repeat(n);
    const invalid: [string, Record<string, unknown>, string | RegExp][] = [
      ['missing name', { name: undefined }, '请输入联系人姓名'],
      ['blank name', { name: '   ' }, '请输入联系人姓名'],
      ['name of the wrong type', { name: 42 }, '请输入联系人姓名'],
      ['name too long', { name: long(33) }, '联系人姓名不能超过 32 个字符'],
      ['name with control characters', { name: 'a\u0007b' }, '联系人姓名包含不可见的控制字符'],
      ['missing phone', { phone: undefined }, '请输入手机号'],
      ['bad phone', { phone: '12345678901' }, '手机号格式不正确，请输入 11 位中国大陆手机号'],
      ['phone with letters', { phone: '1380013800a' }, '手机号格式不正确，请输入 11 位中国大陆手机号'],
      ['phone as a number', { phone: 13800138000 }, '请输入手机号'],
      ['missing content', { content: undefined }, '请输入需求描述'],
      ['content too long', { content: long(2001) }, '需求描述不能超过 2000 个字符'],
      ['company too long', { company: long(65) }, '公司名称不能超过 64 个字符'],
      ['empty company', { company: '' }, '请输入公司名称'],
      ['bad email', { email: 'not-an-email' }, '邮箱格式不正确'],
      ['email too long', { email: `${'a'.repeat(120)}@example.com` }, '邮箱不能超过 128 个字符'],
      ['gpu type too long', { gpuType: long(65) }, '需求的 GPU 型号不能超过 64 个字符'],
      ['gpu count as a string', { gpuCount: '8' }, 'GPU 数量必须是数字'],
      ['fractional gpu count', { gpuCount: 1.5 }, 'GPU 数量必须是整数'],
      ['zero gpu count', { gpuCount: 0 }, 'GPU 数量至少为 1'],
      ['huge gpu count', { gpuCount: 100001 }, 'GPU 数量过大'],
      ['unknown field', { userId: 1 }, '不支持的参数：userId'],
    ];
    it.each(invalid)('refuses %s with a Chinese message naming the problem', async (_label, over, msg) => {
      const before = await t.container.db.select({ n: sql<number>`count(*)::int` }).from(questions);
      const res = await post(body(over));
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 400, msg, data: null });
      const after = await t.container.db.select({ n: sql<number>`count(*)::int` }).from(questions);
      expect(after[0]?.n).toBe(before[0]?.n);
    });

    it('refuses a body that is not JSON or not an object', async () => {
      tick();
      const text = await t.request({ method: 'POST', url: URL, payload: '{"name":', headers: { 'content-type': 'application/json' } });
      expect(text.statusCode).toBe(400);
      expect(text.json().msg).toBe('请求体不是合法的 JSON');
      const arr = await post([body()]);
      expect(arr.statusCode).toBe(400);
    });

    it('stores SQL and script injection text unchanged, and the table survives', async () => {
      const nasty = {
        name: "Bob'); DROP TABLE questions;--",
        company: '<img src=x onerror=alert(1)>',
        gpuType: "' OR '1'='1",
        content: '<script>alert("xss")</script>\n${7*7} {{7*7}} %s \\x00 🙂',
      };
      const res = await post(body(nasty));
      expect(res.statusCode).toBe(200);
      expect(await rowById(res.json().data.id)).toMatchObject(nasty);
      const op = await signInSeededOperator(t);
      const list = await t.request({ method: 'GET', url: '/api/v1/operate/questions?pageSize=100', token: op.token });
      expect(list.json().data.list.find((q: { id: string }) => q.id === res.json().data.id)).toMatchObject(nasty);
    });
  });

  describe('rate limit', () => {
    it(`allows ${QUESTION_HOURLY_LIMIT} requests an hour per phone, then 429 until the hour has passed`, async () => {
      const phone = randomPhone();
      for (let i = 0; i < QUESTION_HOURLY_LIMIT; i++) expect((await post(body({ phone }))).statusCode).toBe(200);
      const refused = await post(body({ phone }));
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({ code: 429, data: null, msg: expect.stringMatching(/^提交过于频繁：每小时最多提交 5 次咨询，请 \d+ 分钟后再试$/) });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      // Another phone, and the same phone on another tenant, are not affected.
      expect((await post(body())).statusCode).toBe(200);
      expect((await post(body({ phone }), { host: '127.0.0.1' })).statusCode).toBe(200);
      tick(3_600_000);
      expect((await post(body({ phone }))).statusCode).toBe(200);
    });

    it('counts a signed-in user across phones', async () => {
      const { token } = await createUser(t);
      for (let i = 0; i < QUESTION_HOURLY_LIMIT; i++) expect((await post(body(), { token })).statusCode).toBe(200);
      expect((await post(body(), { token })).statusCode).toBe(429);
      // Someone else is unaffected.
      expect((await post(body())).statusCode).toBe(200);
    });

    it('holds under parallel submissions', async () => {
      const phone = randomPhone();
      tick();
      const results = await Promise.all(Array.from({ length: QUESTION_HOURLY_LIMIT + 3 }, () => t.request({ method: 'POST', url: URL, payload: body({ phone }) })));
      const codes = results.map((r) => r.statusCode).sort();
      expect(codes.filter((c) => c === 200)).toHaveLength(QUESTION_HOURLY_LIMIT);
      expect(codes.filter((c) => c === 429)).toHaveLength(3);
    });
  });

  describe('GET /api/v1/operate/questions', () => {
    it('needs a session (401) and the operator role (403)', async () => {
      const anon = await t.request({ method: 'GET', url: '/api/v1/operate/questions' });
      expect(anon.statusCode).toBe(401);
      expect(anon.json()).toMatchObject({ code: 401, data: null });
      const { token } = await createUser(t);
      const user = await t.request({ method: 'GET', url: '/api/v1/operate/questions', token });
      expect(user.statusCode).toBe(403);
      expect(user.json()).toMatchObject({ code: 403, msg: '没有权限执行该操作', data: null });
    });

    it("lists the tenant's requests newest first, paged, and never another tenant's", async () => {
      // A fresh tenant view: the starlake tenant (127.0.0.1) gets three requests of its own.
      const host = '127.0.0.1';
      const op = await signInSeededOperator(t, host);
      const before = (await t.request({ method: 'GET', url: '/api/v1/operate/questions', host, token: op.token })).json().data.total as number;
      const names = ['第一位', '第二位', '第三位'];
      for (const name of names) expect((await post(body({ name }), { host })).statusCode).toBe(200);
      // Noise on the other tenants.
      await post(body({ name: '别家客户' }));
      await post(body({ name: '别家客户' }), { host: '127.0.0.2' });

      const page1 = await t.request({ method: 'GET', url: '/api/v1/operate/questions?page=1&pageSize=2', host, token: op.token });
      expect(page1.statusCode).toBe(200);
      const d1 = page1.json().data;
      expect(d1.total).toBe(before + 3);
      expect(d1.list.map((q: { name: string }) => q.name)).toEqual(['第三位', '第二位']);
      expect(Object.keys(d1.list[0]).sort()).toEqual(['company', 'content', 'createdAt', 'email', 'fromUser', 'gpuCount', 'gpuType', 'id', 'name', 'phone'].sort());
      expect(d1.list[0]).toMatchObject({ fromUser: false, company: null, createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
      const page2 = await t.request({ method: 'GET', url: '/api/v1/operate/questions?page=2&pageSize=2', host, token: op.token });
      expect(page2.json().data.list[0].name).toBe('第一位');

      const all = await t.request({ method: 'GET', url: '/api/v1/operate/questions?pageSize=100', host, token: op.token });
      expect(all.json().data.list.some((q: { name: string }) => q.name === '别家客户')).toBe(false);
    });

    it("doesn't accept an operator's token on another tenant's host", async () => {
      const op = await signInSeededOperator(t, 'localhost');
      const res = await t.request({ method: 'GET', url: '/api/v1/operate/questions', host: '127.0.0.2', token: op.token });
      expect(res.statusCode).toBe(401);
    });

    it('validates paging', async () => {
      const op = await signInSeededOperator(t);
      const big = await t.request({ method: 'GET', url: '/api/v1/operate/questions?pageSize=101', token: op.token });
      expect(big.statusCode).toBe(400);
      expect(big.json().msg).toBe('每页最多 100 条');
      const zero = await t.request({ method: 'GET', url: '/api/v1/operate/questions?page=0', token: op.token });
      expect(zero.statusCode).toBe(400);
      expect(zero.json().msg).toBe('页码必须是正整数');
    });
  });
});
