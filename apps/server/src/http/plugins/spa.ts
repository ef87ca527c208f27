import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';
import { Messages } from '@suanli/contract/errors';
import { brandColor } from '@suanli/domain/contrast';
import { presentTenantDomain } from '../../modules/tenant/tenant.presenter.ts';
import { scriptNonce } from './security-headers.ts';

const API_PREFIXES = ['/api/', '/user/', '/ucenter/', '/dev/'];

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** JSON inside <script>: `<` escaped so no string can close the tag. */
const scriptJson = (v: unknown) => JSON.stringify(v).replace(/</g, '\\u003c');

/**
 * Serves the built web app. index.html gets the tenant's title, favicon, colour and branding
 * inlined per Host, so the first paint is already branded and needs no extra round trip; the
 * encryption public key rides along for the same reason.
 */
export async function registerSpa(app: FastifyInstance, opts: { distDir: string | undefined; publicKeyPem: string; captchaEnabled: boolean }): Promise<void> {
  const { distDir, publicKeyPem } = opts;
  const indexPath = distDir ? path.join(distDir, 'index.html') : undefined;
  const template = indexPath && fs.existsSync(indexPath) ? fs.readFileSync(indexPath, 'utf8') : undefined;
  if (distDir && template) {
    // Hashed assets are immutable; index.html is not an asset: it is rendered per Host below, never cached for long.
    await app.register(fastifyStatic, {
      root: distDir,
      index: false,
      wildcard: false,
      maxAge: '1y',
      immutable: true,
      prefix: '/',
      allowedPath: (pathname) => pathname !== '/index.html',
    });
  }

  const renderIndex = (req: FastifyRequest, reply: FastifyReply) => {
    if (!template) return reply.status(503).type('text/plain; charset=utf-8').send('Web app not built: run `npm run build`.');
    const info = presentTenantDomain(req.tenant, { captchaEnabled: opts.captchaEnabled });
    const head = [
      `<title>${escapeHtml(info.title)}</title>`,
      info.favicon ? `<link rel="icon" href="${escapeHtml(info.favicon)}">` : '',
      `<meta name="theme-color" content="${escapeHtml(info.config.primaryColor)}">`,
      // #23: the brand as text and behind white text, darkened where it would miss WCAG AA
      `<style>:root{--brand:${escapeHtml(brandColor(info.config.primaryColor))}}</style>`,
      `<script nonce="${scriptNonce(req)}">window.__TENANT__=${scriptJson(info)};window.__PUBLIC_KEY__=${scriptJson(publicKeyPem)}</script>`,
    ].join('');
    return reply
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(template.replace(/<title>.*?<\/title>/, '').replace('<!--tenant-head-->', head));
  };

  app.setNotFoundHandler((req, reply) => {
    const isApi = API_PREFIXES.some((p) => req.url.startsWith(p)) || req.url === '/api';
    const pathname = req.url.split('?')[0] ?? '';
    if ((req.method === 'GET' || req.method === 'HEAD') && !isApi && (!path.extname(pathname) || pathname === '/index.html')) return renderIndex(req, reply);
    return reply.status(404).send({ code: 404, msg: Messages.resourceMissing, data: null, requestId: req.id });
  });
}
