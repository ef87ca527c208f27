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
  TRUST_PROXY: onOff.default('off'),
  RATE_LIMIT: onOff.default('on'),
  SANDBOX_PAYMENTS: onOff.default('on'),
});

export type Config = Omit<z.infer<typeof schema>, 'CAPTCHA' | 'SEED' | 'TRUST_PROXY' | 'RATE_LIMIT' | 'SANDBOX_PAYMENTS'> & {
  captcha: boolean;
  seed: boolean;
  trustProxy: boolean;
  rateLimit: boolean;
  /** The built-in sandbox gateway credits money for free: off on a live installation. */
  sandboxPayments: boolean;
  dataDir: string;
};

/** Parse the environment once; a bad value stops start-up naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const { CAPTCHA, SEED, TRUST_PROXY, RATE_LIMIT, SANDBOX_PAYMENTS, ...rest } = parsed.data;
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
    trustProxy: TRUST_PROXY === 'on',
    rateLimit: RATE_LIMIT === 'on',
    sandboxPayments: SANDBOX_PAYMENTS === 'on',
    dataDir: path.resolve(rest.DATA_DIR),
  };
}
