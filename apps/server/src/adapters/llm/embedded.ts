/**
 * The embedded upstream (issue #9): a GGUF model run by node-llama-cpp on this server's CPU. One
 * model and one context per upstream, loaded on first use and shared; the context has
 * `maxConcurrency` sequences (at most MAX_SEQUENCES), so that many generations run at once (batched
 * together), `maxConcurrency` more wait in line, and beyond that a call is refused with
 * UpstreamError('busy').
 *
 * Prompt tokens are counted exactly: the messages are rendered with the chat template the GGUF
 * declares (node-llama-cpp resolves the chat wrapper from the file, ChatML for SmolLM2 and Qwen) and
 * tokenized with the model's tokenizer — the same tokens the generation evaluates. Completion
 * tokens are the tokens generated, counted as they come. `req.model` is ignored: one model per
 * upstream. Without a temperature the library samples greedily (deterministic output).
 */
import fs from 'node:fs';
import os from 'node:os';
import { getLlama, LlamaChat, resolveChatWrapper, type ChatHistoryItem, type ChatWrapper, type Llama, type LlamaContext, type LlamaContextSequence, type LlamaModel } from 'node-llama-cpp';
import { UpstreamError, type ChatMessage, type LlmUpstream, type UpstreamConfig, type UpstreamEvent, type UpstreamHealthResult, type UpstreamRequest } from './port.ts';
import { abortError, createChannel, createSlots } from './slots.ts';

export type EmbeddedLog = { info: (obj: object, msg: string) => void; warn: (obj: object, msg: string) => void };

export type EmbeddedDeps = {
  /** The GGUF used when the upstream's modelPath is '' (LLM_MODEL_PATH, else the bundled SmolLM2). */
  defaultModelPath: string;
  /** CPU threads for evaluation (LLM_THREADS); defaultLlmThreads() when unset. */
  threads?: number;
  log?: EmbeddedLog;
  /** Tokens of context per sequence (capped by the model's training context); 4096 by default. */
  contextSize?: number;
};

const CLOSE_GRACE_MS = 10_000;
/**
 * Generations batched at once, whatever maxConcurrency says (the rest wait in its line): each
 * sequence holds its own KV cache (SmolLM2-135M: ≈ 90 MiB per 4096 tokens), and on a CPU more
 * parallel sequences add no throughput.
 */
export const MAX_SEQUENCES = 8;

/**
 * Threads when LLM_THREADS is unset: half the logical CPUs (about the physical cores, llama.cpp's
 * own default), at least 1. Not all of them: llama.cpp's threads spin-wait on each other, and when
 * any is descheduled (the Node event loop, the database, another process) generation collapses —
 * measured on a loaded 2-core box: 2 threads 1 tok/s, 1 thread 22 tok/s.
 */
export function defaultLlmThreads(cpus = os.availableParallelism()): number {
  return Math.max(1, Math.ceil(cpus / 2));
}

/** The native runtime is loaded once per process and shared by every embedded upstream. */
let llamaPromise: Promise<Llama> | null = null;
function sharedLlama(): Promise<Llama> {
  llamaPromise ??= getLlama({ gpu: false, build: 'never', logLevel: 'error' as never }).catch((err: unknown) => {
    llamaPromise = null;
    throw err;
  });
  return llamaPromise;
}

type Runtime = { model: LlamaModel; context: LlamaContext; wrapper: ChatWrapper; free: LlamaContextSequence[] };

/** Messages as node-llama-cpp's chat history, ending with the (empty) model turn to generate. */
function toHistory(messages: ChatMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = messages.map((m) =>
    m.role === 'assistant' ? { type: 'model', response: [m.content] } : m.role === 'system' ? { type: 'system', text: m.content } : { type: 'user', text: m.content },
  );
  history.push({ type: 'model', response: [] });
  return history;
}

