import type { SmsPurpose } from '@suanli/contract/user';
import { ErrorReason } from '@suanli/contract/errors';
import { AccountRules } from '@suanli/domain/account-rules';
import type { Db } from '../../db/client.ts';
import type { SmsSender } from '../../adapters/sms/port.ts';
import { AppError, badRequest, conflict, notFound, tooMany, unauthorized } from '../../lib/errors.ts';
import { randomDigits, randomToken, sha256, timingSafeEqualHex } from '../../lib/crypto.ts';
import { burnPasswordCheck, hashPassword, verifyPassword } from '../../lib/password.ts';
import type { Clock } from '../../lib/clock.ts';
import { createUserRepository, type SessionRow, type UserRepository, type UserRow } from './user.repository.ts';
import { createAuthCache } from './auth-cache.ts';

/** What the account service needs of captchas: spend a ticket issued for a solved challenge. */
export interface CaptchaGate {
  readonly enabled: boolean;
  consumeTicket(tenantId: number, ticket: string | undefined): Promise<boolean>;
}

export type RequestMeta = { ip: string; userAgent: string };
export type Authenticated = { user: UserRow; session: SessionRow };

const CODE_INVALID = '短信验证码错误或已过期，请重新获取';
const LOGIN_FAILED = '手机号或密码错误';
const DAY_MS = 86_400_000;
/** How long another replica may still accept a token revoked elsewhere; see auth-cache.ts. */
const AUTH_CACHE_MS = 5_000;

