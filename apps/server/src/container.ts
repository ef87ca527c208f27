import path from 'node:path';
import type { Config } from './config.ts';
import { openPglite, openPostgres, type Database } from './db/client.ts';
import type { SmsSender } from './adapters/sms/port.ts';
import { createConsoleSms, type InboxEntry } from './adapters/sms/console.ts';
import { createAliyunSms } from './adapters/sms/aliyun.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { loadSharedRsaKeys, type RsaKeys } from './lib/rsa-keys.ts';
import { createServerKeyRepository } from './modules/server-key/server-key.repository.ts';
import { createTenantRepository } from './modules/tenant/tenant.repository.ts';
import { createTenantService } from './modules/tenant/tenant.service.ts';
import { createAccountService } from './modules/user/account.service.ts';
import { createCaptchaService } from './modules/captcha/captcha.service.ts';
import { createQuestionService } from './modules/question/question.service.ts';
import { createJobQueue, type JobHandler, type JobKindOptions } from './jobs/queue.ts';
import { createScheduler, type ScheduledTask } from './jobs/schedule.ts';
import { advisoryLockLeadership, singleProcessLeadership } from './jobs/leader.ts';
import { createLedgerService } from './modules/wallet/ledger.service.ts';
import { createWalletService } from './modules/wallet/wallet.service.ts';
import { createDatahubService, DATAHUB_ACTIVATE_JOB } from './modules/datahub/datahub.service.ts';
import { createSandboxGateway, loadSandboxKeys, SANDBOX_NOTIFY_JOB, type SandboxKeys } from './adapters/payments/sandbox.ts';
import { createAlipayGateway } from './adapters/payments/alipay.ts';
import { createWechatGateway } from './adapters/payments/wechat.ts';
import { alipayOptionsOf, createGatewayDirectory, wechatOptionsOf } from './modules/payment/gateways.ts';
import { createSandboxTradeStore } from './modules/payment/sandbox-trade.repository.ts';
import { createPaymentService, PAYMENT_RECONCILE_JOB, RECONCILE_EVERY_MS } from './modules/payment/payment.service.ts';
import { createSandboxCashierService } from './modules/payment/sandbox-cashier.service.ts';
import { createPaymentOrigins, sandboxCashierUrl } from './modules/payment/payment-urls.ts';
import { createPaymentRepository } from './modules/payment/payment.repository.ts';
// Issue #8 (meter): inventory, metering and bills, GET /metrics.
import { createInventoryService } from './modules/inventory/inventory.service.ts';
import { createMeteringService, SETTLE_EVERY_MS } from './modules/metering/metering.service.ts';
import type { PlatformActions } from './modules/metering/meter-hooks.ts';
import { createMetrics } from './modules/metrics/metrics.ts';
// Orders and instances (issue #8, helper "orders")
import type { ComputeDriver } from './adapters/compute/port.ts';
import type { MeterHooks } from './modules/metering/meter-hooks.ts';
import { createInstanceService, DRIVER_ATTEMPTS, INSTANCE_JOBS } from './modules/instance/instance.service.ts';
import { createPasswordVault } from './modules/instance/password-vault.ts';
import { createLocalDriver } from './adapters/compute/local.ts';
import { createOrderService, ORDER_EXPIRE_EVERY_MS } from './modules/order/order.service.ts';
import { createCloneService } from './modules/instance/clone.service.ts'; // Issue #10 (clone, copy, no-GPU)
import { COPY_JOB, COPY_JOB_OPTIONS, COPY_RECOVER_EVERY_MS } from './modules/instance/data-copy.service.ts'; // Issue #10 (clone, copy, no-GPU)
import { createInstanceChangeService } from './modules/order/instance-change.service.ts'; // Issue #10 (billing changes)
// Compute images (issue #8, driver): root filesystems under $DATA_DIR/images, built by jobs.
import { createImageService, IMAGE_BUILD_JOB, IMAGE_BUILD_JOB_OPTIONS } from './modules/image/image.service.ts';
import { IMAGE_SNAPSHOT_JOB, IMAGE_SNAPSHOT_JOB_OPTIONS } from './modules/image/user-image.service.ts'; // Issue #10 (images)
// issue #8 (ssh): SSH public keys, web shell tickets, the InstanceAccess the shell and SSH gateway use.
import { createSshKeyService } from './modules/ssh-key/ssh-key.service.ts';
import { createShellTicketStore } from './modules/shell/shell-ticket.store.ts';
import { createShellService } from './modules/shell/shell.service.ts';
import type { InstanceAccess } from './modules/instance/instance-access.ts';
// Issue #9: the large-model platform (docs/llm.md).
import type { UpstreamRegistry } from './adapters/llm/port.ts';
import { createSecretVault } from './lib/sealed-secrets.ts';
import { createLlmCatalog, UPSTREAM_KEY_NAME } from './modules/llm/catalog.service.ts';
import { createUpstreamRegistry, embeddedSettings } from './adapters/llm/registry.ts';
// Issue #9 (gateway): key auth, billing (holds, settlement, windows), the completion pipeline.
import { createApiKeyAuth } from './modules/llm/key-auth.ts';
import { createLlmBilling, HOLD_STALE_MS, LLM_SWEEP_TASK, SWEEP_EVERY_MS } from './modules/llm/billing.service.ts';
import { createCompletionService } from './modules/llm/completion.service.ts';
// Issue #9 (catalog): the operator's catalog calls and the users' API keys.
import { createLlmCatalogAdmin } from './modules/llm/catalog-admin.service.ts';
import { createApiKeyService } from './modules/llm/api-key.service.ts';
// Issue #9 (chat): the console's text chat and the usage statistics.
import type { CompletionService } from './modules/llm/types.ts';
import { createChatService } from './modules/llm/chat.service.ts';
import { createUsageService } from './modules/llm/usage.service.ts';

