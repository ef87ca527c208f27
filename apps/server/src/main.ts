import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from './config.ts';
import { createContainer } from './container.ts';
import { buildApp } from './app.ts';
import { seedDemo } from './db/seed.ts';
import { secureDataDir } from './lib/data-dir.ts';
import { ensureHostDeps } from './lib/host-deps.ts';
import { DEV_INBOX_NOTICE, DEV_INBOX_OFF_NOTICE, devInboxEnabled } from './http/routes/dev-inbox.ts';
import { startSshGateway, type SshGateway } from './ssh/gateway.ts'; // issue #8 (ssh)
import { ensureEmbeddedWeights } from './adapters/llm/registry.ts'; // Issue #9 (upstream)
import { ensureLlmSeeded } from './modules/llm/llm-seed.ts'; // Issue #9 (catalog)

const here = path.dirname(fileURLToPath(import.meta.url));

async function main() {
  const config = loadConfig();
  secureDataDir(config.dataDir, { create: !config.DATABASE_URL });
  const container = await createContainer(config);
  if (config.seed) await seedDemo(container.db);
  const app = await buildApp(container, {
    logger: { level: config.LOG_LEVEL },
    webDist: config.WEB_DIST ?? path.resolve(here, '../../web/dist'),
  });
  // Compute (issue #8): install what the local driver needs from the host (as root, apt-get) or log
  // the one command to run; then make the host-based image ready. Never at request time.
  if (config.COMPUTE_DRIVER === 'local') await ensureHostDeps(app.log);
  await container.images.ensureSeeded().catch((err: unknown) => app.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'compute: the host-based image could not be built (needs root)'));
  // Issue #9 (upstream): the embedded model's weights, fetched once before serving (never at request
  // time); a failure is a warning naming the cause, and the console serves without the embedded model.
  const weightsPresent = config.llmEmbedded ? await ensureEmbeddedWeights(config, app.log) : false;
  // Issue #9 (catalog): every tenant without an upstream gets the embedded one and its model,
  // published when the embedded runtime is on and its weights are present.
  await ensureLlmSeeded({ db: container.db, log: app.log, embedded: { available: weightsPresent } });
  // Orders and instances: unfinished instance work gets its job again, running instances are checked (before the job loop starts).
  container.instances.setLogger(app.log);
  app.log.info({ enqueued: await container.instances.recover() }, 'instance recovery');
  const jobs = container.startJobs(app.log);

  const ssh: { gateway?: SshGateway } = {}; // issue #8 (ssh): started once HTTP listens, closed first on shutdown
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'draining');
    const force = setTimeout(() => process.exit(1), 15_000).unref();
    await ssh.gateway?.close();
    await jobs?.stop();
    await app.close(); // stops accepting, lets in-flight requests finish
    await container.close();
    clearTimeout(force);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await app.listen({ port: config.PORT, host: config.HOST });
  const address = app.server.address();
  if (address && typeof address === 'object') container.setListenPort(address.port);
  // issue #8 (ssh): the SSH gateway. A taken port is logged, not fatal: the console still serves.
  ssh.gateway = await startSshGateway({ config, access: container.instanceAccess, log: app.log, dataDir: config.dataDir }).catch((err: unknown) => {
    app.log.error({ err, port: config.SSH_PORT }, `SSH gateway not started: ${err instanceof Error ? err.message : String(err)} (set SSH_PORT to a free port)`);
    return undefined;
  });
  if (ssh.gateway) container.setSshPort(ssh.gateway.port);
  const sandboxed = await container.payments.sandboxTenants();
  if (sandboxed.length) {
    app.log.warn(
      { tenants: sandboxed.map((t) => t.code) },
      `SANDBOX PAYMENTS ARE ON for ${sandboxed.map((t) => `${t.code} (${t.title})`).join(', ')}: any signed-in user there can credit up to ¥100,000 per click without paying. Turn it off per tenant (payment settings) or for all with SANDBOX_PAYMENTS=off before taking real customers.`,
    );
  }
  if (container.smsInbox) app.log.warn(devInboxEnabled(container.smsInbox, config.trustProxy) ? DEV_INBOX_NOTICE : DEV_INBOX_OFF_NOTICE);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