export function createAccountService(deps: { db: Db; sms: SmsSender; captcha: CaptchaGate; clock: Clock}) {
  const { db, clock } = deps;
  const repo = createUserRepository(db);
  const authCache = createAuthCache(AUTH_CACHE_MS);

  const hashCode = (tenantId: number, phone: string, purpose: string, code: string) =>
    sha256(`sms:${tenantId}:${phone}:${purpose}:${code}`);

  async function requireCaptcha(tenantId: number, ticket: string | undefined, msg: string) {
    if (!deps.captcha.enabled) return;
    if (!(await deps.captcha.consumeTicket(tenantId, ticket))) throw badRequest(msg, ErrorReason.CaptchaRequired);
  }

  async function startSession(user: UserRow, meta: RequestMeta, r: UserRepository = repo) {
    const token = randomToken();
    const now = clock();
    const expiresAt = new Date(now.getTime() + AccountRules.sessionTtlDays * DAY_MS);
    await r.insertSession({
      tenantId: user.tenantId,
      userId: user.id,
      tokenHash: sha256(token),
      userAgent: meta.userAgent.slice(0, 512),
      ip: meta.ip.slice(0, 64),
      createdAt: now,
      lastSeenAt: now,
      expiresAt,
    });
    return { token, expiresAt: expiresAt.toISOString() };
  }

  const minutesUntil = (until: Date, now: Date) => Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 60_000));
  const signInLocked = (minutes: number) =>
    tooMany(`登录失败次数过多，账号已锁定，请 ${minutes} 分钟后再试`, minutes * 60, ErrorReason.AccountLocked);
  const passwordChecksLocked = (minutes: number) =>
    tooMany(`原密码错误次数过多，已暂停验证，请 ${minutes} 分钟后再试`, minutes * 60, ErrorReason.AccountLocked);

  /**
   * The signed-in user's current password, for password and phone changes. The check is reserved
   * (counted) before argon2 runs, so parallel guesses can't get past the limit; 5 wrong lock the
   * checks for 15 minutes. The hash is read fresh: the cached user may predate a change elsewhere.
   */
  async function checkOldPassword(auth: Authenticated, password: string) {
    const { passwordCheckLockAfterFailures: lockAfter, passwordCheckLockMinutes: lockMinutes } = AccountRules;
    const now = clock();
    const reserved = await repo.reservePasswordCheck(auth.user.id, lockAfter, now);
    if (reserved === undefined) {
      const until = await repo.passwordLockOf(auth.user.id);
      throw passwordChecksLocked(until && until > now ? minutesUntil(until, now) : lockMinutes);
    }
    const fresh = await repo.findById(auth.user.tenantId, auth.user.id);
    if (!fresh || !(await verifyPassword(fresh.passwordHash, password))) {
      if (reserved >= lockAfter) {
        await repo.lockPasswordChecksIfExhausted(auth.user.id, lockAfter, new Date(now.getTime() + lockMinutes * 60_000));
        throw passwordChecksLocked(lockMinutes);
      }
      throw badRequest(`原密码不正确，还可尝试 ${lockAfter - reserved} 次`);
    }
    await repo.clearPasswordChecks(auth.user.id);
  }

  /** Checks and spends the newest code of (phone, purpose) inside `tx`; a wrong try counts. */
  async function spendCode(txRepo: ReturnType<typeof createUserRepository>, tenantId: number, phone: string, purpose: SmsPurpose, code: string) {
    const now = clock();
    await txRepo.lockPhone(tenantId, phone);
    const open = await txRepo.latestOpenCode(tenantId, phone, purpose, now);
    if (!open) return false;
    if (!timingSafeEqualHex(open.codeHash, hashCode(tenantId, phone, purpose, code))) {
      await txRepo.failCodeAttempt(open.id, AccountRules.smsMaxAttempts, now);
      return false;
    }
    return txRepo.consumeCode(open.id, now);
  }

  /** Runs `fn` in a transaction after spending the code; a wrong code's attempt count survives. */
  async function withCode<T>(tenantId: number, phone: string, purpose: SmsPurpose, code: string, fn: (r: ReturnType<typeof createUserRepository>) => Promise<T>) {
    let wrong = false;
    const result = await db.transaction(async (tx) => {
      const r = createUserRepository(tx);
      if (!(await spendCode(r, tenantId, phone, purpose, code))) {
        wrong = true;
        return undefined;
      }
      return fn(r);
    });
    if (wrong) throw badRequest(CODE_INVALID);
    return result as T;
  }

  return {
    async sendCode(tenantId: number, input: { phone: string; purpose: SmsPurpose; captchaTicket?: string }) {
      await requireCaptcha(tenantId, input.captchaTicket, '请先完成人机验证');
      // The answer never depends on whether the phone has an account, so phones can't be probed:
      // register and change_phone codes always go out (only the phone's owner learns, after the
      // code, that it is taken); sign-in and reset codes go only to accounts, silently otherwise.
      const deliver =
        input.purpose === 'register' || input.purpose === 'change_phone' || Boolean(await repo.findByPhone(tenantId, input.phone));
      const code = randomDigits(AccountRules.smsCodeLength);
      await db.transaction(async (tx) => {
        const r = createUserRepository(tx);
        const now = clock();
        await r.lockPhone(tenantId, input.phone);
        const day = await r.countCodesSince(tenantId, input.phone, new Date(now.getTime() - DAY_MS));
        if (day.last) {
          const wait = AccountRules.smsResendSeconds - (now.getTime() - day.last.getTime()) / 1000;
          if (wait > 0) throw tooMany(`验证码发送过于频繁，请 ${Math.ceil(wait)} 秒后再试`, wait);
        }
        if (day.count >= AccountRules.smsDailyMax) throw tooMany('该手机号今日获取验证码次数已达上限，请明天再试');
        await r.insertCode({
          tenantId,
          phone: input.phone,
          purpose: input.purpose,
          codeHash: hashCode(tenantId, input.phone, input.purpose, deliver ? code : randomToken()),
          createdAt: now,
          expiresAt: new Date(now.getTime() + AccountRules.smsCodeTtlSeconds * 1000),
        });
      });
      if (deliver) {
        try {
          await deps.sms.sendCode({ tenantId, phone: input.phone, code });
        } catch (err) {
          // The gateway's reason rides along as the cause; the error handler logs 5xx with it.
          throw new AppError(503, '短信发送失败，请稍后重试', undefined, undefined, err);
        }
      }
      return { retryAfterSeconds: AccountRules.smsResendSeconds };
    },

    /** The code is spent before argon2 runs: a wrong code costs the server no hashing. */
    async register(tenantId: number, input: { phone: string; code: string; password: string; userName?: string }, meta: RequestMeta) {
      await withCode(tenantId, input.phone, 'register', input.code, async () => undefined);
      // Told only to whoever holds a code sent to the phone, i.e. its owner.
      if (await repo.findByPhone(tenantId, input.phone)) throw conflict('该手机号已注册，请直接登录');
      const passwordHash = await hashPassword(input.password);
      const user = await db.transaction(async (tx) => {
        const r = createUserRepository(tx);
        const row = await r.insert({ tenantId, phone: input.phone, passwordHash, userName: input.userName ?? '' });
        if (!row) throw conflict('该手机号已注册，请直接登录');
        return row;
      });
      return startSession(user, meta);
    },

    /**
     * PRODUCT.md "Failed sign-ins", safe under concurrency: each password check is reserved
     * (counted) in one statement before argon2 runs, so at most `loginCaptchaAfterFailures` checks
     * run without a captcha and at most `loginLockAfterFailures` before the lock, however many
     * requests race. A right password issues its session only if no lock was set meanwhile, in
     * the transaction that clears the count.
     */
    async loginWithPassword(tenantId: number, input: { phone: string; password: string; captchaTicket?: string }, meta: RequestMeta) {
      const { loginCaptchaAfterFailures: captchaAfter, loginLockAfterFailures: lockAfter, loginLockMinutes } = AccountRules;
      const now = clock();
      const throttle = await repo.throttleOf(tenantId, input.phone);
      if (throttle?.lockedUntil && throttle.lockedUntil > now) throw signInLocked(minutesUntil(throttle.lockedUntil, now));
      const lockExpired = Boolean(throttle?.lockedUntil && throttle.lockedUntil <= now);
      const captchaDue = deps.captcha.enabled && !lockExpired && (throttle?.failures ?? 0) >= captchaAfter;
      let solvedCaptcha = !deps.captcha.enabled;
      if (!solvedCaptcha && (captchaDue || input.captchaTicket)) {
        solvedCaptcha = await deps.captcha.consumeTicket(tenantId, input.captchaTicket);
        if (captchaDue && !solvedCaptcha) throw badRequest('登录失败次数较多，请先完成人机验证', ErrorReason.CaptchaRequired);
      }
      const reserved = await repo.reserveAttempt(tenantId, input.phone, { captchaAfter, lockAfter, solvedCaptcha, now });
      if (reserved === undefined) {
        // Refused without a check: locked, every check before the lock taken, or a captcha due.
        const latest = await repo.throttleOf(tenantId, input.phone);
        if (latest?.lockedUntil && latest.lockedUntil > now) throw signInLocked(minutesUntil(latest.lockedUntil, now));
        if ((latest?.failures ?? 0) >= lockAfter) throw signInLocked(loginLockMinutes);
        throw badRequest('登录失败次数较多，请先完成人机验证', ErrorReason.CaptchaRequired);
      }
      const user = await repo.findByPhone(tenantId, input.phone);
      const good = user ? await verifyPassword(user.passwordHash, input.password) : (await burnPasswordCheck(input.password), false);
      if (!user || !good) {
        if (reserved >= lockAfter) {
          await repo.lockIfExhausted(tenantId, input.phone, lockAfter, new Date(now.getTime() + loginLockMinutes * 60_000));
          throw signInLocked(loginLockMinutes);
        }
        const needCaptcha = deps.captcha.enabled && reserved >= captchaAfter;
        throw badRequest(LOGIN_FAILED, needCaptcha ? ErrorReason.CaptchaNext : undefined);
      }
      return db.transaction(async (tx) => {
        const r = createUserRepository(tx);
        if (!(await r.releaseUnlessLocked(tenantId, input.phone, clock()))) throw signInLocked(loginLockMinutes);
        return startSession(user, meta, r);
      });
    },

    /** A code proves the phone: a lock left by wrong passwords doesn't stand in its way, and goes. */
    async loginWithCode(tenantId: number, input: { phone: string; code: string }, meta: RequestMeta) {
      const user = await withCode(tenantId, input.phone, 'login', input.code, (r) => r.findByPhone(tenantId, input.phone));
      if (!user) throw badRequest(CODE_INVALID);
      await repo.clearThrottle(tenantId, input.phone);
      return startSession(user, meta);
    },

    /** The code is spent before argon2 runs: a wrong code costs the server no hashing. */
    async resetPassword(tenantId: number, input: { phone: string; code: string; password: string }) {
      const user = await withCode(tenantId, input.phone, 'reset', input.code, (r) => r.findByPhone(tenantId, input.phone));
      if (!user) throw badRequest(CODE_INVALID);
      const passwordHash = await hashPassword(input.password);
      await db.transaction(async (tx) => {
        const r = createUserRepository(tx);
        await r.updatePassword(user.id, passwordHash);
        await r.revokeSessionsExcept(user.id, undefined, clock());
        await r.clearThrottle(tenantId, input.phone);
        await r.clearPasswordChecks(user.id);
      });
      authCache.evictUser(user.id);
    },

    async changePassword(auth: Authenticated, input: { oldPassword: string; newPassword: string }) {
      if (input.oldPassword === input.newPassword) throw badRequest('新密码不能与原密码相同');
      await checkOldPassword(auth, input.oldPassword);
      const passwordHash = await hashPassword(input.newPassword);
      await db.transaction(async (tx) => {
        const r = createUserRepository(tx);
        await r.updatePassword(auth.user.id, passwordHash);
        await r.revokeSessionsExcept(auth.user.id, auth.session.id, clock());
      });
      authCache.evictUser(auth.user.id);
    },

    /**
     * A session alone can't move the account to another phone: the current password is asked
     * (throttled like the password change), the new phone proves itself by code, and every other
     * session is signed out, so whoever borrowed a session can't keep it.
     */
    async changePhone(auth: Authenticated, input: { phone: string; code: string; password: string }) {
      if (input.phone === auth.user.phone) throw badRequest('新手机号不能与当前手机号相同');
      await checkOldPassword(auth, input.password);
      await withCode(auth.user.tenantId, input.phone, 'change_phone', input.code, async (r) => {
        if (!(await r.updatePhone(auth.user, input.phone))) throw conflict('该手机号已被其他账号使用');
        await r.revokeSessionsExcept(auth.user.id, auth.session.id, clock());
      });
      authCache.evictUser(auth.user.id);
    },

    /** Bearer token -> user, in the request's tenant only; slides the expiry forward. */
    async authenticate(tenantId: number, token: string | undefined): Promise<Authenticated> {
      if (!token || token.length > 128) throw unauthorized();
      const now = clock();
      const tokenHash = sha256(token);
      const cached = authCache.get(tokenHash, now.getTime());
      if (cached) {
        if (cached.session.tenantId !== tenantId) throw unauthorized();
        return { user: cached.user, session: cached.session };
      }
      const session = await repo.findLiveSession(tokenHash, now);
      if (!session || session.tenantId !== tenantId) throw unauthorized();
      const user = await repo.findById(tenantId, session.userId);
      if (!user) throw unauthorized();
      if (now.getTime() - session.lastSeenAt.getTime() > AccountRules.sessionTouchSeconds * 1000) {
        const expiresAt = new Date(now.getTime() + AccountRules.sessionTtlDays * DAY_MS);
        await repo.touchSession(session.id, now, expiresAt);
        session.lastSeenAt = now;
        session.expiresAt = expiresAt;
      }
      authCache.set(tokenHash, user, session, now.getTime());
      return { user, session };
    },

    async logout(auth: Authenticated) {
      await repo.revokeSession(auth.user.id, auth.session.id, clock());
      authCache.evictUser(auth.user.id);
    },

    async listSessions(auth: Authenticated) {
      const rows = await repo.listLiveSessions(auth.user.id, clock());
      return rows.map((s) => ({
        id: s.id,
        current: s.id === auth.session.id,
        userAgent: s.userAgent,
        ip: s.ip,
        createdAt: s.createdAt.toISOString(),
        lastSeenAt: s.lastSeenAt.toISOString(),
      }));
    },

    async revokeSession(auth: Authenticated, id: string) {
      if (!(await repo.revokeSession(auth.user.id, id, clock()))) throw notFound('会话不存在或已失效');
      authCache.evictUser(auth.user.id);
    },

    async revokeOtherSessions(auth: Authenticated) {
      const revoked = await repo.revokeSessionsExcept(auth.user.id, auth.session.id, clock());
      authCache.evictUser(auth.user.id);
      return { revoked };
    },
  };
}
export type AccountService = ReturnType<typeof createAccountService>;
