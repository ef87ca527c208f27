import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { loginThrottle } from '../../src/db/schema/user.ts';
import * as password from '../../src/lib/password.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createTestClock } from '../helpers/clock.ts';
import { createUser, randomPhone } from '../helpers/factories.ts';
import { humanTrack, issueCaptcha, rightAnswer, secretOf } from '../helpers/captcha.ts';
import type { CaptchaAnswer, CaptchaTrack } from '@suanli/contract/captcha';
import { captchaTypes, type CaptchaType } from '@suanli/contract/tenant';
import { seededInt, type IntSource } from '../../src/modules/captcha/images/random.ts';
import { puzzleLayout } from '../../src/modules/captcha/images/puzzle.ts';
import { rotateLayout } from '../../src/modules/captcha/images/rotate.ts';
import { clickLayout } from '../../src/modules/captcha/images/click.ts';
import { verifyCaptcha, type StoredAnswer } from '../../src/modules/captcha/captcha.verifier.ts';

// Pass-through spies: the real argon2 runs, the tests see when.
vi.mock('../../src/lib/password.ts', async (importOriginal) => {
  const real = await importOriginal<typeof password>();
  return { ...real, hashPassword: vi.fn(real.hashPassword), verifyPassword: vi.fn(real.verifyPassword) };
});

const PASSWORD = 'Passw0rd2026';
const WRONG = 'Wrong12345';

async function throttleRow(t: TestApp, phone: string) {
  const tenant = await t.container.tenants.resolve('localhost');
  const [row] = await t.container.db.select().from(loginThrottle).where(and(eq(loginThrottle.tenantId, tenant.id), eq(loginThrottle.phone, phone)));
  return row;
}

const signIn = (t: TestApp, phone: string, pw: string, extra: object = {}) =>
  t.request({ method: 'POST', url: '/user/login/password', payload: { phone, password: pw, ...extra }, encrypted: true });

