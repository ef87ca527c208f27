import type { LimitRule } from '@suanli/contract/llm';
import type { ChatMessage, UpstreamConfig } from '../../adapters/llm/port.ts';
import type { LlmError } from './errors.ts';

/**
 * Issue #9: the interfaces the large-model modules share (docs/llm.md). Owners:
 * - catalog.service.ts (upstreams, models, seeding): LlmCatalog
 * - key-auth.ts (secret → key, cached): ApiKeyAuth; api-key.service.ts (the keys' CRUD) calls its forget()
 * - billing.service.ts (holds, settlement, windows, usage rows): LlmBilling
 * - completion.service.ts (hold → upstream → settle, streaming): CompletionService, used by the
 *   /v1 gateway (http/routes/llm-gateway.ts) and the console's chat (chat.service.ts)
 */

/** A published model ready to call: what the gateway needs, cached by catalog (no query per call). */
export type ResolvedModel = {
  dbId: number;
  tenantId: number;
  /** What clients send. */
  modelId: string;
  name: string;
  provider: string;
  /** For the model square (issue #9, catalog). */
  description: string;
  tags: string[];
  contextLength: number;
  /** Units per million tokens. */
  inputPrice: number;
  outputPrice: number;
  upstreamModel: string;
  upstream: UpstreamConfig;
  /** For GET /v1/models `created` (unix seconds). */
  createdAt: Date;
};

export interface LlmCatalog {
  /** A published, unretired model of the tenant on an unretired upstream; cached, dropped on every catalog write. */
  resolveModel(tenantId: number, modelId: string): Promise<ResolvedModel | undefined>;
  /** The tenant's published models, in the square's order; cached likewise. */
  publishedModels(tenantId: number): Promise<ResolvedModel[]>;
}

/** An API key as the gateway checks it. */
export type KeyPrincipal = {
  keyId: string;
  tenantId: number;
  userId: number;
  name: string;
  enabled: boolean;
  expiresAt: Date | null;
  models: string[] | null;
  quota: number | null;
  ipAllow: string[];
  limits: LimitRule[];
};

export interface ApiKeyAuth {
  /** The key whose secret this is (not deleted), or undefined; cached by secret hash. */
  authenticate(secret: string): Promise<KeyPrincipal | undefined>;
  /** A key changed or was deleted: drop it from the cache (this process; others within their TTL). */
  forget(keyId: string): void;
}

/** Who a call is for and what bounds it. `keyId` null: the console's chat (no key limits). */
export type CompletionCaller = {
  tenantId: number;
  userId: number;
  keyId: string | null;
  quota: number | null;
  limits: LimitRule[];
  source: 'api' | 'chat';
};

export type HoldRequest = {
  caller: CompletionCaller;
  model: ResolvedModel;
  promptTokens: number;
  /**
   * The most completion tokens wanted: the client's max_tokens, or (none given) whatever is left of
   * the context. `exact`: the client asked for max_tokens, so a hold smaller than it is refused;
   * otherwise the hold shrinks to what the balance, quota and windows allow (≥ 1 token), and the
   * upstream is asked for that many.
   */
  maxCompletionTokens: number;
  exact: boolean;
};

export type Hold = {
  id: string;
  amount: number;
  promptTokens: number;
  /** Completion tokens the hold covers: the upstream is asked for at most this many. */
  completionTokens: number;
};

export type Settlement = {
  promptTokens: number;
  completionTokens: number;
  /** HTTP status answered / recorded (200, 499 client closed, 502, 504…). */
  status: number;
  errorCode: string;
  latencyMs: number;
  ttftMs: number | null;
  stream: boolean;
};

export interface LlmBilling {
  /** Holds the most the call can cost; throws LlmError (402 balance, 429 quota/window) when it can't. */
  hold(req: HoldRequest): Promise<Hold>;
  /**
   * Replaces the hold with the exact charge (never more than the hold) in one transaction: the
   * ledger entry (kind llm_usage, ref `llm:<hold id>`), the usage row, key used/last_used; idempotent.
   */
  settle(hold: Hold, caller: CompletionCaller, model: ResolvedModel, s: Settlement): Promise<{ cost: number; balanceAfter: number }>;
  /** Releases holds older than `olderThanMs` (a crashed process's), recording nothing. */
  sweep(olderThanMs: number): Promise<number>;
}

export type CompletionInput = {
  model: ResolvedModel;
  messages: ChatMessage[];
  /** The client's max_tokens, if it gave one. */
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  seed?: number;
  stream: boolean;
};

export type CompletionResult = {
  text: string;
  promptTokens: number;
  completionTokens: number;
  cost: number;
  /** aborted: the client went away; error: the upstream failed after tokens had started (see error). */
  finishReason: 'stop' | 'length' | 'aborted' | 'error';
  error: LlmError | null;
  latencyMs: number;
  ttftMs: number | null;
  balanceAfter: number;
};

/**
 * The answer is complete (tokens known) and about to be settled: the gateway ends its HTTP answer
 * here, so the client never waits for the settlement's round trips (the hold already covers the
 * charge; should the settlement then fail, the sweep releases the hold and the call goes uncharged).
 * Not called for an abort, nor for a refusal before the first token.
 */
export type CompletionFinish = {
  text: string;
  promptTokens: number;
  completionTokens: number;
  finishReason: 'stop' | 'length' | 'error';
  error: LlmError | null;
};

export interface CompletionService {
  /**
   * Checks the context length, holds, calls the upstream, streams each delta to `onDelta` as it
   * arrives, and settles exactly what arrived. Throws LlmError when refused before the upstream
   * answered anything (nothing charged); after the first token a failure or abort ends it with
   * finishReason error/aborted and the tokens so far charged.
   */
  /** Resolves once every settlement started so far has finished (tests; graceful shutdown). */
  drain?(): Promise<void>;
  run(caller: CompletionCaller, input: CompletionInput, opts: { signal: AbortSignal; onDelta?: (text: string) => void; onFinish?: (f: CompletionFinish) => void }): Promise<CompletionResult>;
}
