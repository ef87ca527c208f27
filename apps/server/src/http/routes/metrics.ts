import type { FastifyRequest } from 'fastify';
import type { App } from '../route-types.ts';
import { bearerToken } from '../plugins/auth.ts';
import { notFound } from '../../lib/errors.ts';
import type { Metrics } from '../../modules/metrics/metrics.ts';
import type { AccountService } from '../../modules/user/account.service.ts';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** A connection from this host that no proxy forwarded (a proxy on the host would add one of these headers). */
function fromLoopbackDirectly(req: FastifyRequest): boolean {
  const h = req.headers;
  return LOOPBACK.has(req.socket.remoteAddress ?? '') && !h['x-forwarded-for'] && !h.forwarded && !h['x-real-ip'];
}

/** HTTP latency by route pattern and status class, for every request (one Map lookup and an observe). */
export function registerHttpMetrics(app: App, metrics: Metrics): void {
  app.addHook('onResponse', (req, reply, done) => {
    metrics.observeHttp(req.method, req.routeOptions.url, reply.statusCode, reply.elapsedTime);
    done();
  });
}

/**
 * GET /metrics (Prometheus text format) for operators only: a loopback connection without
 * forwarding headers, or an operator's bearer token. Anyone else gets the 404 of a missing page.
 */
export function metricsRoutes(app: App, metrics: Metrics, accounts: AccountService): void {
  app.get('/metrics', { schema: { hide: true } }, async (req, reply) => {
    if (!fromLoopbackDirectly(req)) {
      const token = bearerToken(req);
      const auth = token ? await accounts.authenticate(req.tenant.id, token).catch(() => null) : null;
      if (auth?.user.role !== 'operator') throw notFound();
    }
    const text = await metrics.registry.metrics();
    return reply.header('content-type', metrics.registry.contentType).header('cache-control', 'no-store').send(text);
  });
}