describe.each(engines)('account security on %s', (engine) => {
  describe('#9 sign-in throttling under concurrency', () => {
    let withCaptcha: TestApp;
    let noCaptcha: TestApp;
    const clock = createTestClock();
    beforeAll(async () => {
      withCaptcha = await buildTestApp({ engine, captcha: true, clock });
      noCaptcha = await buildTestApp({ engine, clock });
    });
    afterAll(async () => {
      await withCaptcha.close();
      await noCaptcha.close();
    });

    it('#9 100 concurrent wrong passwords get at most 3 checks without a captcha', async () => {
      const phone = randomPhone();
      await createUser(withCaptcha, { phone, password: PASSWORD });
      const results = await Promise.all(Array.from({ length: 100 }, () => signIn(withCaptcha, phone, WRONG)));
      const checked = results.filter((r) => r.json().msg === '手机号或密码错误');
      expect(checked.length).toBeLessThanOrEqual(3);
      expect(results.every((r) => r.statusCode === 400)).toBe(true);
      expect(results.filter((r) => r.json().reason === 'CAPTCHA_REQUIRED').length).toBeGreaterThanOrEqual(97);
      expect((await throttleRow(withCaptcha, phone))?.failures).toBeLessThanOrEqual(3);
    });

    it('#9 100 concurrent wrong passwords get at most 10 checks, and a right one sent last neither signs in nor lifts the lock', async () => {
      const phone = randomPhone();
      await createUser(noCaptcha, { phone, password: PASSWORD });
      const wrong = Array.from({ length: 100 }, () => signIn(noCaptcha, phone, WRONG));
      // The right password arrives once ten wrong ones are under way (counted, maybe still hashing).
      for (let waited = 0; ((await throttleRow(noCaptcha, phone))?.failures ?? 0) < 10 && waited < 20_000; waited += 5) await new Promise((r) => setTimeout(r, 5));
      const right = await signIn(noCaptcha, phone, PASSWORD);
      const results = await Promise.all(wrong);
      expect(right.statusCode, right.body).toBe(429);
      expect(right.json().reason).toBe('ACCOUNT_LOCKED');
      expect(results.filter((r) => r.json().msg === '手机号或密码错误').length).toBeLessThanOrEqual(9);
      const row = await throttleRow(noCaptcha, phone);
      expect(row?.failures).toBeLessThanOrEqual(10);
      expect(row?.lockedUntil?.getTime()).toBeGreaterThan(clock().getTime());
      // Still locked for the owner too, until it runs out.
      expect((await signIn(noCaptcha, phone, PASSWORD)).statusCode).toBe(429);
      clock.advanceMinutes(15.5);
      expect((await signIn(noCaptcha, phone, PASSWORD)).statusCode).toBe(200);
    });
  });

  describe('#11 phone and password changes', () => {
    let t: TestApp;
    const clock = createTestClock();
    beforeAll(async () => {
      t = await buildTestApp({ engine, clock });
    });
    afterAll(() => t.close());
    beforeEach(() => clock.advanceMinutes(2));

    async function codeFor(phone: string, purpose: string) {
      const res = await t.request({ method: 'POST', url: '/user/send-code', payload: { phone, purpose } });
      expect(res.statusCode, res.body).toBe(200);
      return t.sms.lastCode(phone);
    }
    const changePhone = (token: string, body: object) => t.request({ method: 'PUT', url: '/api/v1/user/phoneNumber', payload: body, token, encrypted: true });
    const changePassword = (token: string, oldPassword: string) =>
      t.request({ method: 'PUT', url: '/api/v1/user/password', payload: { oldPassword, newPassword: 'NewPassw0rd1' }, token, encrypted: true });

    it('#11 changing the phone needs the current password and signs the other devices out', async () => {
      const phone = randomPhone();
      const { token } = await createUser(t, { phone, password: PASSWORD });
      const other = (await signIn(t, phone, PASSWORD)).json().data.token as string;
      const newPhone = randomPhone();

      const sessionOnly = await changePhone(token, { phone: newPhone, code: await codeFor(newPhone, 'change_phone') });
      expect(sessionOnly.statusCode).toBe(400);
      expect(sessionOnly.json().msg).toBe('请输入当前登录密码');

      clock.advanceMinutes(1.1);
      const wrong = await changePhone(token, { phone: newPhone, code: await codeFor(newPhone, 'change_phone'), password: WRONG });
      expect(wrong.statusCode).toBe(400);
      expect(wrong.json().msg).toMatch(/^原密码不正确/);

      clock.advanceMinutes(1.1);
      const ok = await changePhone(token, { phone: newPhone, code: await codeFor(newPhone, 'change_phone'), password: PASSWORD });
      expect(ok.statusCode, ok.body).toBe(200);
      expect((await t.request({ method: 'GET', url: '/api/v1/user/detail', token })).statusCode).toBe(200);
      expect((await t.request({ method: 'GET', url: '/api/v1/user/detail', token: other })).statusCode).toBe(401);
    });

    it('#11 five wrong old passwords lock the password change for 15 minutes, whatever the concurrency', async () => {
      const { token } = await createUser(t, { password: PASSWORD });
      const results = await Promise.all(Array.from({ length: 20 }, () => changePassword(token, WRONG)));
      expect(results.filter((r) => r.statusCode === 400).length).toBeLessThanOrEqual(4);
      const locked = results.filter((r) => r.statusCode === 429);
      expect(locked.length).toBeGreaterThanOrEqual(16);
      expect(locked[0]?.json().msg).toMatch(/^原密码错误次数过多，已暂停验证，请 \d+ 分钟后再试$/);
      // The right password doesn't get through the lock either (so it can't be confirmed by it)...
      const right = await changePassword(token, PASSWORD);
      expect(right.statusCode).toBe(429);
      clock.advanceMinutes(16);
      // ...but does once it has run out.
      expect((await changePassword(token, PASSWORD)).statusCode).toBe(200);
    });
  });

  describe('#12 hashing, probing and code sign-in', () => {
    let t: TestApp;
    const clock = createTestClock();
    beforeAll(async () => {
      t = await buildTestApp({ engine, clock });
    });
    afterAll(() => t.close());
    beforeEach(() => clock.advanceMinutes(2));

    const sendCode = (phone: string, purpose: string) => t.request({ method: 'POST', url: '/user/send-code', payload: { phone, purpose } });

    it('#12 register and password reset check the SMS code before running argon2', async () => {
      const phone = randomPhone();
      expect((await sendCode(phone, 'register')).statusCode).toBe(200);
      const code = t.sms.lastCode(phone);
      const wrongCode = code === '000000' ? '111111' : '000000';
      const { user } = await createUser(t, { password: PASSWORD });
      vi.mocked(password.hashPassword).mockClear();
      const reg = await t.request({ method: 'POST', url: '/user/register', payload: { phone, code: wrongCode, password: PASSWORD }, encrypted: true });
      expect(reg.statusCode).toBe(400);
      expect(password.hashPassword).not.toHaveBeenCalled();

      clock.advanceMinutes(1.1);
      expect((await sendCode(user.phone, 'reset')).statusCode).toBe(200);
      const reset = await t.request({ method: 'PUT', url: '/user/password/find', payload: { phone: user.phone, code: wrongCode === t.sms.lastCode(user.phone) ? '222222' : wrongCode, password: 'Another2026' }, encrypted: true });
      expect(reset.statusCode).toBe(400);
      expect(password.hashPassword).not.toHaveBeenCalled();

      // The right code still registers.
      const ok = await t.request({ method: 'POST', url: '/user/register', payload: { phone, code, password: PASSWORD }, encrypted: true });
      expect(ok.statusCode, ok.body).toBe(200);
      expect(password.hashPassword).toHaveBeenCalledTimes(1);
    });

    it('#12 send-code answers the same whether or not the phone has an account, for every purpose', async () => {
      const { user } = await createUser(t, { password: PASSWORD });
      for (const purpose of ['register', 'login', 'reset', 'change_phone']) {
        clock.advanceMinutes(1.1);
        const known = await sendCode(user.phone, purpose);
        const unknown = await sendCode(randomPhone(), purpose);
        expect({ purpose, status: known.statusCode, body: known.json() }).toEqual({ purpose, status: unknown.statusCode, body: unknown.json() });
        expect(known.statusCode).toBe(200);
      }
      // Registration tells only whoever holds the code sent to the phone, i.e. its owner.
      clock.advanceMinutes(1.1);
      await sendCode(user.phone, 'register');
      const reg = await t.request({ method: 'POST', url: '/user/register', payload: { phone: user.phone, code: t.sms.lastCode(user.phone), password: PASSWORD }, encrypted: true });
      expect(reg.statusCode).toBe(409);
      expect(reg.json().msg).toBe('该手机号已注册，请直接登录');
    });

    it('#12 a lock from wrong passwords does not block signing in by SMS code', async () => {
      const { user } = await createUser(t, { password: PASSWORD });
      for (let i = 0; i < 10; i++) await signIn(t, user.phone, WRONG);
      expect((await signIn(t, user.phone, PASSWORD)).json().reason).toBe('ACCOUNT_LOCKED');
      expect((await sendCode(user.phone, 'login')).statusCode).toBe(200);
      const res = await t.request({ method: 'POST', url: '/user/login/code', payload: { phone: user.phone, code: t.sms.lastCode(user.phone) }, encrypted: true });
      expect(res.statusCode, res.body).toBe(200);
    });
  });
});