export function createEmbeddedUpstream(config: UpstreamConfig, deps: EmbeddedDeps): LlmUpstream {
  const modelPath = config.modelPath.trim() || deps.defaultModelPath;
  const threads = deps.threads ?? defaultLlmThreads();
  const sequences = Math.min(MAX_SEQUENCES, Math.max(1, config.maxConcurrency));
  const slots = createSlots(sequences, Math.max(1, config.maxConcurrency), `embedded upstream ${config.id}`);
  let runtime: Promise<Runtime> | null = null;
  let closed = false;

  const load = (): Promise<Runtime> => {
    if (closed) return Promise.reject(new UpstreamError('unavailable', `embedded upstream ${config.id} is closed`));
    runtime ??= (async () => {
      if (!fs.existsSync(modelPath)) throw new UpstreamError('unavailable', `embedded model file not found: ${modelPath} (run npm run llm:fetch, or set LLM_MODEL_PATH)`);
      const started = Date.now();
      const llama = await sharedLlama();
      const model = await llama.loadModel({ modelPath });
      try {
        const contextSize = Math.min(model.trainContextSize, deps.contextSize ?? 4096);
        const context = await model.createContext({ sequences, contextSize, threads });
        const free = Array.from({ length: sequences }, () => context.getSequence());
        const wrapper = resolveChatWrapper(model); // from the GGUF's chat template
        deps.log?.info({ modelPath, ms: Date.now() - started, threads, sequences, contextSize, chatTemplate: wrapper.wrapperName }, 'embedded model loaded');
        return { model, context, wrapper, free };
      } catch (err) {
        await model.dispose();
        throw err;
      }
    })().catch((err: unknown) => {
      runtime = null;
      if (err instanceof UpstreamError) throw err;
      throw new UpstreamError('unavailable', `embedded model ${modelPath} could not be loaded: ${err instanceof Error ? err.message : String(err)}`);
    });
    return runtime;
  };

  const promptTokens = (rt: Runtime, messages: ChatMessage[]) => rt.wrapper.generateContextState({ chatHistory: toHistory(messages) }).contextText.tokenize(rt.model.tokenizer).length;

  /**
   * `timeoutMs` bounds the wait for the first token — in line, loading the model, reading the
   * prompt — like an HTTP upstream's first byte: past it the call fails UpstreamError('timeout').
   */
  async function* stream(req: UpstreamRequest, signal: AbortSignal): AsyncGenerator<UpstreamEvent> {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new UpstreamError('timeout', `embedded upstream ${config.id}: no first token within ${config.timeoutMs} ms`)), config.timeoutMs);
    const either = AbortSignal.any([signal, deadline.signal]);
    const failure = () => (signal.aborted ? abortError(signal) : (deadline.signal.reason as UpstreamError));
    let release: (() => void) | undefined;
    let sequence: LlamaContextSequence | undefined;
    let rt: Runtime | undefined;
    let chat: LlamaChat | undefined;
    let generation: Promise<unknown> | undefined;
    const stop = new AbortController();
    const onAbort = () => stop.abort(either.reason);
    try {
      release = await slots.acquire(either).catch((err: unknown) => {
        throw either.aborted ? failure() : err;
      });
      rt = await load();
      if (either.aborted) throw failure();
      sequence = rt.free.pop();
      if (!sequence) throw new UpstreamError('busy', `embedded upstream ${config.id}: no free sequence`);
      await sequence.clearHistory();
      const prompt = promptTokens(rt, req.messages);
      chat = new LlamaChat({ contextSequence: sequence, chatWrapper: rt.wrapper, autoDisposeSequence: false });
      const channel = createChannel<UpstreamEvent>();
      let pending = 0;
      let generated = 0;
      either.addEventListener('abort', onAbort, { once: true });
      if (either.aborted) throw failure();
      generation = chat
        .generateResponse(toHistory(req.messages), {
          maxTokens: req.maxTokens,
          temperature: req.temperature,
          topP: req.topP,
          seed: req.seed,
          customStopTriggers: req.stop?.length ? req.stop : undefined,
          signal: stop.signal,
          stopOnAbortSignal: true,
          onToken: (tokens) => {
            clearTimeout(timer);
            pending += tokens.length;
            generated += tokens.length;
          },
          onTextChunk: (text) => {
            if (!text) return;
            channel.push({ type: 'delta', text, tokens: pending });
            pending = 0;
          },
        })
        .then(
          (res) => {
            if (either.aborted) return channel.fail(failure());
            channel.push({ type: 'usage', promptTokens: prompt, completionTokens: generated });
            channel.push({ type: 'finish', reason: res.metadata.stopReason === 'maxTokens' ? 'length' : 'stop' });
            channel.end();
          },
          (err: unknown) => channel.fail(either.aborted ? failure() : new UpstreamError('bad_response', `embedded generation failed: ${err instanceof Error ? err.message : String(err)}`)),
        );
      yield* channel;
    } finally {
      clearTimeout(timer);
      either.removeEventListener('abort', onAbort);
      stop.abort(); // the consumer stopped early: stop generating
      await generation?.catch(() => {});
      chat?.dispose();
      if (sequence && rt) rt.free.push(sequence);
      release?.();
    }
  }

  return {
    kind: 'embedded',
    async countPromptTokens(_model, messages) {
      return promptTokens(await load(), messages);
    },
    stream,
    async health(): Promise<UpstreamHealthResult> {
      const started = performance.now();
      try {
        const rt = await load();
        const name = rt.model.fileInfo.metadata.general.name;
        return { ok: true, latencyMs: Math.round(performance.now() - started), models: [typeof name === 'string' && name ? name : modelPath], error: null };
      } catch (err) {
        return { ok: false, latencyMs: Math.round(performance.now() - started), models: [], error: err instanceof Error ? err.message : String(err) };
      }
    },
    async close() {
      closed = true;
      // calls in flight finish first (a rebuilt upstream's old adapter), for at most CLOSE_GRACE_MS
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([slots.idle(), new Promise<void>((r) => (grace = setTimeout(r, CLOSE_GRACE_MS)))]);
      clearTimeout(grace);
      const rt = await runtime?.catch(() => null);
      runtime = null;
      if (rt) {
        await rt.context.dispose();
        await rt.model.dispose();
      }
    },
  };
}
