import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyHelmet from '@fastify/helmet';

const nonces = new WeakMap<IncomingMessage, string>();

/** One nonce per response, shared by the CSP header and the inline script of the branded index.html. */
function nonceOf(raw: IncomingMessage): string {
  let nonce = nonces.get(raw);
  if (!nonce) {
    nonce = crypto.randomBytes(16).toString('base64');
    nonces.set(raw, nonce);
  }
  return nonce;
}

export const scriptNonce = (req: FastifyRequest) => nonceOf(req.raw);

/** ws:// and wss:// of the request's own host, when the Host header is a plain host[:port]. */
function sameHostSockets(raw: IncomingMessage): string {
  const host = raw.headers.host ?? '';
  return /^[A-Za-z0-9.-]{1,253}(:\d{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](:\d{1,5})?$/.test(host) ? `ws://${host} wss://${host}` : '';
}

/**
 * For the few answers Fastify gives before any hook runs (a URL it can't decode): an error
 * envelope needs no script, style or frame.
 */
export const BARE_SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
} as const;

/** A year, the usual HSTS max-age; no `preload`, which is an operator's decision to make. */
export const HSTS_VALUE = 'max-age=31536000; includeSubDomains';

/**
 * Security headers on every response (@fastify/helmet, hooked on onRequest so error and 404 answers
 * carry them too):
 *
 *   - Content-Security-Policy: scripts only from this origin plus the per-response nonce of the
 *     branding script index.html inlines; styles may be inline (antd's CSS-in-JS writes <style>
 *     tags and React style attributes); images also from data:/blob: (captchas) and https: (tenant logos);
 *     no plugins, no framing (frame-ancestors 'none'), forms and <base> only to this origin.
 *   - X-Content-Type-Options: nosniff, Referrer-Policy: no-referrer, X-Frame-Options: DENY, COOP/CORP same-origin.
 *   - Strict-Transport-Security only over HTTPS: PUBLIC_URL is https, or the request came over TLS
 *     (directly, or per X-Forwarded-Proto from a proxy TRUST_PROXY believes). Over plain HTTP it would pin a
 *     host that has no certificate, so it is never sent there.
 */
export async function registerSecurityHeaders(app: FastifyInstance, opts: { publicUrl: string | undefined }): Promise<void> {
  await app.register(fastifyHelmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        'default-src': ["'self'"],
        'base-uri': ["'self'"],
        'script-src': ["'self'", (req) => `'nonce-${nonceOf(req)}'`],
        'script-src-attr': ["'none'"],
        'style-src': ["'self'", "'unsafe-inline'"],
        'img-src': ["'self'", 'data:', 'blob:', 'https:'],
        'font-src': ["'self'", 'data:'],
        // The web shell's WebSocket (http/routes/shell.ts) to this same host; 'self' covers ws:/wss:
        // only in CSP Level 3 browsers, so they are named too (issue #8).
        'connect-src': ["'self'", (req) => sameHostSockets(req)],
        'object-src': ["'none'"],
        'form-action': ["'self'"],
        'frame-ancestors': ["'none'"],
      },
    },
    referrerPolicy: { policy: 'no-referrer' },
    xFrameOptions: { action: 'deny' },
    // Set below, only over HTTPS.
    strictTransportSecurity: false,
  });

  const httpsEverywhere = opts.publicUrl?.startsWith('https:') ?? false;
  app.addHook('onRequest', async (req, reply) => {
    if (httpsEverywhere || req.protocol === 'https') reply.header('strict-transport-security', HSTS_VALUE);
  });
}
