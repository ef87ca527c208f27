import net from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notFound } from '../../lib/errors.ts';
import type { InboxEntry } from '../../adapters/sms/console.ts';

/** Headers a reverse proxy adds: a request carrying one did not come straight from this machine. */
const FORWARDING_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip', 'x-forwarded-host', 'via'];

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 (::ffff:127.0.0.1). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (net.isIPv4(v4)) return v4.startsWith('127.');
  return net.isIPv6(address) && (address === '::1' || address === '0:0:0:0:0:0:0:1');
}

/**
 * The socket's peer is this machine and no proxy forwarded the request. `req.socket.remoteAddress`,
 * not `req.ip`: with TRUST_PROXY the latter comes from X-Forwarded-For, which a client writes.
 */
export const isDirectLoopback = (req: FastifyRequest) =>
  isLoopback(req.socket.remoteAddress) && !FORWARDING_HEADERS.some((h) => req.headers[h] !== undefined);

export type DevInbox = (tenantId: number) => InboxEntry[];

/** The console SMS inbox is served only when there is one (SMS_PROVIDER=console) and no proxy is configured in front. */
export const devInboxEnabled = (inbox: DevInbox | undefined, trustProxy: unknown): inbox is DevInbox => Boolean(inbox) && trustProxy === false;

export const DEV_INBOX_NOTICE =
  'SMS_PROVIDER=console: SMS codes are printed here as [sms] <phone> <code> and listed at /dev/inbox ' +
  'to clients on this machine only (loopback, not through a proxy), each tenant seeing its own codes (by Host). Set SMS_PROVIDER=aliyun in production.';
export const DEV_INBOX_OFF_NOTICE =
  'SMS_PROVIDER=console: SMS codes are printed here as [sms] <phone> <code>; /dev/inbox is off because TRUST_PROXY says a proxy is in front. Set SMS_PROVIDER=aliyun in production.';

/**
 * GET /dev/inbox: the console SMS adapter's recent codes of the requesting tenant, for local
 * development and demos. Anyone else gets the 404 of a route that does not exist: the codes let
 * their reader reset any password.
 */
export function devInboxRoutes(app: FastifyInstance, inbox: DevInbox) {
  app.get('/dev/inbox', { schema: { hide: true } }, async (req) => {
    if (!isDirectLoopback(req)) throw notFound();
    return { list: inbox(req.tenant.id).map(({ phone, code, sentAt }) => ({ phone, code, sentAt })) };
  });
}
