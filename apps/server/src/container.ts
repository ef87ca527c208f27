import path from 'node:path';
import type { Config } from './config.ts';
import { openPglite, openPostgres, type Database } from './db/client.ts';
import type { SmsSender } from './adapters/sms/port.ts';
import { createConsoleSms, type InboxEntry } from './adapters/sms/console.ts';
import { createAliyunSms } from './adapters/sms/aliyun.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { loadRsaKeys, type RsaKeys } from './lib/rsa-keys.ts';
import { createTenantRepository } from './modules/tenant/tenant.repository.ts';
import { createTenantService } from './modules/tenant/tenant.service.ts';
import { createAccountService } from './modules/user/account.service.ts';
import { createCaptchaService } from './modules/captcha/captcha.service.ts';
import { createQuestionService } from './modules/question/question.service.ts';
import { createJobQueue, type JobHandler } from './jobs/queue.ts';
import { createLedgerService } from './modules/wallet/ledger.service.ts';
import { createDatahubService, DATAHUB_ACTIVATE_JOB } from './modules/datahub/datahub.service.ts';
import { createSandboxGateway, loadSandboxKeys, SANDBOX_NOTIFY_JOB, type SandboxKeys } from './adapters/payments/sandbox.ts';
import { createAlipayGateway } from './adapters/payments/alipay.ts';
import { createWechatGateway } from './adapters/payments/wechat.ts';
import { createGatewayDirectory } from './modules/payment/gateways.ts';
import { createSandboxTradeStore } from './modules/payment/payment.repository.ts';
import { createPaymentService, PAYMENT_RECONCILE_JOB, RECONCILE_EVERY_MS } from './modules/payment/payment.service.ts';
import { createSandboxCashierService } from './modules/payment/sandbox-cashier.service.ts';

export type ContainerOverrides = {
  database?: Database;
  sms?: SmsSender;
  clock?: Clock;
  rsaKeys?: RsaKeys;
  sandboxKeys?: SandboxKeys;
  /** Outbound HTTP of the payment gateways (and the sandbox's notifications); the global fetch otherwise. */
  fetch?: typeof fetch;
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
  const ledger = createLedgerService({ db, clock, onBalanceChanged: (userId) => accounts.forgetBalance(userId) });

  const datahub = createDatahubService({ db, clock, filesRoot: path.join(config.dataDir, 'files') });
  // SPEC §5 request encryption: RSA_PRIVATE_KEY_FILE, else $DATA_DIR/keys, else in memory.
  const rsaKeys = overrides.rsaKeys ?? (await loadRsaKeys({ file: config.RSA_PRIVATE_KEY_FILE, dataDir: config.dataDir }));

  // Payments: one sandbox per installation (its own key pair, $DATA_DIR/keys/sandbox-gateway.pem
  // or in memory), Alipay and WeChat built per tenant from tenants.payment_settings.
  const sandboxGateway = createSandboxGateway({
    keys: overrides.sandboxKeys ?? (await loadSandboxKeys(config.dataDir)),
    trades: createSandboxTradeStore(db, clock),
    clock,
    fetch: overrides.fetch,
  });
  const paymentGateways = createGatewayDirectory({
    sandbox: sandboxGateway,
    alipay: (s) => createAlipayGateway({ appId: s.appId, privateKeyPem: s.privateKeyPem, alipayPublicKeyPem: s.alipayPublicKeyPem, sellerId: s.sellerId, gatewayUrl: s.gatewayUrl, mode: s.mode, clock, fetch: overrides.fetch }),
    wechat: (s) =>
      createWechatGateway({
        mchId: s.mchId,
        appId: s.appId,
        merchantSerialNo: s.merchantSerialNo,
        merchantPrivateKeyPem: s.merchantPrivateKeyPem,
        apiV3Key: s.apiV3Key,
        platformPublicKeyPem: s.platformPublicKeyPem,
        platformSerialNo: s.platformSerialNo,
        baseUrl: s.baseUrl,
        clock,
        fetch: overrides.fetch,
      }),
  }, { sandboxAllowed: config.sandboxPayments });
  const payments = createPaymentService({ db, clock, ledger, gateways: paymentGateways, onBalanceChanged: (userId) => accounts.forgetBalance(userId) });
  const sandboxCashier = createSandboxCashierService({ db, clock, sandbox: sandboxGateway });

  const jobHandlers: Record<string, JobHandler> = {
    [DATAHUB_ACTIVATE_JOB]: datahub.runActivation,
    [SANDBOX_NOTIFY_JOB]: sandboxGateway.deliver,
    [PAYMENT_RECONCILE_JOB]: payments.runReconcileJob,
  };
  const jobs = createJobQueue({
    db,
    clock,
    handlers: jobHandlers,
    // Like a real gateway, the sandbox keeps notifying for about a day: 2 s, 4 s, … then every 2 h.
    retry: { [SANDBOX_NOTIFY_JOB]: { maxAttempts: 20, maxBackoffSeconds: 2 * 3600 } },
  });

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
    rsaKeys,
    questions: createQuestionService({ db, clock }),
    datahub,
    payments,
    sandboxGateway,
    sandboxCashier,
    jobs,
    startJobs: (log: Parameters<typeof jobs.start>[0]) => {
      const loop = jobs.start(log);
      // Reconciliation runs as a job (so one replica takes each run, with the queue's retries);
      // this timer only schedules one every minute unless one is already waiting.
      const schedule = () => void payments.scheduleReconcile().catch((err: unknown) => log.error({ err }, 'scheduling payment reconciliation failed'));
      schedule();
      const timer = setInterval(schedule, RECONCILE_EVERY_MS);
      return {
        async stop() {
          clearInterval(timer);
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

