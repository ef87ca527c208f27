import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.ts';

describe('tenant branding and health', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('answers health with the database reachable', async () => {
    const res = await t.request({ method: 'GET', url: '/api/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', database: 'pglite' });
  });

  it('returns the branding of the tenant of the asked domain', async () => {
    const a = await t.request({ method: 'GET', url: '/ucenter/api/v1/tenant/domain?domain=localhost' });
    expect(a.statusCode).toBe(200);
    expect(a.json()).toMatchObject({ code: 200, msg: '操作成功', data: { title: '算力云', html_style: 0, config: { restricted: false, captchaType: 'slide', captchaEnabled: false } } });
    const b = await t.request({ method: 'GET', url: '/ucenter/api/v1/tenant/domain?domain=127.0.0.1:8080' });
    expect(b.json().data).toMatchObject({ title: '星湖智算', html_style: 1 });
    const fields = Object.keys(b.json().data).sort();
    expect(fields).toEqual(
      ['config', 'favicon', 'hash_rate_logo', 'hash_rate_slogan', 'hash_rate_slogan_title', 'html_style', 'login_logo', 'navigation_logo', 'title'].sort(),
    );
  });

  it('falls back to the default tenant for an unknown host, and uses Host without a domain query', async () => {
    const unknown = await t.request({ method: 'GET', url: '/ucenter/api/v1/tenant/domain?domain=nowhere.example' });
    expect(unknown.json().data.title).toBe('算力云');
    const byHost = await t.request({ method: 'GET', url: '/ucenter/api/v1/tenant/domain', host: '127.0.0.2' });
    expect(byHost.json().data).toMatchObject({ html_style: 2, config: { restricted: true } });
  });

  it('answers an unknown API path with the 404 envelope', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/nothing-here' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 404, msg: '资源不存在', data: null });
  });

  it('serves the OpenAPI document at /api/docs', async () => {
    const res = await t.request({ method: 'GET', url: '/api/docs/json' });
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json().paths)).toEqual(expect.arrayContaining(['/user/register', '/api/v1/user/detail', '/ucenter/api/v1/tenant/domain']));
  });
});

describe('per-IP limits on captchas and SMS', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT: 'on' } });
  });
  afterAll(() => t.close());

  it('answers 429 with a Chinese message once an IP asks for too many captchas', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 45; i++) statuses.push((await t.request({ method: 'GET', url: '/user/captcha/slide' })).statusCode);
    expect(statuses.slice(0, 40).every((s) => s === 200)).toBe(true);
    const last = await t.request({ method: 'GET', url: '/user/captcha/slide' });
    expect(last.statusCode).toBe(429);
    expect(last.json()).toMatchObject({ code: 429, msg: '操作过于频繁，请稍后再试', data: null });
    // another client is not affected
    const other = await t.request({ method: 'GET', url: '/user/captcha/slide', remoteAddress: '10.0.0.9' });
    expect(other.statusCode).toBe(200);
  });
});
