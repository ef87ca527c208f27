import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { solveCaptcha } from '../helpers/captcha.ts';
import { createUser, randomPhone } from '../helpers/factories.ts';
import { createTestClock } from '../helpers/clock.ts';

/** The account flows with CAPTCHA=on, as `npm start` runs them. */
describe('accounts with captchas on', () => {
  let t: TestApp;
  const clock = createTestClock();
  beforeAll(async () => {
    t = await buildTestApp({ captcha: true, clock });
  });
  afterAll(() => t.close());

  const sendCode = (body: object) => t.request({ method: 'POST', url: '/user/send-code', payload: body });

  it('asks for a solved captcha before sending a code, and spends its ticket once', async () => {
    const phone = randomPhone();
    const none = await sendCode({ phone, purpose: 'register' });
    expect(none.statusCode).toBe(400);
    expect(none.json()).toMatchObject({ msg: '请先完成人机验证', reason: 'CAPTCHA_REQUIRED' });
    const forged = await sendCode({ phone, purpose: 'register', captchaTicket: 'forged-ticket-123' });
    expect(forged.json().reason).toBe('CAPTCHA_REQUIRED');
    const ticket = await solveCaptcha(t);
    const ok = await sendCode({ phone, purpose: 'register', captchaTicket: ticket });
    expect(ok.statusCode).toBe(200);
    clock.advanceMinutes(2);
    const reused = await sendCode({ phone, purpose: 'register', captchaTicket: ticket });
    expect(reused.json().reason).toBe('CAPTCHA_REQUIRED');
  });

  it('refuses a ticket solved on another tenant', async () => {
    const ticket = await solveCaptcha(t, undefined, { host: '127.0.0.1' });
    const res = await sendCode({ phone: randomPhone(), purpose: 'register', captchaTicket: ticket });
    expect(res.json().reason).toBe('CAPTCHA_REQUIRED');
  });

  it('asks for a captcha on sign-in after 3 failures, then lets the right password in with one', async () => {
    const phone = randomPhone();
    await createUser(t, { phone, password: 'Passw0rd2026' });
    const login = (password: string, captchaTicket?: string) =>
      t.request({ method: 'POST', url: '/user/login/password', payload: { phone, password, ...(captchaTicket ? { captchaTicket } : {}) }, encrypted: true });
    expect((await login('Wrong1234')).json().reason).toBeUndefined();
    expect((await login('Wrong1234')).json().reason).toBeUndefined();
    const third = await login('Wrong1234');
    expect(third.json()).toMatchObject({ msg: '手机号或密码错误', reason: 'CAPTCHA_NEXT' });
    const gated = await login('Passw0rd2026');
    expect(gated.statusCode).toBe(400);
    expect(gated.json()).toMatchObject({ msg: '登录失败次数较多，请先完成人机验证', reason: 'CAPTCHA_REQUIRED' });
    const ok = await login('Passw0rd2026', await solveCaptcha(t));
    expect(ok.statusCode, ok.body).toBe(200);
    // success clears the count: the next sign-in needs no captcha
    expect((await login('Passw0rd2026')).statusCode).toBe(200);
  });
});
