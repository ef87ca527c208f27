import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { captchaTypes, type CaptchaType } from '@suanli/contract/tenant';
import type { CaptchaAnswer } from '@suanli/contract/captcha';
import { captchaChallenges } from '../../src/db/schema/captcha.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { issueCaptcha, rightAnswer, secretOf, solveCaptcha, withTrack } from '../helpers/captcha.ts';
import type { StoredAnswer } from '../../src/modules/captcha/captcha.verifier.ts';

const size: Record<CaptchaType, { width: number; height: number }> = {
  click: { width: 300, height: 220 },
  slide: { width: 300, height: 220 },
  drag: { width: 300, height: 220 },
  rotate: { width: 220, height: 220 },
};

function pngSize(dataUrl: string) {
  const prefix = 'data:image/png;base64,';
  expect(dataUrl.startsWith(prefix)).toBe(true);
  const buf = Buffer.from(dataUrl.slice(prefix.length), 'base64');
  expect(buf.subarray(1, 4).toString('latin1')).toBe('PNG');
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

/** An answer of the right shape that is clearly wrong. */
function wrongAnswer(secret: StoredAnswer): CaptchaAnswer {
  switch (secret.type) {
    case 'slide':
    case 'drag':
      return { x: secret.x + 40, y: secret.y };
    case 'rotate':
      return { angle: (secret.angle + 90) % 360 };
    case 'click':
      // Right places, reversed order.
      return { points: secret.points.map((p, i) => ({ index: secret.points.length - 1 - i, x: p.x, y: p.y })) };
  }
}

// PostgreSQL too when TEST_DATABASE_URL is set: the one-check-per-key race needs real concurrency.
describe.each(engines)('captcha (%s)', (engine) => {
  let t: TestApp;
  let now = new Date('2030-01-01T00:00:00Z');
  // Always JSON on the wire, as a browser would send it, whatever the value.
  // The widget's record comes along as a person's would (helpers/captcha.ts humanTrack).
  const check = async (payload: unknown, host?: string) =>
    t.request({ method: 'POST', url: '/user/captcha/check', payload: JSON.stringify(await withTrack(t, payload)), headers: { 'content-type': 'application/json' }, host });

  beforeAll(async () => {
    t = await buildTestApp({ engine, captcha: true, clock: () => now });
  });
  afterAll(() => t.close());

  describe.each(captchaTypes)('%s', (type) => {
    it('issues a challenge with PNG images of the SPEC sizes and no secret in it', async () => {
      const res = await t.request({ method: 'GET', url: `/user/captcha/${type}` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      const body = res.json();
      expect(body).toMatchObject({ code: 200, msg: '操作成功', data: { type, angle: 0, ...size[type] } });
      const data = body.data;
      expect(data.key).toMatch(/^[0-9a-f-]{36}$/);
      expect(pngSize(data.image)).toEqual(size[type]);
      expect(pngSize(data.thumb)).toEqual({ width: data.thumbWidth, height: data.thumbHeight });
      expect(new Date(data.expiresAt).getTime() - now.getTime()).toBe(120_000);
      expect(Object.keys(data)).not.toContain('answer');
      if (type === 'click') {
        expect(data.words.length).toBeGreaterThanOrEqual(3);
        expect({ w: data.thumbWidth, h: data.thumbHeight }).toEqual({ w: 150, h: 40 });
      } else {
        expect(data.words).toBeUndefined();
      }
      const secret = await secretOf(t, data.key);
      expect(secret.type).toBe(type);
      // Slide tells the row the piece moves along; nothing else gives away where the hole is.
      if (secret.type === 'slide') expect({ x: data.thumbX, y: data.thumbY }).toEqual({ x: secret.startX, y: secret.y });
      if (secret.type === 'drag') expect({ x: data.thumbX, y: data.thumbY }).not.toEqual({ x: secret.x, y: secret.y });
    });

    it('gives a ticket for the right answer, spendable once, and checks a key only once', async () => {
      const c = await issueCaptcha(t, type);
      const answer = rightAnswer(await secretOf(t, c.key));
      const ok = await check({ key: c.key, answer });
      expect(ok.statusCode).toBe(200);
      const ticket = ok.json().data.ticket as string;
      expect(ticket.length).toBeGreaterThanOrEqual(32);

      const again = await check({ key: c.key, answer });
      expect(again.statusCode).toBe(400);
      expect(again.json()).toMatchObject({ code: 400, msg: '验证码已失效，请刷新后重试', data: null });

      const tenantId = (await t.container.tenants.resolve('localhost')).id;
      expect(await t.container.captcha.consumeTicket(tenantId, ticket)).toBe(true);
      expect(await t.container.captcha.consumeTicket(tenantId, ticket)).toBe(false);
    });

    it('refuses a wrong answer, and the right one afterwards', async () => {
      const c = await issueCaptcha(t, type);
      const secret = await secretOf(t, c.key);
      const res = await check({ key: c.key, answer: wrongAnswer(secret) });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 400, msg: '验证失败，请重试' });
      expect((await check({ key: c.key, answer: rightAnswer(secret) })).statusCode).toBe(400);
    });

    it('tolerates a few pixels or degrees off', async () => {
      const c = await issueCaptcha(t, type);
      const secret = await secretOf(t, c.key);
      const near: CaptchaAnswer =
        secret.type === 'rotate'
          ? { angle: secret.angle + 3 }
          : secret.type === 'click'
            ? { points: secret.points.map((p, index) => ({ index, x: p.x - 10, y: p.y + 10 })) }
            : { x: secret.x + 2, y: secret.type === 'slide' ? secret.y : secret.y - 2 };
      expect((await check({ key: c.key, answer: near })).statusCode).toBe(200);
    });
  });

  it('issues the tenant\'s configured type at /user/captcha', async () => {
    expect((await issueCaptcha(t)).type).toBe('slide');
    expect((await issueCaptcha(t, undefined, { host: '127.0.0.1' })).type).toBe('click');
    expect((await issueCaptcha(t, undefined, { host: '127.0.0.2' })).type).toBe('rotate');
  });

  it('expires a challenge after two minutes', async () => {
    const c = await issueCaptcha(t, 'slide');
    const answer = rightAnswer(await secretOf(t, c.key));
    const issuedAt = now;
    now = new Date(issuedAt.getTime() + 120_001);
    try {
      const res = await check({ key: c.key, answer });
      expect(res.statusCode).toBe(400);
      expect(res.json().msg).toBe('验证码已过期，请刷新后重试');
    } finally {
      now = issuedAt;
    }
  });

  it('keeps a ticket valid for two minutes from solving, not from issuing', async () => {
    const start = now;
    try {
      const c = await issueCaptcha(t, 'drag');
      now = new Date(start.getTime() + 110_000);
      const ok = await check({ key: c.key, answer: rightAnswer(await secretOf(t, c.key)) });
      const ticket = ok.json().data.ticket as string;
      const tenantId = (await t.container.tenants.resolve('localhost')).id;
      now = new Date(start.getTime() + 110_000 + 121_000);
      expect(await t.container.captcha.consumeTicket(tenantId, ticket)).toBe(false);
      now = new Date(start.getTime() + 110_000 + 60_000);
      expect(await t.container.captcha.consumeTicket(tenantId, ticket)).toBe(true);
    } finally {
      now = start;
    }
  });

  it('treats a key or ticket of another tenant as unknown', async () => {
    const c = await issueCaptcha(t, 'rotate', { host: 'localhost' });
    const answer = rightAnswer(await secretOf(t, c.key));
    const foreign = await check({ key: c.key, answer }, '127.0.0.1');
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().msg).toBe('验证码已失效，请刷新后重试');
    // The foreign try didn't burn it for its own tenant.
    expect((await check({ key: c.key, answer }, 'localhost')).statusCode).toBe(200);

    const ticket = await solveCaptcha(t, 'click', { host: '127.0.0.1' });
    const a = (await t.container.tenants.resolve('localhost')).id;
    const b = (await t.container.tenants.resolve('127.0.0.1')).id;
    expect(await t.container.captcha.consumeTicket(a, ticket)).toBe(false);
    expect(await t.container.captcha.consumeTicket(b, ticket)).toBe(true);
  });

  it('lets only one of two racing checks of the same key win', async () => {
    const c = await issueCaptcha(t, 'slide');
    const answer = rightAnswer(await secretOf(t, c.key));
    const results = await Promise.all([check({ key: c.key, answer }), check({ key: c.key, answer })]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400]);
  });

  it('answers any garbage with 400 and a Chinese message', async () => {
    const c = await issueCaptcha(t, 'slide');
    const garbage: unknown[] = [
      {},
      { key: c.key },
      { answer: { x: 1, y: 1 } },
      { key: 123, answer: { x: 1, y: 1 } },
      { key: c.key, answer: 'right' },
      { key: c.key, answer: null },
      { key: c.key, answer: { x: '1', y: 2 } },
      { key: c.key, answer: { x: 1, y: 2, z: 3 } },
      { key: c.key, answer: { x: 1, y: 2 }, extra: true },
      { key: c.key, answer: { points: Array.from({ length: 5000 }, (_, i) => ({ index: i % 10, x: 1, y: 1 })) } },
      { key: c.key, answer: { points: [{ index: -1, x: 1, y: 1 }] } },
      { key: c.key, answer: { points: [] } },
      { key: 'not-a-uuid-at-all', answer: { x: 1, y: 1 } },
      { key: "'; drop table captcha_challenges; --", answer: { x: 1, y: 1 } },
      { key: '00000000-0000-0000-0000-000000000000', answer: { x: 1, y: 1 } },
      { key: 'x'.repeat(5000), answer: { x: 1, y: 1 } },
      [1, 2, 3],
      'just a string',
      42,
    ];
    for (const payload of garbage) {
      const res = await check(payload);
      expect(res.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(400);
      const body = res.json();
      expect(body.code).toBe(400);
      expect(body.data).toBeNull();
      expect(body.msg).toMatch(/[\u4e00-\u9fff]/);
    }
    // JSON.parse turns 1e999 into Infinity: not a number an answer can be.
    const infinite = await t.request({ method: 'POST', url: '/user/captcha/check', payload: `{"key":"${c.key}","answer":{"angle":1e999}}`, headers: { 'content-type': 'application/json' } });
    expect(infinite.statusCode).toBe(400);
    const notJson = await t.request({ method: 'POST', url: '/user/captcha/check', payload: '{oops', headers: { 'content-type': 'application/json' } });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json().msg).toMatch(/[\u4e00-\u9fff]/);
    // None of that burnt the challenge.
    expect((await check({ key: c.key, answer: rightAnswer(await secretOf(t, c.key)) })).statusCode).toBe(200);
  });

  it('answers an answer of another type\'s shape as wrong', async () => {
    const c = await issueCaptcha(t, 'click');
    const res = await check({ key: c.key, answer: { x: 10, y: 10 } });
    expect(res.statusCode).toBe(400);
    expect(res.json().msg).toBe('验证失败，请重试');
  });

  it('sweeps challenges expired over an hour ago when issuing', async () => {
    const start = now;
    try {
      const old = await issueCaptcha(t, 'slide');
      now = new Date(start.getTime() + 2 * 3_600_000);
      await issueCaptcha(t, 'slide');
      const rows = await t.container.db.select().from(captchaChallenges).where(eq(captchaChallenges.id, old.key));
      expect(rows).toHaveLength(0);
      const [left] = await t.container.db.select({ n: sql<number>`count(*)::int` }).from(captchaChallenges).where(sql`${captchaChallenges.expiresAt} < ${new Date(now.getTime() - 3_600_000).toISOString()}`);
      expect(left?.n).toBe(0);
    } finally {
      now = start;
    }
  });

  it('documents the captcha routes in the OpenAPI document', async () => {
    const doc = (await t.request({ method: 'GET', url: '/api/docs/json' })).json();
    for (const path of ['/user/captcha', '/user/captcha/slide', '/user/captcha/click', '/user/captcha/rotate', '/user/captcha/drag']) {
      expect(doc.paths[path].get.tags).toEqual(['验证码']);
    }
    expect(doc.paths['/user/captcha/check'].post.summary).toMatch(/校验/);
  });
});
