import { z } from 'zod';
import { okEnvelope } from '@suanli/contract/envelope';
import {
  changePasswordBody,
  changePhoneBody,
  findPasswordBody,
  loginCodeBody,
  loginPasswordBody,
  loginResult,
  registerBody,
  sendCodeBody,
  sendCodeResult,
  sessionItem,
  userDetail,
} from '@suanli/contract/user';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { Messages } from '@suanli/contract/errors';
import { tooMany } from '../../lib/errors.ts';
import { RATE_LIMITS, type App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import { authOf } from '../plugins/auth.ts';
import type { AccountService } from '../../modules/user/account.service.ts';
import type { WalletService } from '../../modules/wallet/wallet.service.ts';
import { presentUserDetail } from '../../modules/user/user.presenter.ts';

const meta = (req: FastifyRequest) => ({ ip: req.ip, userAgent: req.headers['user-agent'] ?? '' });
const done = okEnvelope(z.null());

/**
 * One per-IP budget (RATE_LIMITS.hashing) shared by every route that runs argon2, so a client
 * can't move from one hashing route to the next; nothing when rate limits are off.
 */
function hashingBudget(app: App): onRequestAsyncHookHandler[] {
  if (!app.hasDecorator('createRateLimit')) return [];
  const limiter = app.createRateLimit(RATE_LIMITS.hashing);
  return [
    async (req) => {
      const verdict = await limiter(req);
      if (!verdict.isAllowed && verdict.isExceeded) throw tooMany(Messages.tooMany, verdict.ttlInSeconds);
    },
  ];
}

export function userRoutes(app: App, accounts: AccountService, wallet: WalletService, instances: { count(owner: { tenantId: number; userId: number }): Promise<number> }) {
  const tags = ['用户'];
  const hashing = hashingBudget(app);
  app.post('/user/send-code', { config: { rateLimit: RATE_LIMITS.sendCode }, schema: { tags, summary: '发送短信验证码', body: sendCodeBody, response: { 200: okEnvelope(sendCodeResult) } } }, async (req) =>
    ok(await accounts.sendCode(req.tenant.id, req.body)),
  );

  app.post(
    '/user/register',
    { config: { encrypted: true, idempotent: true }, onRequest: hashing, schema: { tags, summary: '注册（加密请求）', body: registerBody, response: { 200: okEnvelope(loginResult) } } },
    async (req) => ok(await accounts.register(req.tenant.id, req.body, meta(req))),
  );

  app.post(
    '/user/login/password',
    { config: { encrypted: true }, onRequest: hashing, schema: { tags, summary: '密码登录（加密请求）', body: loginPasswordBody, response: { 200: okEnvelope(loginResult) } } },
    async (req) => ok(await accounts.loginWithPassword(req.tenant.id, req.body, meta(req))),
  );

  app.post(
    '/user/login/code',
    { config: { encrypted: true }, schema: { tags, summary: '验证码登录（加密请求）', body: loginCodeBody, response: { 200: okEnvelope(loginResult) } } },
    async (req) => ok(await accounts.loginWithCode(req.tenant.id, req.body, meta(req))),
  );

  app.put(
    '/user/password/find',
    { config: { encrypted: true }, onRequest: hashing, schema: { tags, summary: '找回密码（加密请求）', body: findPasswordBody, response: { 200: done } } },
    async (req) => {
      await accounts.resetPassword(req.tenant.id, req.body);
      return ok(null);
    },
  );

  app.put(
    '/api/v1/user/password',
    { config: { encrypted: true }, onRequest: [...hashing, app.requireUser], schema: { tags, summary: '修改密码（加密请求）', security: [{ bearer: [] }], body: changePasswordBody, response: { 200: done } } },
    async (req) => {
      await accounts.changePassword(authOf(req), req.body);
      return ok(null);
    },
  );

  app.get('/api/v1/user/detail', { onRequest: app.requireUser, schema: { tags, summary: '当前用户信息', security: [{ bearer: [] }], response: { 200: okEnvelope(userDetail) } } }, async (req) => {
    const { user } = authOf(req);
    const [balance, instanceNum] = await Promise.all([wallet.balanceOf(user.id), instances.count({ tenantId: user.tenantId, userId: user.id })]);
    return ok(presentUserDetail(user, { balance, instanceNum }));
  });

  app.put(
    '/api/v1/user/phoneNumber',
    { config: { encrypted: true }, onRequest: [...hashing, app.requireUser], schema: { tags, summary: '更换手机号（加密请求，需当前密码）', security: [{ bearer: [] }], body: changePhoneBody, response: { 200: done } } },
    async (req) => {
      await accounts.changePhone(authOf(req), req.body);
      return ok(null);
    },
  );

  app.post('/api/v1/user/logout', { onRequest: app.requireUser, schema: { tags, summary: '退出登录（吊销当前会话）', security: [{ bearer: [] }], response: { 200: done } } }, async (req) => {
    await accounts.logout(authOf(req));
    return ok(null);
  });

  app.get(
    '/api/v1/user/sessions',
    { onRequest: app.requireUser, schema: { tags, summary: '登录设备列表', security: [{ bearer: [] }], response: { 200: okEnvelope(z.object({ list: z.array(sessionItem), total: z.number().int() })) } } },
    async (req) => {
      const list = await accounts.listSessions(authOf(req));
      return ok({ list, total: list.length });
    },
  );

  app.delete(
    '/api/v1/user/sessions/:id',
    {
      onRequest: app.requireUser,
      schema: { tags, summary: '下线一个登录设备', security: [{ bearer: [] }], params: z.object({ id: z.uuid({ error: '会话编号格式不正确' }) }), response: { 200: done } },
    },
    async (req) => {
      await accounts.revokeSession(authOf(req), req.params.id);
      return ok(null);
    },
  );

  app.post(
    '/api/v1/user/sessions/revoke-others',
    { onRequest: app.requireUser, schema: { tags, summary: '下线其他所有设备', security: [{ bearer: [] }], response: { 200: okEnvelope(z.object({ revoked: z.number().int() })) } } },
    async (req) => ok(await accounts.revokeOtherSessions(authOf(req))),
  );
}
