// The schema object Drizzle needs for relational queries and drizzle-kit; one export per domain file.
export * from './tenant.ts';
export * from './user.ts';
export * from './captcha.ts';
export * from './datahub.ts';
export * from './question.ts';
export * from './job.ts';
export * from './idempotency.ts';
export * from './wallet.ts';
export * from './server-key.ts';
export * from './compute.ts';
export * from './metering.ts';
export * from './ssh-key.ts';
export * from './llm.ts';
