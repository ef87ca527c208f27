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
// issue #8 (ssh): SSH public keys, web shell tickets, the InstanceAccess the shell and SSH gateway use.
import { createSshKeyService } from './modules/ssh-key/ssh-key.service.ts';
import { createShellTicketStore } from './modules/shell/shell-ticket.store.ts';
import { createShellService } from './modules/shell/shell.service.ts';
import type { InstanceAccess } from './modules/instance/instance-access.ts';
import { noInstanceAccess } from './modules/shell/no-instance-access.ts';

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
  /** issue #8 (ssh): tests' fake; at merge the instance service (container.instances) is the default. */
  instanceAccess?: InstanceAccess;
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
  const ledger = createLedgerService({ db, clock, onBalanceChanged: (userId) => wallet.forgetBalance(userId) });

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

  const jobHandlers: Record<string, JobHandler> = {
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
  };
  const jobs = createJobQueue({ db, clock, handlers: jobHandlers, kinds: jobKinds, concurrency: config.JOB_CONCURRENCY });

  // Every timer of the server (jobs/schedule.ts), run by one leader among the replicas. Reconciliation
  // runs as a job (any replica takes it, with the queue's retries); its task only enqueues one unless one waits.
  const scheduledTasks: ScheduledTask[] = [{ name: 'payment.reconcile', everyMs: RECONCILE_EVERY_MS, run: () => payments.scheduleReconcile() }];

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
    // issue #8 (ssh): public keys, web shell tickets and the instance access of the shell and SSH gateway.
    sshKeys: createSshKeyService({ db, clock }),
    instanceAccess: overrides.instanceAccess ?? noInstanceAccess,
    shell: createShellService({ access: overrides.instanceAccess ?? noInstanceAccess, tickets: createShellTicketStore({ clock }) }),
    /** The port the server listens on, once known (PORT=0 picks one): payment URLs use it. */
    setListenPort(port: number) {
      listenPort = port;
    },
    jobs,
    scheduledTasks,
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
      await database.close();
    },
  };
}
export type Container = Awaited<ReturnType<typeof createContainer>>;