describe('#12 per-IP limit on the hashing routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT: 'on' } });
  });
  afterAll(() => t.close());

  it('#12 register, sign-in, reset and the password changes share one per-IP budget', async () => {
    const phone = randomPhone();
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      statuses.push((await t.request({ method: 'POST', url: '/user/register', payload: { phone, code: '123456', password: PASSWORD }, encrypted: true })).statusCode);
    }
    expect(statuses.every((s) => s === 400)).toBe(true);
    const next = await signIn(t, phone, PASSWORD);
    expect(next.statusCode).toBe(429);
    const reset = await t.request({ method: 'PUT', url: '/user/password/find', payload: { phone, code: '123456', password: PASSWORD }, encrypted: true });
    expect(reset.statusCode).toBe(429);
    // Other routes are not part of that budget.
    expect((await t.request({ method: 'GET', url: '/api/v1/crypto/public-key' })).statusCode).toBe(200);
  });
});

describe('#10 captcha answers from someone who cannot see the picture', () => {
  const CHALLENGES = 4000;
  /** A challenge's secret as the server stores it, drawn from a seeded source instead of the CSPRNG. */
  function secretFrom(type: CaptchaType, int: IntSource): StoredAnswer {
    if (type === 'slide' || type === 'drag') return { type, ...puzzleLayout(type, int) };
    if (type === 'rotate') return { type, ...rotateLayout(int).answer };
    return { type, points: clickLayout(undefined, int).wanted.map((g) => ({ x: g.x, y: g.y })) };
  }
  /** What a script knows of a challenge (start, row, how many clicks), and its guess. */
  function guess(secret: StoredAnswer, int: IntSource): CaptchaAnswer {
    switch (secret.type) {
      case 'slide':
        return { x: int(0, 240), y: secret.y };
      case 'drag':
        return { x: int(0, 240), y: int(0, 160) };
      case 'rotate':
        return { angle: int(0, 359) };
      case 'click':
        return { points: secret.points.map((_, index) => ({ index, x: int(20, 280), y: int(20, 200) })) };
    }
  }
  /** An even, machine-made record from the start to the guess. */
  function evenTrack(secret: StoredAnswer, answer: CaptchaAnswer): CaptchaTrack {
    if ('points' in answer) return answer.points.map((p, i) => [500 + i * 500, p.x, p.y]);
    const from = 'angle' in answer ? [0, 0] : [secret.type === 'slide' || secret.type === 'drag' ? (secret.startX ?? 0) : 0, 'y' in answer ? answer.y : 0];
    const to = 'angle' in answer ? [answer.angle, 0] : [answer.x, answer.y];
    return Array.from({ length: 13 }, (_, i) => [i * 40, Math.round(from[0]! + ((to[0]! - from[0]!) * i) / 12), Math.round(from[1]! + ((to[1]! - from[1]!) * i) / 12)]);
  }
  function passRate(type: CaptchaType, record: (secret: StoredAnswer, answer: CaptchaAnswer) => CaptchaTrack) {
    const int = seededInt(20261123 + type.length);
    let passed = 0;
    for (let i = 0; i < CHALLENGES; i++) {
      const secret = secretFrom(type, int);
      const answer = guess(secret, int);
      if (verifyCaptcha(secret, answer, record(secret, answer), 30_000)) passed++;
    }
    return passed / CHALLENGES;
  }

  it.each(captchaTypes)('#10 %s: a guessed answer passes under 1 % without the widget record or with a made-up even one', (type) => {
    expect(passRate(type, () => [])).toBeLessThan(0.01);
    expect(passRate(type, evenTrack)).toBeLessThan(0.01);
  });

  it.each(['drag', 'click'] as const)('#10 %s: a guess passes under 1 % even with a hand-like record', (type) => {
    expect(passRate(type, humanTrack)).toBeLessThan(0.01);
  });

  it.each(['slide', 'rotate'] as const)('#10 %s: a guess with a forged hand-like record is held to the one-axis bound', (type) => {
    // One axis of ~240 px or ~320° answered within a few px or degrees: a forger who fakes a hand
    // still has to land the guess; 13 % (slide) and 6 % (rotate) before.
    expect(passRate(type, humanTrack)).toBeLessThan(0.035);
  });

  it('#10 the server refuses a right answer that comes without the widget record', async () => {
    const t = await buildTestApp({ captcha: true });
    try {
      for (const type of captchaTypes) {
        const c = await issueCaptcha(t, type);
        const secret = await secretOf(t, c.key);
        const bare = await t.request({ method: 'POST', url: '/user/captcha/check', payload: { key: c.key, answer: rightAnswer(secret) } });
        expect(bare.statusCode).toBe(400);
        const again = await issueCaptcha(t, type);
        const s2 = await secretOf(t, again.key);
        const ok = await t.request({ method: 'POST', url: '/user/captcha/check', payload: { key: again.key, answer: rightAnswer(s2), track: humanTrack(s2, rightAnswer(s2)) } });
        expect(ok.statusCode, ok.body).toBe(200);
      }
    } finally {
      await t.close();
    }
  });
});
