import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AccountService, Authenticated } from '../../modules/user/account.service.ts';
import { forbidden } from '../../lib/errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    auth: Authenticated | null;
  }
  interface FastifyInstance {
    /** onRequest hook: a live session of this tenant's user, else 401. */
    requireUser: (req: FastifyRequest) => Promise<void>;
    /** onRequest hook: like requireUser, and the user runs the tenant. */
    requireOperator: (req: FastifyRequest) => Promise<void>;
    /** onRequest hook: reads the session when there is one; never refuses. */
    optionalUser: (req: FastifyRequest) => Promise<void>;
  }
}

export function bearerToken(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const [scheme, token] = header.split(' ');
  return scheme?.toLowerCase() === 'bearer' && token ? token.trim() : undefined;
}

/** The signed-in user of a route that used requireUser. */
export function authOf(req: FastifyRequest): Authenticated {
  if (!req.auth) throw new Error('route did not use requireUser');
  return req.auth;
}

/** The tenant and user a signed-in user's resources are scoped to (services check every id against it). */
export function ownerOf(req: FastifyRequest): { tenantId: number; userId: number } {
  const { user } = authOf(req);
  return { tenantId: user.tenantId, userId: user.id };
}

export function registerAuth(app: FastifyInstance, accounts: AccountService): void {
  app.decorateRequest('auth', null);
  app.decorate('requireUser', async (req: FastifyRequest) => {
    req.auth = await accounts.authenticate(req.tenant.id, bearerToken(req));
  });
  app.decorate('requireOperator', async (req: FastifyRequest) => {
    req.auth = await accounts.authenticate(req.tenant.id, bearerToken(req));
    if (req.auth.user.role !== 'operator') throw forbidden();
  });
  app.decorate('optionalUser', async (req: FastifyRequest) => {
    const token = bearerToken(req);
    if (!token) return;
    req.auth = await accounts.authenticate(req.tenant.id, token).catch(() => null);
  });
}
