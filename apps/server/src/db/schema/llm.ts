import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { UPSTREAM_KINDS, chatMessageStatuses, type LimitRule } from '@suanli/contract/llm';
import { users } from './user.ts';

/**
 * Issue #9, the large-model platform (docs/llm.md). Upstreams serve models; models are what the
 * square lists and clients name; API keys call them through /v1; every call holds money first
 * (llm_holds, wallets.held) and is then charged exactly once (a ledger entry `llm_usage` and a
 * row in llm_usage).
 */

/** Where a model's tokens come from: an OpenAI-compatible server, or the embedded CPU runtime. */
export const llmUpstreams = pgTable('llm_upstreams', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  tenantId: integer('tenant_id').notNull(),
  name: text('name').notNull(),
  kind: text('kind', { enum: UPSTREAM_KINDS }).notNull(),
  baseUrl: text('base_url').notNull().default(''),
  /** The upstream's API key sealed with AES-256-GCM (lib/sealed-secrets.ts); null: none. */
  apiKeySealed: text('api_key_sealed'),
  /** embedded: a GGUF path; '' = LLM_MODEL_PATH or the bundled SmolLM2. */
  modelPath: text('model_path').notNull().default(''),
  timeoutMs: integer('timeout_ms').notNull().default(120_000),
  maxConcurrency: integer('max_concurrency').notNull().default(4),
  retiredAt: timestamp('retired_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/** A model as clients know it (`model_id`), its prices (units per million tokens) and its upstream. */
export const llmModels = pgTable(
  'llm_models',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    tenantId: integer('tenant_id').notNull(),
    modelId: text('model_id').notNull(),
    name: text('name').notNull(),
    provider: text('provider').notNull(),
    description: text('description').notNull().default(''),
    tags: jsonb('tags').$type<string[]>().notNull().default([]),
    contextLength: integer('context_length').notNull(),
    inputPrice: bigint('input_price', { mode: 'number' }).notNull(),
    outputPrice: bigint('output_price', { mode: 'number' }).notNull(),
    published: boolean('published').notNull().default(false),
    upstreamId: integer('upstream_id')
      .notNull()
      .references(() => llmUpstreams.id),
    upstreamModel: text('upstream_model').notNull(),
    sort: integer('sort').notNull().default(0),
    retiredAt: timestamp('retired_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  // A retired model's id may be reused by a new one.
  (t) => [uniqueIndex('llm_models_tenant_model').on(t.tenantId, t.modelId).where(sql`${t.retiredAt} is null`)],
);

/**
 * A user's API key. The secret is never stored: `secret_hash` is its sha256 (hex), `secret_hint`
 * its first and last four characters. `used` is money charged through the key, `held` what its
 * calls in flight hold (quota check: used + held + new hold ≤ quota).
 */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    tenantId: integer('tenant_id').notNull(),
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    secretHash: text('secret_hash').notNull(),
    secretHint: text('secret_hint').notNull(),
    enabled: boolean('enabled').notNull().default(true),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    /** Model ids allowed; null: all published ones. */
    models: jsonb('models').$type<string[] | null>(),
    quota: bigint('quota', { mode: 'number' }),
    used: bigint('used', { mode: 'number' }).notNull().default(0),
    held: bigint('held', { mode: 'number' }).notNull().default(0),
    ipAllow: jsonb('ip_allow').$type<string[]>().notNull().default([]),
    limits: jsonb('limits').$type<LimitRule[]>().notNull().default([]),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('api_keys_secret').on(t.secretHash), index('api_keys_user').on(t.userId, t.createdAt)],
);

/**
 * Money (and, for window limits, tokens) held by a call in flight: written with wallets.held (and
 * api_keys.held) in one statement before the upstream is called, deleted by the settlement that
 * replaces it with the exact charge. A row left by a crashed process is released by the sweep.
 */
export const llmHolds = pgTable(
  'llm_holds',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    tenantId: integer('tenant_id').notNull(),
    userId: bigint('user_id', { mode: 'number' }).notNull(),
    keyId: uuid('key_id'),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    tokens: bigint('tokens', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('llm_holds_key').on(t.keyId), index('llm_holds_time').on(t.createdAt)],
);

/**
 * One row per call (gateway or console chat), written by the settlement in the same transaction
 * as its ledger entry (cost > 0) or alone (cost 0, refused after acceptance). No prompt or answer
 * text. Rolling-window limits sum these by key and time.
 */
export const llmUsage = pgTable(
  'llm_usage',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    tenantId: integer('tenant_id').notNull(),
    userId: bigint('user_id', { mode: 'number' }).notNull(),
    keyId: uuid('key_id'),
    source: text('source', { enum: ['api', 'chat'] }).notNull(),
    /** The model id as the client named it (kept if the model is later retired). */
    model: text('model').notNull(),
    promptTokens: integer('prompt_tokens').notNull(),
    completionTokens: integer('completion_tokens').notNull(),
    cost: bigint('cost', { mode: 'number' }).notNull(),
    latencyMs: integer('latency_ms').notNull(),
    /** Time to the first token; null when none came. */
    ttftMs: integer('ttft_ms'),
    /** HTTP status answered (200 for a stream that ended, 499 aborted by the client, 502/504 upstream). */
    status: integer('status').notNull(),
    /** OpenAI-style error code when it failed ('' otherwise). */
    errorCode: text('error_code').notNull().default(''),
    stream: boolean('stream').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('llm_usage_user_time').on(t.userId, t.createdAt), index('llm_usage_key_time').on(t.keyId, t.createdAt)],
);

/** The console's text chat: a user's conversations and their messages (the text is kept: it is the product). */
export const chatConversations = pgTable(
  'chat_conversations',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    tenantId: integer('tenant_id').notNull(),
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => users.id),
    title: text('title').notNull(),
    model: text('model').notNull(),
    systemPrompt: text('system_prompt').notNull().default(''),
    temperature: integer('temperature_centi').notNull().default(70),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('chat_conversations_user').on(t.userId, t.updatedAt)],
);

export const chatMessages = pgTable(
  'chat_messages',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => chatConversations.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ['user', 'assistant'] }).notNull(),
    content: text('content').notNull(),
    model: text('model'),
    promptTokens: integer('prompt_tokens').notNull().default(0),
    completionTokens: integer('completion_tokens').notNull().default(0),
    cost: bigint('cost', { mode: 'number' }).notNull().default(0),
    status: text('status', { enum: chatMessageStatuses }).notNull().default('done'),
    error: text('error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('chat_messages_conversation').on(t.conversationId, t.createdAt)],
);
