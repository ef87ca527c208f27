import { UpstreamError, type ChatMessage, type LlmUpstream, type UpstreamConfig, type UpstreamEvent, type UpstreamHealthResult, type UpstreamRegistry, type UpstreamRequest } from '../../src/adapters/llm/port.ts';

/**
 * An in-memory fake of the upstream port (adapters/llm/port.ts) for the gateway's tests: scripted
 * token streams with a per-token delay, usage reported or not, and the faults an upstream can
 * show. Deterministic: the prompt count is a fixed function of the messages (fakePromptTokens).
 */
export type FakeFault =
  /** Refused before the first token (HTTP 5xx / connection refused). */
  | { kind: 'refuse' }
  /** No answer within the timeout. */
  | { kind: 'timeout' }
  /** An answer that is not a stream of chat chunks. */
  | { kind: 'garbage' }
  /** The embedded queue is full. */
  | { kind: 'busy' }
  /** The connection closes after `after` tokens. */
  | { kind: 'close'; after: number };

export type FakeScript = {
  /** The completion's tokens, one delta each. */
  tokens: string[];
  /** Milliseconds before each token (0: none, only a microtask). */
  delayMs?: number;
  /** Send a usage event before finish (as OpenAI servers do with include_usage). Default true. */
  usage?: boolean;
  /** Claim more completion tokens in usage than were sent (a misbehaving upstream). */
  usageExtra?: number;
  fault?: FakeFault;
};

export type FakeCall = { upstreamId: number; request: UpstreamRequest; delivered: number; aborted: boolean; ended: boolean };

/** What the fake counts as a prompt's tokens: 3 + per message 4 + ceil(code points / 4). */
export function fakePromptTokens(messages: ChatMessage[]): number {
  let n = 3;
  for (const m of messages) n += 4 + Math.ceil([...m.content].length / 4);
  return n;
}

/** `n` tokens 't0 ', 't1 ', … */
export const fakeTokens = (n: number) => Array.from({ length: n }, (_, i) => `t${i} `);

function abortError(): Error {
  const e = new Error('aborted');
  e.name = 'AbortError';
  return e;
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(abortError());
  return new Promise((resolve, reject) => {
    const done = () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    };
    const timer = ms > 0 ? setTimeout(done, ms) : undefined;
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError());
    };
    signal.addEventListener('abort', onAbort, { once: true });
    if (ms <= 0) queueMicrotask(done);
  });
}

export function createFakeUpstreams(initial: FakeScript = { tokens: fakeTokens(5) }) {
  /** The script per upstream model name; `default` otherwise. */
  const scripts = new Map<string, FakeScript>();
  let fallback = initial;
  const calls: FakeCall[] = [];
  let inFlight = 0;
  let maxInFlight = 0;

  const scriptFor = (model: string) => scripts.get(model) ?? fallback;

  function adapter(config: UpstreamConfig): LlmUpstream {
    return {
      kind: config.kind,
      async countPromptTokens(_model, messages) {
        return fakePromptTokens(messages);
      },
      async *stream(request, signal): AsyncIterable<UpstreamEvent> {
        const script = scriptFor(request.model);
        const call: FakeCall = { upstreamId: config.id, request, delivered: 0, aborted: false, ended: false };
        calls.push(call);
        const onAbort = () => (call.aborted = true);
        signal.addEventListener('abort', onAbort, { once: true });
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          const f = script.fault;
          if (f?.kind === 'refuse') throw new UpstreamError('refused', 'fake: connection refused', 503);
          if (f?.kind === 'busy') throw new UpstreamError('busy', 'fake: queue full');
          if (f?.kind === 'timeout') {
            await wait(script.delayMs ?? 0, signal);
            throw new UpstreamError('timeout', 'fake: no answer in time');
          }
          if (f?.kind === 'garbage') throw new UpstreamError('bad_response', 'fake: not a chat completion stream');
          const n = Math.min(script.tokens.length, request.maxTokens);
          for (let i = 0; i < n; i++) {
            await wait(script.delayMs ?? 0, signal);
            if (f?.kind === 'close' && i >= f.after) throw new UpstreamError('closed', 'fake: connection closed mid-stream');
            call.delivered++;
            yield { type: 'delta', text: script.tokens[i] ?? '', tokens: 1 };
          }
          if (script.usage !== false) {
            yield { type: 'usage', promptTokens: fakePromptTokens(request.messages), completionTokens: n + (script.usageExtra ?? 0) };
          }
          yield { type: 'finish', reason: n < script.tokens.length ? 'length' : 'stop' };
          call.ended = true;
        } finally {
          inFlight--;
          signal.removeEventListener('abort', onAbort);
        }
      },
      async health(): Promise<UpstreamHealthResult> {
        return { ok: true, latencyMs: 0, models: [...scripts.keys()], error: null };
      },
      async close() {},
    };
  }

  const built = new Map<number, LlmUpstream>();
  const registry: UpstreamRegistry = {
    get(config) {
      let a = built.get(config.id);
      if (!a) built.set(config.id, (a = adapter(config)));
      return a;
    },
    async forget(id) {
      built.delete(id);
    },
    async closeAll() {
      built.clear();
    },
  };

  return {
    registry,
    calls,
    /** Every call of models without their own script. */
    setDefault(script: FakeScript) {
      fallback = script;
    },
    /** The script of one upstream model name. */
    setScript(upstreamModel: string, script: FakeScript) {
      scripts.set(upstreamModel, script);
    },
    get maxInFlight() {
      return maxInFlight;
    },
    get inFlight() {
      return inFlight;
    },
  };
}
export type FakeUpstreams = ReturnType<typeof createFakeUpstreams>;
