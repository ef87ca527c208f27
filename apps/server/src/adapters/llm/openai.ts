/**
 * The `openai` upstream (issue #9): any OpenAI-compatible chat-completions server (vLLM, Ollama,
 * llama.cpp server, hosted APIs), streamed over Server-Sent Events.
 *
 * Faults become UpstreamError: connection refused / unreachable → 'refused'; an HTTP error →
 * 'refused' with its status (429 → 'busy'); no answer within timeoutMs, or no bytes for timeoutMs
 * mid-stream → 'timeout'; a frame that isn't JSON → 'bad_response'; the socket closing before the
 * finish → 'closed'. At most `maxConcurrency` calls run at once, as many wait, more → 'busy'.
 */
import { UpstreamError, type ChatMessage, type LlmUpstream, type UpstreamConfig, type UpstreamEvent, type UpstreamHealthResult, type UpstreamRequest } from './port.ts';
import { abortError, createSlots } from './slots.ts';

export type OpenAiDeps = { fetch?: typeof fetch };

/** Per-message framing of chat templates (role markers, separators), and the reply's primer. */
const PER_MESSAGE = 4;
const REPLY_PRIMER = 3;

/**
 * Upper bound of a prompt's tokens without the remote model's tokenizer: one token per Unicode code
 * point plus 4 per message and 3 for the reply's primer. Byte-level BPE tokenizers (GPT, Llama 3,
 * Qwen, Mistral…) practically never emit more tokens than code points: a token covers at least one
 * whole character except for rare characters split into byte pieces — which in practice are
 * outweighed by the multi-character tokens around them.
 */
export function countCodePointTokens(messages: ChatMessage[]): number {
  let n = REPLY_PRIMER;
  for (const m of messages) {
    n += PER_MESSAGE;
    for (let i = 0; i < m.content.length; i++) {
      const c = m.content.charCodeAt(i);
      // a surrogate pair is one code point
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < m.content.length) {
        const d = m.content.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) i++;
      }
      n++;
    }
  }
  return n;
}

/**
 * Incremental Server-Sent Events parser: feed it text as it arrives (split anywhere, CRLF / CR / LF
 * line ends, comments), get each event's data.
 */
export function createSseParser() {
  let buffer = '';
  let data: string[] = [];
  let hasData = false;
  const takeLines = (final: boolean): string[] => {
    const out: string[] = [];
    for (;;) {
      const lf = buffer.indexOf('\n');
      const cr = buffer.indexOf('\r');
      let end = -1;
      let skip = 1;
      if (cr >= 0 && (lf < 0 || cr < lf)) {
        // a CR at the very end may be the first half of a CRLF still in flight
        if (cr === buffer.length - 1 && !final) break;
        end = cr;
        if (buffer[cr + 1] === '\n') skip = 2;
      } else if (lf >= 0) {
        end = lf;
      }
      if (end < 0) break;
      out.push(buffer.slice(0, end));
      buffer = buffer.slice(end + skip);
    }
    if (final && buffer) {
      out.push(buffer);
      buffer = '';
    }
    return out;
  };
  const handle = (lines: string[], events: string[]) => {
    for (const line of lines) {
      if (line === '') {
        if (hasData) events.push(data.join('\n'));
        data = [];
        hasData = false;
        continue;
      }
      if (line.startsWith(':')) continue; // comment / keep-alive
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') {
        data.push(value);
        hasData = true;
      }
    }
  };
  return {
    /** Returns the data of every event completed by this text. */
    push(text: string): string[] {
      buffer += text;
      const events: string[] = [];
      handle(takeLines(false), events);
      return events;
    },
    /** The stream ended: an event without its final blank line still counts. */
    end(): string[] {
      const events: string[] = [];
      handle(takeLines(true), events);
      if (hasData) events.push(data.join('\n'));
      data = [];
      hasData = false;
      return events;
    },
  };
}

type Chunk = {
  choices?: { delta?: { content?: string | null }; message?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string } | string;
};

const TIMEOUT = Symbol('timeout');

