import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageStats } from '@suanli/contract/llm';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { addApiKey } from '../helpers/llm.ts';
import { llmUsage } from '../../src/db/schema/llm.ts';
import { csvField, yuan } from '../../src/modules/llm/usage.service.ts';

type UsageInsert = typeof llmUsage.$inferInsert;

describe('CSV helpers', () => {
  it('formats units as yuan and neutralises formulas', () => {
    expect(yuan(0)).toBe('0.0000');
    expect(yuan(12_345)).toBe('1.2345');
    expect(yuan(10_000_001)).toBe('1000.0001');
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('plain')).toBe('plain');
    expect(csvField(-3)).toBe('-3');
  });
});

describe.each(engines)('LLM usage statistics (%s)', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ engine });
  });
  afterAll(async () => {
    await t?.close();
  });

  const row = (v: Partial<UsageInsert> & Pick<UsageInsert, 'tenantId' | 'userId' | 'createdAt'>): UsageInsert => ({
    keyId: null,
    source: v.keyId ? 'api' : 'chat',
    model: 'qwen-7b',
    promptTokens: 10,
    completionTokens: 20,
    cost: 100,
    latencyMs: 50,
    status: 200,
    ...v,
  });
  const stats = (token: string, body: object, host?: string) => t.request({ method: 'POST', url: '/api/v1/llm/usage/stats', token, payload: body, host });
  const range = { startTime: '2025-03-01T00:00:00+08:00', endTime: '2025-03-03T00:00:00+08:00' };

  /** A user with calls on both sides of midnight in Shanghai (16:00 UTC), a key, chat calls and an error. */
  async function seeded() {
    const { token, user } = await createUser(t);
    const o = { tenantId: user.tenantId, userId: user.id };
    const key = await addApiKey(t, { ...o, name: '=生产密钥' });
    await t.container.db.insert(llmUsage).values([
      // 2025-03-01 23:30 in Shanghai, 15:30 UTC.
      row({ ...o, keyId: key.id, createdAt: new Date('2025-03-01T15:30:00Z'), promptTokens: 100, completionTokens: 200, cost: 1_000 }),
      // 2025-03-02 00:30 in Shanghai, still 2025-03-01 in UTC.
      row({ ...o, keyId: key.id, createdAt: new Date('2025-03-01T16:30:00Z'), promptTokens: 1, completionTokens: 2, cost: 3 }),
      row({ ...o, keyId: key.id, createdAt: new Date('2025-03-01T17:00:00Z'), status: 502, errorCode: 'upstream_error', promptTokens: 0, completionTokens: 0, cost: 0 }),
      // Chat (no key), one stopped by the user (499: not an error).
      row({ ...o, createdAt: new Date('2025-03-01T10:00:00Z'), cost: 7, status: 499 }),
      row({ ...o, createdAt: new Date('2025-03-01T10:05:00Z'), model: 'deepseek', cost: 5 }),
      // Outside the range.
      row({ ...o, createdAt: new Date('2025-02-28T15:59:59Z'), cost: 99_999 }),
    ]);
    return { token, user, key };
  }

  it('groups by day in Asia/Shanghai (default) and in UTC, by model and key, with totals', async () => {
    const { token, key } = await seeded();
    // Another user's calls in the same range never show.
    const other = await createUser(t);
    await t.container.db.insert(llmUsage).values(row({ tenantId: other.user.tenantId, userId: other.user.id, createdAt: new Date('2025-03-01T12:00:00Z'), cost: 5_555 }));

    const sh = await stats(token, range);
    expect(sh.statusCode, sh.body).toBe(200);
    const data = sh.json<{ data: UsageStats }>().data;
    expect(data.rows).toEqual([
      { day: '2025-03-01', model: 'deepseek', keyId: null, keyName: '控制台对话', requests: 1, errors: 0, promptTokens: 10, completionTokens: 20, cost: 5 },
      { day: '2025-03-01', model: 'qwen-7b', keyId: null, keyName: '控制台对话', requests: 1, errors: 0, promptTokens: 10, completionTokens: 20, cost: 7 },
      { day: '2025-03-01', model: 'qwen-7b', keyId: key.id, keyName: '=生产密钥', requests: 1, errors: 0, promptTokens: 100, completionTokens: 200, cost: 1_000 },
      { day: '2025-03-02', model: 'qwen-7b', keyId: key.id, keyName: '=生产密钥', requests: 2, errors: 1, promptTokens: 1, completionTokens: 2, cost: 3 },
    ]);
    expect(data.totals).toEqual({ requests: 5, errors: 1, promptTokens: 121, completionTokens: 242, cost: 1_015 });

    const utc = (await stats(token, { ...range, timeZone: 'UTC' })).json<{ data: UsageStats }>().data;
    expect(utc.rows.filter((r) => r.keyId === key.id)).toEqual([
      { day: '2025-03-01', model: 'qwen-7b', keyId: key.id, keyName: '=生产密钥', requests: 3, errors: 1, promptTokens: 101, completionTokens: 202, cost: 1_003 },
    ]);
    expect(utc.totals).toEqual(data.totals);
  });

  it('filters by model and key; a key of another user answers 404 like a missing one', async () => {
    const { token, key } = await seeded();
    const byModel = (await stats(token, { ...range, model: 'deepseek' })).json<{ data: UsageStats }>().data;
    expect(byModel.rows.map((r) => r.model)).toEqual(['deepseek']);
    expect(byModel.totals.cost).toBe(5);
    const byKey = (await stats(token, { ...range, keyId: key.id })).json<{ data: UsageStats }>().data;
    expect(byKey.rows.every((r) => r.keyId === key.id)).toBe(true);
    expect(byKey.totals).toMatchObject({ requests: 3, cost: 1_003 });

    const other = await seeded();
    const foreign = await stats(token, { ...range, keyId: other.key.id });
    const missing = await stats(token, { ...range, keyId: '00000000-0000-4000-8000-000000000000' });
    expect(foreign.statusCode).toBe(404);
    expect({ ...foreign.json(), requestId: 0 }).toEqual({ ...missing.json(), requestId: 0 });
    // Another tenant's user asking about this user's key.
    const stranger = await createUser(t, { host: '127.0.0.1' });
    expect((await stats(stranger.token, { ...range, keyId: key.id }, '127.0.0.1')).statusCode).toBe(404);
    expect((await stats(stranger.token, range, '127.0.0.1')).json<{ data: UsageStats }>().data.rows).toEqual([]);
  });

  it('refuses unknown zones, reversed and too long ranges with 400 in Chinese; 401 without a session', async () => {
    const { token } = await createUser(t);
    for (const zone of ['Mars/Olympus', '+08:00', 'UTC+8', "Asia/Shanghai'; drop table llm_usage; --", '', 'x'.repeat(64)]) {
      const res = await stats(token, { ...range, timeZone: zone });
      expect(res.statusCode, zone).toBe(400);
      expect(res.json().msg).toMatch(/时区 .* 无效，应为 IANA 时区名/);
    }
    const reversed = await stats(token, { startTime: range.endTime, endTime: range.startTime });
    expect(reversed.statusCode).toBe(400);
    expect(reversed.json().msg).toMatch(/开始时间不能晚于结束时间/);
    const long = await stats(token, { startTime: '2024-01-01T00:00:00Z', endTime: '2025-02-01T00:00:00Z' });
    expect(long.statusCode).toBe(400);
    expect(long.json().msg).toMatch(/时间范围不能超过 366 天/);
    expect((await stats(token, { startTime: 'yesterday', endTime: range.endTime })).statusCode).toBe(400);
    expect((await stats(token, { ...range, keyId: 'nope' })).json().msg).toMatch(/密钥 ID 格式不正确/);
    expect((await stats('', range)).statusCode).toBe(401);
    expect((await stats(token, { ...range, timeZone: 'America/New_York' })).statusCode).toBe(200);
  });

  it('exports the same rows as CSV: BOM, Chinese header, an attachment, formulas neutralised', async () => {
    const { token, key } = await seeded();
    const qs = new URLSearchParams(range).toString();
    const res = await t.request({ method: 'GET', url: `/api/v1/llm/usage/export?${qs}&timeZone=Asia%2FShanghai`, token });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="llm-usage-2025-03-01-2025-03-03.csv"');
    expect(res.rawPayload.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    const lines = res.rawPayload.subarray(3).toString('utf8').split('\r\n');
    expect(lines).toEqual([
      '日期,模型,密钥,请求数,错误数,输入 tokens,输出 tokens,费用（元）',
      '2025-03-01,deepseek,控制台对话,1,0,10,20,0.0005',
      '2025-03-01,qwen-7b,控制台对话,1,0,10,20,0.0007',
      "2025-03-01,qwen-7b,'=生产密钥,1,0,100,200,0.1000",
      "2025-03-02,qwen-7b,'=生产密钥,2,1,1,2,0.0003",
      '合计,,,5,1,121,242,0.1015',
      '',
    ]);
    const filtered = await t.request({ method: 'GET', url: `/api/v1/llm/usage/export?${qs}&keyId=${key.id}`, token });
    expect(filtered.body.split('\r\n')).toHaveLength(5);

    const bad = await t.request({ method: 'GET', url: `/api/v1/llm/usage/export?startTime=x&endTime=y`, token });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 400, data: null });
    const zone = await t.request({ method: 'GET', url: `/api/v1/llm/usage/export?${qs}&timeZone=Nowhere`, token });
    expect(zone.statusCode).toBe(400);
    expect((await t.request({ method: 'GET', url: `/api/v1/llm/usage/export?${qs}` })).statusCode).toBe(401);
  });
});