/**
 * Outbound calls give up after this long: sandbox notifications (also the deadline of their job),
 * gateway calls (reconciliation queries; alipay-sdk's own default is the same 5 s).
 */
const OUTBOUND_TIMEOUT_MS = 5_000;

export type ContainerOverrides = {
  database?: Database;
  sms?: SmsSender;
  clock?: Clock;
  rsaKeys?: RsaKeys;
  sandboxKeys?: SandboxKeys;
  /** Outbound HTTP of the payment gateways (and the sandbox's notifications); the global fetch otherwise. */
  fetch?: typeof fetch;
  /** Orders and instances: the compute driver (tests: test/fakes/compute.ts). */
  compute?: ComputeDriver;
  /** Orders and instances: metering's hooks (tests: a fake; MERGE: the metering service by default). */
  meter?: MeterHooks;
  /** What metering asks of instances (arrears stops, releases); the instance service otherwise. */
  platform?: PlatformActions;
  /** issue #8 (ssh): what the web shell and SSH gateway use (tests: test/fakes/ssh-access.ts); the instance service otherwise. */
  instanceAccess?: InstanceAccess;
  /** Issue #9: the built upstream adapters (tests: test/fakes/llm-upstream.ts); adapters/llm/registry.ts otherwise. */
  llmUpstreams?: UpstreamRegistry;
  // Issue #9 (chat)
  /** The completion service the console chat calls (tests: test/fakes/llm-completions.ts). */
  llmCompletions?: CompletionService;
};