function networkFailure(err: unknown, where: string): UpstreamError {
  const cause = (err as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  const code = cause?.code ?? (err as { code?: string } | undefined)?.code;
  const detail = cause?.message ?? (err instanceof Error ? err.message : String(err));
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return new UpstreamError('closed', `${where}: connection closed (${detail})`);
  return new UpstreamError('refused', `${where}: ${code ? `${code} ` : ''}${detail}`);
}

const finishReason = (r: string): 'stop' | 'length' => (r === 'length' ? 'length' : 'stop');

export function createOpenAiUpstream(config: UpstreamConfig, deps: OpenAiDeps = {}): LlmUpstream {
  const doFetch = deps.fetch ?? fetch;
  const base = config.baseUrl.trim().replace(/\/+$/, '');
  const label = `openai upstream ${config.id} (${base})`;
  const limit = Math.max(1, config.maxConcurrency);
  const slots = createSlots(limit, limit, label);
  const headers = (json: boolean): Record<string, string> => ({
    accept: json ? 'application/json' : 'text/event-stream',
    ...(json ? {} : { 'content-type': 'application/json' }),
    ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
  });

  async function* stream(req: UpstreamRequest, signal: AbortSignal): AsyncGenerator<UpstreamEvent> {
    const release = await slots.acquire(signal);
    const ctl = new AbortController();
    const onAbort = () => ctl.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => ctl.abort(TIMEOUT), config.timeoutMs);
    };
    const fail = (err: unknown, phase: string): never => {
      if (signal.aborted) throw abortError(signal);
      if (ctl.signal.reason === TIMEOUT) throw new UpstreamError('timeout', `${label}: no ${phase} within ${config.timeoutMs} ms`);
      if (err instanceof UpstreamError) throw err;
      throw networkFailure(err, label);
    };
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    try {
      if (signal.aborted) throw abortError(signal);
      arm();
      const body = {
        model: req.model,
        messages: req.messages,
        max_tokens: req.maxTokens,
        ...(req.temperature === undefined ? {} : { temperature: req.temperature }),
        ...(req.topP === undefined ? {} : { top_p: req.topP }),
        ...(req.stop?.length ? { stop: req.stop } : {}),
        ...(req.seed === undefined ? {} : { seed: req.seed }),
        stream: true,
        stream_options: { include_usage: true },
      };
      const res = await doFetch(`${base}/chat/completions`, { method: 'POST', headers: headers(false), body: JSON.stringify(body), signal: ctl.signal }).catch((err: unknown) => fail(err, 'answer'));
      if (!res.ok) {
        const text = await res.text().catch(() => '');
        const detail = text.slice(0, 300).replace(/\s+/g, ' ').trim();
        throw new UpstreamError(res.status === 429 ? 'busy' : 'refused', `${label}: HTTP ${res.status}${detail ? `: ${detail}` : ''}`, res.status);
      }
      if (!res.body) throw new UpstreamError('bad_response', `${label}: empty body`);
      arm();
      const contentType = res.headers.get('content-type') ?? '';
      const decoder = new TextDecoder();
      const parser = createSseParser();
      let usage: { promptTokens: number; completionTokens: number } | null = null;
      let finish: 'stop' | 'length' | null = null;
      let done = false;

      const onData = (payload: string): UpstreamEvent[] => {
        if (payload.trim() === '[DONE]') {
          done = true;
          return [];
        }
        let chunk: Chunk;
        try {
          chunk = JSON.parse(payload) as Chunk;
        } catch {
          throw new UpstreamError('bad_response', `${label}: a frame is not JSON: ${payload.slice(0, 120)}`);
        }
        if (!chunk || typeof chunk !== 'object') throw new UpstreamError('bad_response', `${label}: a frame is not an object`);
        if (chunk.error) throw new UpstreamError('bad_response', `${label}: error in stream: ${typeof chunk.error === 'string' ? chunk.error : (chunk.error.message ?? 'unknown')}`);
        const out: UpstreamEvent[] = [];
        const choice = chunk.choices?.[0];
        const content = choice?.delta?.content ?? choice?.message?.content;
        if (typeof content === 'string' && content) out.push({ type: 'delta', text: content, tokens: 1 });
        if (choice?.finish_reason) finish = finishReason(choice.finish_reason);
        if (chunk.usage && typeof chunk.usage.prompt_tokens === 'number' && typeof chunk.usage.completion_tokens === 'number') {
          usage = { promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens };
        }
        return out;
      };

      if (contentType.includes('application/json')) {
        // a server that ignored `stream: true`: one whole completion
        const text = await res.text().catch((err: unknown) => fail(err, 'body'));
        const [delta] = onData(text);
        if (delta && delta.type === 'delta' && usage) delta.tokens = (usage as { completionTokens: number }).completionTokens;
        if (delta) yield delta;
        done = true;
      } else {
        reader = res.body.getReader();
        while (!done) {
          const { value, done: ended } = await reader.read().catch((err: unknown) => fail(err, 'bytes'));
          if (ended) {
            for (const payload of parser.end()) for (const ev of onData(payload)) yield ev;
            break;
          }
          // the clock stops while the caller handles what we yield (a slow client is not a stalled upstream)
          clearTimeout(timer);
          for (const payload of parser.push(decoder.decode(value, { stream: true }))) {
            for (const ev of onData(payload)) yield ev;
            if (done) break;
          }
          arm();
        }
      }
      if (!done && !finish) throw new UpstreamError('closed', `${label}: the stream ended before its finish`);
      const u = usage as { promptTokens: number; completionTokens: number } | null;
      if (u) yield { type: 'usage', promptTokens: u.promptTokens, completionTokens: u.completionTokens };
      yield { type: 'finish', reason: finish ?? 'stop' };
    } catch (err) {
      if (signal.aborted) throw abortError(signal);
      if (err instanceof UpstreamError) throw err;
      fail(err, 'bytes');
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      // stopped early (abort, error, or the consumer left): drop the HTTP request
      if (!ctl.signal.aborted) ctl.abort(new DOMException('done', 'AbortError'));
      await reader?.cancel().catch(() => {});
      release();
    }
  }

  return {
    kind: 'openai',
    countPromptTokens(_model, messages) {
      return Promise.resolve(countCodePointTokens(messages));
    },
    stream,
    async health(): Promise<UpstreamHealthResult> {
      const started = performance.now();
      const latencyMs = () => Math.round(performance.now() - started);
      try {
        const res = await doFetch(`${base}/models`, { headers: headers(true), signal: AbortSignal.timeout(Math.min(config.timeoutMs, 10_000)) });
        if (!res.ok) return { ok: false, latencyMs: latencyMs(), models: [], error: `HTTP ${res.status}` };
        const body = (await res.json()) as { data?: { id?: unknown }[] };
        const models = Array.isArray(body?.data) ? body.data.map((m) => m?.id).filter((id): id is string => typeof id === 'string') : [];
        return { ok: true, latencyMs: latencyMs(), models, error: null };
      } catch (err) {
        const e = err instanceof Error && err.name === 'TimeoutError' ? new UpstreamError('timeout', 'no answer') : networkFailure(err, 'GET /models');
        return { ok: false, latencyMs: latencyMs(), models: [], error: e.message };
      }
    },
    close() {
      return Promise.resolve();
    },
  };
}
