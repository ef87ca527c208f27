import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createTestClock } from '../helpers/clock.ts';

const PASSWORD = 'Passw0rd2026';
let seq = 0;
/** A phone no other test in the file uses. */
const freshPhone = () => `137${String(Date.now() % 1e4).padStart(4, '0')}${String(seq++).padStart(4, '0')}`;

describe.each(engines)('accounts on %s', (engine) => {
  let t: TestApp;
  const clock = createTestClock();

  beforeAll(async () => {
    t = await buildTestApp({ engine, clock });
  });
  afterAll(() => t.close());
  beforeEach(() => clock.advanceMinutes(2)); // each test starts past the 60 s resend window

  const post = (url: string, payload: object, opts: { host?: string; token?: string; encrypted?: boolean } = {}) =>
    t.request({ method: 'POST', url, payload, ...opts });
  const put = (url: string, payload: object, opts: { host?: string; token?: string; encrypted?: boolean } = {}) =>
    t.request({ method: 'PUT', url, payload, ...opts });

  async function sendCode(phone: string, purpose: string, host = 'localhost') {
    clock.advance(61_000); // one code a minute per phone, whatever the purpose
    const res = await post('/user/send-code', { phone, purpose }, { host });
    expect(res.statusCode, res.body).toBe(200);
    return t.sms.lastCode(phone);
  }

  async function register(phone = freshPhone(), host = 'localhost', userName?: string) {
    const code = await sendCode(phone, 'register', host);
    const res = await post('/user/register', { phone, code, password: PASSWORD, ...(userName ? { userName } : {}) }, { host, encrypted: true });
    expect(res.statusCode, res.body).toBe(200);
    return { phone, token: res.json().data.token as string };
  }

  async function login(phone: string, password = PASSWORD, host = 'localhost', extra: object = {}) {
    return post('/user/login/password', { phone, password, ...extra }, { host, encrypted: true });
  }

  describe('send-code', () => {
    it('refuses a malformed phone, a bad purpose and unknown fields, naming the problem', async () => {
      const bad = await post('/user/send-code', { phone: '12345', purpose: 'register' });
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toMatchObject({ code: 400, msg: '手机号格式不正确，请输入 11 位中国大陆手机号', data: null });
      const purpose = await post('/user/send-code', { phone: freshPhone(), purpose: 'spam' });
      expect(purpose.json().msg).toBe('验证码用途不正确');
      const extra = await post('/user/send-code', { phone: freshPhone(), purpose: 'register', admin: true });
      expect(extra.json().msg).toBe('不支持的参数：admin');
      const missing = await post('/user/send-code', { purpose: 'register' });
      expect(missing.json().msg).toBe('请输入手机号');
      const notJson = await t.request({ method: 'POST', url: '/user/send-code', payload: '{"phone":', headers: { 'content-type': 'application/json' } });
      expect(notJson.statusCode).toBe(400);
      expect(notJson.json().msg).toBe('请求体不是合法的 JSON');
      expect(t.sms.sent.length).toBe(0);
    });

    it('sends one code a minute per phone and at most 10 a day', async () => {
      const phone = freshPhone();
      await sendCode(phone, 'register');
      const again = await post('/user/send-code', { phone, purpose: 'register' });
      expect(again.statusCode).toBe(429);
      expect(again.json().msg).toMatch(/^验证码发送过于频繁，请 \d+ 秒后再试$/);
      expect(again.headers['retry-after']).toBeDefined();
      for (let i = 1; i < 10; i++) {
        clock.advanceMinutes(1.1);
        await sendCode(phone, 'register');
      }
      clock.advanceMinutes(1.1);
      const eleventh = await post('/user/send-code', { phone, purpose: 'register' });
      expect(eleventh.statusCode).toBe(429);
      expect(eleventh.json().msg).toBe('该手机号今日获取验证码次数已达上限，请明天再试');
      clock.advanceMinutes(24 * 60);
      await sendCode(phone, 'register');
    });

    it('answers a register code for a registered phone like any other; register then says it is taken', async () => {
      const { phone } = await register();
      clock.advance(61_000);
      const res = await post('/user/send-code', { phone, purpose: 'register' });
      expect(res.statusCode).toBe(200);
      const taken = await post('/user/register', { phone, code: t.sms.lastCode(phone), password: PASSWORD }, { encrypted: true });
      expect(taken.statusCode).toBe(409);
      expect(taken.json().msg).toBe('该手机号已注册，请直接登录');
      const before = t.sms.sent.length;
      const unknown = await post('/user/send-code', { phone: freshPhone(), purpose: 'login' });
      expect(unknown.statusCode).toBe(200); // same answer as a known phone: phones can't be probed
      expect(t.sms.sent.length).toBe(before);
    });

    it('answers 503 and keeps no half state when the SMS gateway fails', async () => {
      const phone = freshPhone();
      t.sms.failNext();
      const res = await post('/user/send-code', { phone, purpose: 'register' });
      expect(res.statusCode).toBe(503);
      expect(res.json().msg).toBe('短信发送失败，请稍后重试');
    });
  });

  describe('register', () => {
    it('signs the new user in; detail shows name, masked phone, uuid and a zero balance', async () => {
      const { phone, token } = await register(undefined, 'localhost', '张三');
      const res = await t.request({ method: 'GET', url: '/api/v1/user/detail', token });
      expect(res.statusCode).toBe(200);
      const data = res.json().data;
      expect(data).toMatchObject({ userName: '张三', realNameAuth: false, balance: 0, frozenBalance: 0, instanceNum: 0, role: 'user', accountType: 'personal' });
      expect(data.phone).toBe(`${phone.slice(0, 3)}****${phone.slice(7)}`);
      expect(data.uuid).toMatch(/^[0-9a-f-]{36}$/);
      expect(data).not.toHaveProperty('passwordHash');
      const balance = await t.request({ method: 'GET', url: '/api/v1/account/balance', token });
      expect(balance.json().data).toEqual({ balance: 0, frozenBalance: 0 });
    });

    it('refuses wrong, reused and expired codes', async () => {
      const phone = freshPhone();
      const code = await sendCode(phone, 'register');
      const wrong = await post('/user/register', { phone, code: code === '000000' ? '111111' : '000000', password: PASSWORD }, { encrypted: true });
      expect(wrong.statusCode).toBe(400);
      expect(wrong.json().msg).toBe('短信验证码错误或已过期，请重新获取');
      const ok = await post('/user/register', { phone, code, password: PASSWORD }, { encrypted: true });
      expect(ok.statusCode).toBe(200);
      const reused = await post('/user/register', { phone, code, password: PASSWORD }, { encrypted: true });
      expect(reused.statusCode).toBe(400);

      const late = freshPhone();
      const lateCode = await sendCode(late, 'register');
      clock.advanceMinutes(5.1);
      const expired = await post('/user/register', { phone: late, code: lateCode, password: PASSWORD }, { encrypted: true });
      expect(expired.statusCode).toBe(400);
      expect(expired.json().msg).toBe('短信验证码错误或已过期，请重新获取');
    });

    it('burns a code after 5 wrong tries', async () => {
      const phone = freshPhone();
      const code = await sendCode(phone, 'register');
      const wrongCode = code === '999999' ? '888888' : '999999';
      for (let i = 0; i < 5; i++) await post('/user/register', { phone, code: wrongCode, password: PASSWORD }, { encrypted: true });
      const right = await post('/user/register', { phone, code, password: PASSWORD }, { encrypted: true });
      expect(right.statusCode).toBe(400);
    });

    it('refuses weak, over-long and malformed passwords with their reason', async () => {
      const phone = freshPhone();
      const code = await sendCode(phone, 'register');
      const cases: [string, string][] = [
        ['short1', '密码长度至少 8 位'],
        ['a'.repeat(60) + '12345', '密码长度不能超过 64 位'],
        ['onlyletters', '密码需同时包含字母和数字，且只能使用字母、数字和常用符号'],
        ['12345678', '密码需同时包含字母和数字，且只能使用字母、数字和常用符号'],
      ];
      for (const [password, msg] of cases) {
        const res = await post('/user/register', { phone, code, password }, { encrypted: true });
        expect(res.statusCode).toBe(400);
        expect(res.json().msg).toBe(msg);
      }
      // the code survived the refused attempts: validation runs before it is spent
      const ok = await post('/user/register', { phone, code, password: PASSWORD }, { encrypted: true });
      expect(ok.statusCode).toBe(200);
    });

    it('stores injection strings as plain text', async () => {
      const name = `');drop table users;--<b>x</b>`;
      const { token } = await register(undefined, 'localhost', name);
      const res = await t.request({ method: 'GET', url: '/api/v1/user/detail', token });
      expect(res.json().data.userName).toBe(name);
    });

    it('lets the same phone register on two tenants, separately', async () => {
      const phone = freshPhone();
      const a = await register(phone, 'localhost');
      const b = await register(phone, '127.0.0.1');
      const da = (await t.request({ method: 'GET', url: '/api/v1/user/detail', token: a.token })).json().data;
      const db = (await t.request({ method: 'GET', url: '/api/v1/user/detail', token: b.token, host: '127.0.0.1' })).json().data;
      expect(da.uuid).not.toBe(db.uuid);
    });
  });

  describe('sign-in', () => {
    it('signs in by password; wrong password and unknown phone get the same answer', async () => {
      const { phone } = await register();
      const ok = await login(phone);
      expect(ok.statusCode).toBe(200);
      expect(ok.json().data.token).toEqual(expect.any(String));
      const wrong = await login(phone, 'Wrong1234');
      const unknown = await login(freshPhone(), 'Wrong1234');
      expect(wrong.statusCode).toBe(400);
      expect(unknown.statusCode).toBe(400);
      expect(wrong.json().msg).toBe('手机号或密码错误');
      expect(unknown.json().msg).toBe(wrong.json().msg);
    });

    it('locks a phone for 15 minutes after 10 failures, then lets it in', async () => {
      const { phone } = await register();
      for (let i = 0; i < 9; i++) expect((await login(phone, 'Wrong1234')).statusCode).toBe(400);
      const tenth = await login(phone, 'Wrong1234');
      expect(tenth.statusCode).toBe(429);
      expect(tenth.json().reason).toBe('ACCOUNT_LOCKED');
      const locked = await login(phone);
      expect(locked.statusCode).toBe(429);
      expect(locked.json().msg).toMatch(/账号已锁定/);
      clock.advanceMinutes(15.5);
      expect((await login(phone)).statusCode).toBe(200);
    });

    it('cannot use a user of another tenant', async () => {
      const { phone } = await register();
      const res = await login(phone, PASSWORD, '127.0.0.1');
      expect(res.statusCode).toBe(400);
      expect(res.json().msg).toBe('手机号或密码错误');
    });

    it('signs in by SMS code, once per code', async () => {
      const { phone } = await register();
      const code = await sendCode(phone, 'login');
      const ok = await post('/user/login/code', { phone, code }, { encrypted: true });
      expect(ok.statusCode).toBe(200);
      const again = await post('/user/login/code', { phone, code }, { encrypted: true });
      expect(again.statusCode).toBe(400);
      // a register code is not a login code
      const other = freshPhone();
      const regCode = await sendCode(other, 'register');
      expect((await post('/user/login/code', { phone: other, code: regCode }, { encrypted: true })).statusCode).toBe(400);
    });
  });

  describe('sessions', () => {
    const detail = (token: string, host = 'localhost') => t.request({ method: 'GET', url: '/api/v1/user/detail', token, host });

    it('answers 401 with the catalogue message without, with a garbage or with a foreign token', async () => {
      const none = await t.request({ method: 'GET', url: '/api/v1/user/detail' });
      expect(none.statusCode).toBe(401);
      expect(none.json()).toMatchObject({ code: 401, msg: '无效的会话，或者会话已过期，请重新登录。', data: null });
      expect((await detail('garbage')).statusCode).toBe(401);
      expect((await detail('x'.repeat(5000))).statusCode).toBe(401);
      const { token } = await register();
      expect((await detail(token, '127.0.0.1')).statusCode).toBe(401);
    });

    it('logout revokes the token server-side', async () => {
      const { token } = await register();
      expect((await t.request({ method: 'POST', url: '/api/v1/user/logout', token })).statusCode).toBe(200);
      expect((await detail(token)).statusCode).toBe(401);
    });

    it('slides the 7-day expiry while used, and expires when idle', async () => {
      const { token } = await register();
      clock.advanceMinutes(6 * 24 * 60);
      expect((await detail(token)).statusCode).toBe(200);
      clock.advanceMinutes(6 * 24 * 60);
      expect((await detail(token)).statusCode).toBe(200); // 12 days after sign-in, still alive
      clock.advanceMinutes(7 * 24 * 60 + 1);
      expect((await detail(token)).statusCode).toBe(401);
    });

    it('lists devices, signs one out, and signs out all others', async () => {
      const { phone, token } = await register();
      const second = (await login(phone)).json().data.token as string;
      const third = (await login(phone)).json().data.token as string;
      const list = await t.request({ method: 'GET', url: '/api/v1/user/sessions', token });
      expect(list.json().data.total).toBe(3);
      expect(list.json().data.list.filter((s: { current: boolean }) => s.current)).toHaveLength(1);
      const secondId = (await t.request({ method: 'GET', url: '/api/v1/user/sessions', token: second })).json().data.list.find((s: { current: boolean }) => s.current).id;
      expect((await t.request({ method: 'DELETE', url: `/api/v1/user/sessions/${secondId}`, token })).statusCode).toBe(200);
      expect((await detail(second)).statusCode).toBe(401);
      expect((await t.request({ method: 'DELETE', url: `/api/v1/user/sessions/${secondId}`, token })).statusCode).toBe(404);
      expect((await t.request({ method: 'DELETE', url: '/api/v1/user/sessions/not-a-uuid', token })).json().msg).toBe('会话编号格式不正确');
      const others = await t.request({ method: 'POST', url: '/api/v1/user/sessions/revoke-others', token });
      expect(others.json().data.revoked).toBe(1);
      expect((await detail(third)).statusCode).toBe(401);
      expect((await detail(token)).statusCode).toBe(200);
    });

    it('cannot sign out another user’s session (404, like a missing one)', async () => {
      const a = await register();
      const b = await register();
      const bId = (await t.request({ method: 'GET', url: '/api/v1/user/sessions', token: b.token })).json().data.list[0].id;
      expect((await t.request({ method: 'DELETE', url: `/api/v1/user/sessions/${bId}`, token: a.token })).statusCode).toBe(404);
      expect((await detail(b.token)).statusCode).toBe(200);
    });
  });

  describe('passwords and phone', () => {
    it('changes the password, keeping this session and revoking the others', async () => {
      const { phone, token } = await register();
      const other = (await login(phone)).json().data.token as string;
      const wrongOld = await put('/api/v1/user/password', { oldPassword: 'Nope12345', newPassword: 'NewPassw0rd' }, { token, encrypted: true });
      expect(wrongOld.statusCode).toBe(400);
      expect(wrongOld.json().msg).toBe('原密码不正确，还可尝试 4 次');
      const same = await put('/api/v1/user/password', { oldPassword: PASSWORD, newPassword: PASSWORD }, { token, encrypted: true });
      expect(same.json().msg).toBe('新密码不能与原密码相同');
      const ok = await put('/api/v1/user/password', { oldPassword: PASSWORD, newPassword: 'NewPassw0rd' }, { token, encrypted: true });
      expect(ok.statusCode).toBe(200);
      expect((await t.request({ method: 'GET', url: '/api/v1/user/detail', token })).statusCode).toBe(200);
      expect((await t.request({ method: 'GET', url: '/api/v1/user/detail', token: other })).statusCode).toBe(401);
      expect((await login(phone)).statusCode).toBe(400);
      expect((await login(phone, 'NewPassw0rd')).statusCode).toBe(200);
    });

    it('resets a forgotten password by SMS code and signs every device out', async () => {
      const { phone, token } = await register();
      const code = await sendCode(phone, 'reset');
      const res = await put('/user/password/find', { phone, code, password: 'Reset2026x' }, { encrypted: true });
      expect(res.statusCode).toBe(200);
      expect((await t.request({ method: 'GET', url: '/api/v1/user/detail', token })).statusCode).toBe(401);
      expect((await login(phone, 'Reset2026x')).statusCode).toBe(200);
      const reused = await put('/user/password/find', { phone, code, password: 'Another2026' }, { encrypted: true });
      expect(reused.statusCode).toBe(400);
    });

    it('changes the phone with a code sent to the new one and the password; a taken phone is refused', async () => {
      const a = await register();
      const b = await register();
      const takenCode = await sendCode(b.phone, 'change_phone');
      const taken = await put('/api/v1/user/phoneNumber', { phone: b.phone, code: takenCode, password: PASSWORD }, { token: a.token, encrypted: true });
      expect(taken.statusCode).toBe(409);
      expect(taken.json().msg).toBe('该手机号已被其他账号使用');
      const newPhone = freshPhone();
      const code = await sendCode(newPhone, 'change_phone');
      const res = await put('/api/v1/user/phoneNumber', { phone: newPhone, code, password: PASSWORD }, { token: a.token, encrypted: true });
      expect(res.statusCode, res.body).toBe(200);
      expect((await login(newPhone)).statusCode).toBe(200);
      expect((await login(a.phone)).statusCode).toBe(400);
    });
  });

  describe('concurrency', () => {
    it('spends one SMS code once, however many requests race for it', async () => {
      const phone = freshPhone();
      const code = await sendCode(phone, 'register');
      const results = await Promise.all(
        Array.from({ length: 8 }, () => post('/user/register', { phone, code, password: PASSWORD }, { encrypted: true })),
      );
      const statuses = results.map((r) => r.statusCode).sort();
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s !== 200).every((s) => s === 400 || s === 409)).toBe(true);
    });

    it('sends one code when send-code requests race', async () => {
      const phone = freshPhone();
      const results = await Promise.all(Array.from({ length: 6 }, () => post('/user/send-code', { phone, purpose: 'register' })));
      expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
      expect(t.sms.sent.filter((s) => s.phone === phone)).toHaveLength(1);
    });
  });
});