/** Composition root: database -> repositories -> adapters -> services. No DI framework. */
export async function createContainer(config: Config, overrides: ContainerOverrides = {}) {
  const database = overrides.database ?? (config.DATABASE_URL ? await openPostgres(config.DATABASE_URL) : await openPglite(path.join(config.dataDir, 'db')));
  const { db } = database;
  const clock = overrides.clock ?? systemClock;

  const consoleSms = config.SMS_PROVIDER === 'console' && !overrides.sms ? createConsoleSms() : undefined;
  const sms: SmsSender =
    overrides.sms ??
    consoleSms ??
    createAliyunSms({
      accessKeyId: config.ALIYUN_SMS_ACCESS_KEY_ID ?? '',
      accessKeySecret: config.ALIYUN_SMS_ACCESS_KEY_SECRET ?? '',
      signName: config.ALIYUN_SMS_SIGN_NAME ?? '',
      templateCode: config.ALIYUN_SMS_TEMPLATE_CODE ?? '',
      endpoint: config.ALIYUN_SMS_ENDPOINT,
    });

  const tenants = createTenantService({ tenants: createTenantRepository(db), defaultTenantCode: config.DEFAULT_TENANT });
  const captcha = createCaptchaService({ db, clock, enabled: config.captcha });
  const accounts = createAccountService({ db, sms, captcha, clock});
  const wallet = createWalletService({ db, clock });
  // Issue #8 (meter): metrics first, so the ledger and the job queue can count into them.
  const metrics = createMetrics();
  const ledger = createLedgerService({ db, clock, onBalanceChanged: (userId) => wallet.forgetBalance(userId), onPosted: (kind, n) => metrics.countPostings(kind, n) });

  const datahub = createDatahubService({ db, clock, filesRoot: path.join(config.dataDir, 'files') });
  // SPEC §5 request encryption: one key pair for every replica on the database (RSA_PRIVATE_KEY_FILE,
  // else the pair recorded in server_keys by the first replica); a replica with another key refuses to start.
  const rsaKeys =
    overrides.rsaKeys ??
    (await loadSharedRsaKeys({ file: config.RSA_PRIVATE_KEY_FILE, dataDir: config.dataDir, store: createServerKeyRepository(db), secret: config.KEY_ENCRYPTION_SECRET }));

  // Payments: one sandbox per installation (its own key pair, $DATA_DIR/keys/sandbox-gateway.pem
  // or in memory), Alipay and WeChat built per tenant from tenants.payment_settings.
  const sandboxGateway = createSandboxGateway({
    keys: overrides.sandboxKeys ?? (await loadSandboxKeys(config.dataDir)),
    trades: createSandboxTradeStore(db, clock),
    clock,
    cashierUrl: sandboxCashierUrl,
    fetch: overrides.fetch,
    timeoutMs: OUTBOUND_TIMEOUT_MS,
  });
  // Every URL a gateway or payer is sent to: PUBLIC_URL, else a configured tenant host on the port
  // this server listens on (set by main.ts once listening, for PORT=0).
  let listenPort = config.PORT;
  const paymentOrigins = createPaymentOrigins({ publicUrl: config.PUBLIC_URL, port: () => listenPort, hostsOf: (tenantId) => createPaymentRepository(db).hostsOf(tenantId) });
  const paymentGateways = createGatewayDirectory({
    sandbox: sandboxGateway,
    alipay: (s) => createAlipayGateway({ ...alipayOptionsOf(s), clock, fetch: overrides.fetch, timeoutMs: OUTBOUND_TIMEOUT_MS }),
    wechat: (s) => createWechatGateway({ ...wechatOptionsOf(s), clock, fetch: overrides.fetch, timeoutMs: OUTBOUND_TIMEOUT_MS }),
  }, { sandboxAllowed: config.sandboxPayments });
  const payments = createPaymentService({
    db,
    clock,
    ledger,
    gateways: paymentGateways,
    origins: paymentOrigins,
    sandboxAllowed: config.sandboxPayments,
    onBalanceChanged: (userId) => wallet.forgetBalance(userId),
  });
  const sandboxCashier = createSandboxCashierService({ db, clock, sandbox: sandboxGateway, origins: paymentOrigins, sandboxAllowed: config.sandboxPayments });

  // Issue #8 (meter): inventory; metering (MeterHooks for the instance service, which in turn is its
  // PlatformActions: bound late below, since each takes the other); the minute's settlement.
  const inventory = createInventoryService({ db, clock });
  const bound: { platform?: PlatformActions } = {};
  const platformOrFail = (): PlatformActions => {
    if (!bound.platform) throw new Error('metering: no instance service bound');
    return bound.platform;
  };
  const metering = createMeteringService({
    db,
    clock,
    ledger,
    platform: { platformStop: (id, reason) => platformOrFail().platformStop(id, reason), platformRelease: (id, reason) => platformOrFail().platformRelease(id, reason) },
  });
  metrics.addScrapeSources({ db, settlementLagSeconds: () => metering.settlementLagSeconds() });

  // Orders and instances (issue #8): instances run on the compute driver (COMPUTE_DRIVER, `local`:
  // bubblewrap sandboxes on this host) and are metered by the metering service.
  // Read on every answer: SSH_PORT=0 gives the gateway a free port, known once it listens (setSshPort).
  const sshEndpoint = { host: config.SSH_HOST, port: config.SSH_PORT };
  const compute: ComputeDriver = overrides.compute ?? createLocalDriver({ dataDir: config.dataDir });
  const meter: MeterHooks = overrides.meter ?? metering.hooks;
  const instances = createInstanceService({
    db,
    clock,
    ledger,
    compute,
    meter,
    vault: createPasswordVault({ store: createServerKeyRepository(db), secret: config.KEY_ENCRYPTION_SECRET }),
    ssh: sshEndpoint,
    onBalanceChanged: (userId) => wallet.forgetBalance(userId),
  });
  bound.platform = overrides.platform ?? instances;
  const orders = createOrderService({ db, clock, ledger, instances, meter, onBalanceChanged: (userId) => wallet.forgetBalance(userId) });
  // Issue #10 (billing changes): conversions, renewal, GPU count, data disk (registers its order kinds on `orders`).
  const instanceChanges = createInstanceChangeService({ db, clock, ledger, instances, orders, meter, compute, onBalanceChanged: (userId) => wallet.forgetBalance(userId) });
  const driverJob = { concurrency: 8, timeoutMs: 120_000, retry: { maxAttempts: DRIVER_ATTEMPTS, maxBackoffSeconds: 30 } };
  const instanceJobKinds: Record<string, JobKindOptions> = {
    [INSTANCE_JOBS.provision]: { ...driverJob, timeoutMs: 30 * 60_000 }, // Issue #10 (clone, copy, no-GPU): a clone copies whole disks
    [INSTANCE_JOBS.powerOn]: driverJob,
    [INSTANCE_JOBS.reset]: driverJob,
    [INSTANCE_JOBS.recover]: driverJob,
    // Stopping and releasing are retried until they succeed (the instance is not billed meanwhile).
    [INSTANCE_JOBS.powerOff]: { concurrency: 8, timeoutMs: 60_000, retry: { maxAttempts: 20, maxBackoffSeconds: 300 } },
    [INSTANCE_JOBS.release]: { concurrency: 8, timeoutMs: 120_000, retry: { maxAttempts: 20, maxBackoffSeconds: 300 } },
    [COPY_JOB]: COPY_JOB_OPTIONS, // Issue #10 (clone, copy, no-GPU): data copies, long-running
  };
  const clones = createCloneService({ db, clock, instances, orders }); // Issue #10 (clone, copy, no-GPU): registers the 'clone' order kind

  // Compute images (issue #8): the host-based image is seeded by main.ts (images.ensureSeeded()).
  const images = createImageService({ db, dataDir: config.dataDir, compute, clock }); // Issue #10 (images): compute, clock for snapshots

  // Issue #9: the large-model platform. Upstream API keys are sealed (lib/sealed-secrets.ts); the
  // catalog's published models are cached per tenant for the gateway.
  const llmVault = createSecretVault({ store: createServerKeyRepository(db), secret: config.KEY_ENCRYPTION_SECRET, keyName: UPSTREAM_KEY_NAME });
  const llmCatalog = createLlmCatalog({ db, vault: llmVault });
  // The large-model modules log through this (the container has no pino logger of its own).
  const quietLevels = ['silent', 'fatal', 'error', 'warn'];
  const llmLog = {
    info: quietLevels.includes(config.LOG_LEVEL) ? () => {} : (o: object, m?: string) => console.log(`[llm] ${m ?? ''}`, o),
    warn: ['silent', 'fatal', 'error'].includes(config.LOG_LEVEL) ? () => {} : (o: object, m?: string) => console.warn(`[llm] ${m ?? ''}`, o),
    error: ['silent', 'fatal'].includes(config.LOG_LEVEL) ? () => {} : (o: object, m?: string) => console.error(`[llm] ${m ?? ''}`, o),
  };
  const llmUpstreams: UpstreamRegistry = overrides.llmUpstreams ?? createUpstreamRegistry({ ...embeddedSettings(config), log: llmLog });
  // Issue #9 (gateway): /v1 key auth (cached), billing and the completion pipeline (also the console chat's).
  const llmKeyAuth = createApiKeyAuth({ db });
  const llmBilling = createLlmBilling({ db, clock, ledger, onBalanceChanged: (userId) => wallet.forgetBalance(userId), log: llmLog });
  const llmCompletions: CompletionService = overrides.llmCompletions ?? createCompletionService({ billing: llmBilling, upstreams: llmUpstreams, clock, log: llmLog });
  // Issue #9 (catalog)
  const llmAdmin = createLlmCatalogAdmin({ db, clock, vault: llmVault, catalog: llmCatalog, registry: llmUpstreams });
  const llmApiKeys = createApiKeyService({ db, clock, catalog: llmCatalog, onKeyChanged: (keyId) => llmKeyAuth.forget(keyId) });
  // Issue #9 (chat): the console's chat answers through the completion service (billed like the gateway).
  const llmChat = createChatService({ db, clock, catalog: llmCatalog, completions: llmCompletions });
  const llmUsage = createUsageService({ db });

  const jobHandlers: Record<string, JobHandler> = {
    ...instances.jobHandlers, // orders and instances
    ...instanceChanges.jobHandlers, // Issue #10 (billing changes): instance.resize_disk
    [IMAGE_BUILD_JOB]: images.runBuildJob,
    [IMAGE_SNAPSHOT_JOB]: images.users!.runSnapshotJob, // Issue #10 (images)
    [DATAHUB_ACTIVATE_JOB]: datahub.runActivation,
    [SANDBOX_NOTIFY_JOB]: sandboxGateway.deliver,
    [PAYMENT_RECONCILE_JOB]: payments.runReconcileJob,
  };
  // Per kind: how many at once in this process, and how long one attempt may take. Outbound calls
  // get the attempt's signal, so a target that never answers holds one slot for timeoutMs, no more.
  const jobKinds: Record<string, JobKindOptions> = {
    // Like a real gateway, the sandbox keeps notifying for about a day: 2 s, 4 s, … then every 2 h.
    [SANDBOX_NOTIFY_JOB]: { concurrency: 32, timeoutMs: OUTBOUND_TIMEOUT_MS, retry: { maxAttempts: 20, maxBackoffSeconds: 2 * 3600 } },
    // One run at a time: it walks the open payments (each gateway query has its own timeout).
    [PAYMENT_RECONCILE_JOB]: { concurrency: 1, timeoutMs: 10 * 60_000 },
    [DATAHUB_ACTIVATE_JOB]: { concurrency: 8, timeoutMs: 60_000 },
    ...instanceJobKinds, // orders and instances
    ...instanceChanges.jobKinds, // Issue #10 (billing changes)
    [IMAGE_BUILD_JOB]: IMAGE_BUILD_JOB_OPTIONS,
    [IMAGE_SNAPSHOT_JOB]: IMAGE_SNAPSHOT_JOB_OPTIONS, // Issue #10 (images)
  };
  const jobs = createJobQueue({ db, clock, handlers: jobHandlers, kinds: jobKinds, concurrency: config.JOB_CONCURRENCY, onAttempt: (kind, secs, outcome) => metrics.observeJob(kind, secs, outcome) });


  // Every timer of the server (jobs/schedule.ts), run by one leader among the replicas. Reconciliation
  // runs as a job (any replica takes it, with the queue's retries); its task only enqueues one unless one waits.
  const scheduledTasks: ScheduledTask[] = [{ name: 'payment.reconcile', everyMs: RECONCILE_EVERY_MS, run: () => payments.scheduleReconcile() }];
  // Issue #8 (meter): settle pay-as-you-go, stop arrears and expired prepaid, release (docs/metering.md).
  scheduledTasks.push({ name: 'metering.tick', everyMs: SETTLE_EVERY_MS, run: () => metering.tick() });
  scheduledTasks.push({ name: 'order.expire', everyMs: ORDER_EXPIRE_EVERY_MS, run: () => orders.expireDue() }); // orders and instances
  scheduledTasks.push({ name: 'copy.recover', everyMs: COPY_RECOVER_EVERY_MS, run: () => instances.copies.recoverStale() }); // Issue #10 (clone, copy, no-GPU)
  // Issue #9 (gateway): holds a crashed process left are released after 30 minutes.
  scheduledTasks.push({ name: LLM_SWEEP_TASK, everyMs: SWEEP_EVERY_MS, run: () => llmBilling.sweep(HOLD_STALE_MS) });

  return {
    config,
    database,
    db,
    clock,
    /** Present only with the console SMS adapter: backs GET /dev/inbox (one tenant's codes; all without an id, for in-process tools). */
    smsInbox: consoleSms ? (tenantId?: number): InboxEntry[] => consoleSms.inbox(tenantId) : undefined,
    tenants,
    captcha,
    accounts,
    ledger,
    wallet,
    rsaKeys,
    questions: createQuestionService({ db, clock }),
    datahub,
    payments,
    sandboxGateway,
    sandboxCashier,
    /** Orders and instances (issue #8). */
    compute,
    instances,
    orders,
    clones, // Issue #10 (clone, copy, no-GPU)
    instanceChanges, // Issue #10 (billing changes)
    images,
    // issue #8 (ssh): public keys, web shell tickets and the instance access of the shell and SSH gateway.
    sshKeys: createSshKeyService({ db, clock }),
    instanceAccess: overrides.instanceAccess ?? instances,
    shell: createShellService({ access: overrides.instanceAccess ?? instances, tickets: createShellTicketStore({ clock }) }),
    /** The port the server listens on, once known (PORT=0 picks one): payment URLs use it. */
    setListenPort(port: number) {
      listenPort = port;
    },
    /** The SSH gateway's port once listening: instances' SSH commands show it. */
    setSshPort(port: number) {
      sshEndpoint.port = port;
    },
    jobs,
    scheduledTasks,
    // Issue #8 (meter)
    inventory,
    metering,
    metrics,
    // Issue #9
    llmVault,
    llmCatalog,
    llmUpstreams,
    llmKeyAuth,
    llmBilling,
    llmCompletions,
    // Issue #9 (catalog)
    llmAdmin,
    llmApiKeys,
    // Issue #9 (chat)
    llmChat,
    llmUsage,
    /** Starts the job loop and the scheduler (leader: a PostgreSQL advisory lock; on PGlite this process). */
    startJobs: (log: Parameters<typeof jobs.start>[0] & { warn: (o: object, m?: string) => void }) => {
      const loop = jobs.start(log);
      const leadership = database.session ? advisoryLockLeadership({ session: database.session, log }) : singleProcessLeadership();
      const scheduler = createScheduler({ leadership, tasks: scheduledTasks, log }).start();
      return {
        async stop() {
          await scheduler.stop();
          await loop.stop();
        },
      };
    },
    async close() {
      await llmCompletions.drain?.(); // answers already sent may still be settling
      await llmUpstreams.closeAll();
      await database.close();
    },
  };
}
export type Container = Awaited<ReturnType<typeof createContainer>>;

