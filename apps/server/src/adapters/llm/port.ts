import type { UpstreamKind } from '@suanli/contract/llm';

/**
 * The upstream port (issue #9): what serves a model's tokens. Two adapters implement it,
 * `openai` (any OpenAI-compatible server over HTTP: vLLM, Ollama, llama.cpp server, hosted APIs)
 * and `embedded` (node-llama-cpp on this server's CPU); tests add fakes of the same port.
 * The gateway and the console's chat call only this.
 */

export type ChatRole = 'system' | 'user' | 'assistant';
/** Messages as sent upstream: OpenAI `developer` is passed as `system`; content parts are joined to text by the gateway. */
export type ChatMessage = { role: ChatRole; content: string };

export type UpstreamRequest = {
  /** The model's name at the upstream (llm_models.upstream_model). */
  model: string;
  messages: ChatMessage[];
  /** Always set: the gateway caps it at what the hold covers. */
  maxTokens: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  seed?: number;
};

/**
 * What a call yields, in order: any number of `delta`s, then at most one `usage`, then exactly one
 * `finish` (or the iterator throws an UpstreamError). `tokens` of a delta: how many completion tokens
 * it carries when the adapter knows (embedded: exact; openai: 1 per content chunk, as vLLM/llama.cpp
 * stream one token per chunk), used to charge a stream cut short before any `usage` arrived.
 */
export type UpstreamEvent =
  | { type: 'delta'; text: string; tokens: number }
  | { type: 'usage'; promptTokens: number; completionTokens: number }
  | { type: 'finish'; reason: 'stop' | 'length' };

export type UpstreamFailure = 'timeout' | 'refused' | 'bad_response' | 'closed' | 'busy' | 'unavailable';

/**
 * An upstream's failure. `timeout` → 504, `busy` → 429 (the embedded queue is full), the others →
 * 502; `status` is the upstream's HTTP status when it answered one. `message` is for logs (English,
 * may name the upstream); users are shown a fixed Chinese message by the gateway.
 */
export class UpstreamError extends Error {
  constructor(
    readonly failure: UpstreamFailure,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

export type UpstreamHealthResult = { ok: boolean; latencyMs: number; models: string[]; error: string | null };

export interface LlmUpstream {
  readonly kind: UpstreamKind;
  /**
   * An upper bound of the prompt's tokens, known before the call (holds are made from it): the
   * embedded adapter tokenizes exactly with the model's chat template; the openai adapter counts
   * Unicode code points plus a fixed overhead per message (no tokenizer of the remote model here).
   */
  countPromptTokens(model: string, messages: ChatMessage[]): Promise<number>;
  /**
   * Streams the completion. Aborting `signal` cancels the upstream call (the HTTP request is
   * aborted / generation stops) and the iterator ends by throwing an AbortError-like error or
   * returning; the caller charges what it already received.
   */
  stream(req: UpstreamRequest, signal: AbortSignal): AsyncIterable<UpstreamEvent>;
  health(): Promise<UpstreamHealthResult>;
  /** Frees the model / sockets; called when the upstream is changed, retired, or at shutdown. */
  close(): Promise<void>;
}

/** An upstream's settings as stored (llm_upstreams), the API key already unsealed. */
export type UpstreamConfig = {
  id: number;
  kind: UpstreamKind;
  baseUrl: string;
  apiKey: string | null;
  modelPath: string;
  timeoutMs: number;
  maxConcurrency: number;
  /** Changes when the row changes: a registry rebuilds the adapter when it differs. */
  version: string;
};

/** Built adapters by upstream id, rebuilt when the settings change (adapters/llm/registry.ts). */
export interface UpstreamRegistry {
  get(config: UpstreamConfig): LlmUpstream;
  forget(upstreamId: number): Promise<void>;
  closeAll(): Promise<void>;
}
