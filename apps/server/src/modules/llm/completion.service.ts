import { performance } from 'node:perf_hooks';
import { UpstreamError, type UpstreamRegistry } from '../../adapters/llm/port.ts';
import type { Clock } from '../../lib/clock.ts';
import { LlmError, LlmErrors } from './errors.ts';
import type { CompletionResult, CompletionService, Hold, LlmBilling } from './types.ts';

type Logger = { warn: (o: object, m?: string) => void; error: (o: object, m?: string) => void };

/** The LlmError an upstream failure is answered with: timeout 504, busy 429, the rest 502. */
export function upstreamErrorOf(err: unknown): LlmError {
  if (err instanceof LlmError) return err;
  if (err instanceof UpstreamError) {
    if (err.failure === 'timeout') return LlmErrors.upstreamTimeout();
    if (err.failure === 'busy') return LlmErrors.busy();
  }
  return LlmErrors.upstreamFailed();
}

/** HTTP status recorded for a client that went away (nginx's "client closed request"). */
export const CLIENT_CLOSED = 499;

/**
 * The completion pipeline shared by the /v1 gateway and the console's chat: count the prompt,
 * check the context, hold the most the call can cost, stream from the upstream passing each delta
 * on as it arrives, and settle exactly what arrived.
 *
 * What is charged:
 * - the upstream's usage when it reported one, else the prompt bound plus the completion tokens
 *   counted on the deltas (never more than the hold: billing clamps);
 * - nothing when no token arrived — a refusal, timeout, garbage answer or a client that left before
 *   the first token. The upstream did no work the user received, so the hold is released in full
 *   (the usage row is still written, cost 0, with the status);
 * - after the first token, a failure or an abort charges the prompt and the tokens delivered so far.
 */
export function createCompletionService(deps: { billing: LlmBilling; upstreams: UpstreamRegistry; clock: Clock; log?: Logger }): CompletionService {
  const { billing } = deps;
  // Settlements in progress: the HTTP answer may already be out (onFinish), so tests and a graceful
  // shutdown wait for these before reading balances or closing the database.
  const pending = new Set<Promise<unknown>>();

  return {
    async drain() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    async run(caller, input, { signal, onDelta, onFinish }): Promise<CompletionResult> {
      const started = performance.now();
      const { model } = input;
      let upstream;
      let promptTokens: number;
      try {
        upstream = deps.upstreams.get(model.upstream);
        promptTokens = await upstream.countPromptTokens(model.upstreamModel, input.messages);
      } catch (err) {
        deps.log?.warn({ err, model: model.modelId }, 'llm upstream unavailable');
        throw upstreamErrorOf(err);
      }
      const ctx = model.contextLength;
      if (promptTokens + 1 > ctx) throw LlmErrors.contextTooLong(promptTokens, ctx);
      const room = ctx - promptTokens;
      const maxCompletionTokens = Math.min(input.maxTokens ?? room, room);
      const hold: Hold = await billing.hold({ caller, model, promptTokens, maxCompletionTokens, exact: input.maxTokens !== undefined });

      const ac = new AbortController();
      const onAbort = () => ac.abort();
      if (signal.aborted) ac.abort();
      else signal.addEventListener('abort', onAbort, { once: true });

      let text = '';
      let counted = 0;
      let ttft: number | null = null;
      let usage: { promptTokens: number; completionTokens: number } | undefined;
      let finish: 'stop' | 'length' | undefined;
      let failure: LlmError | null = null;
      try {
        const events = upstream.stream(
          {
            model: model.upstreamModel,
            messages: input.messages,
            maxTokens: hold.completionTokens,
            ...(input.temperature !== undefined ? { temperature: input.temperature } : {}),
            ...(input.topP !== undefined ? { topP: input.topP } : {}),
            ...(input.stop !== undefined ? { stop: input.stop } : {}),
            ...(input.seed !== undefined ? { seed: input.seed } : {}),
          },
          ac.signal,
        );
        for await (const ev of events) {
          if (ac.signal.aborted) break;
          if (ev.type === 'delta') {
            // An upstream that ignores max_tokens is cut where the hold ends.
            if (counted + ev.tokens > hold.completionTokens) {
              finish = 'length';
              break;
            }
            if (ttft === null) ttft = performance.now() - started;
            counted += ev.tokens;
            text += ev.text;
            if (ev.text) onDelta?.(ev.text);
          } else if (ev.type === 'usage') {
            usage = { promptTokens: ev.promptTokens, completionTokens: ev.completionTokens };
          } else {
            finish = ev.reason;
          }
        }
      } catch (err) {
        if (!ac.signal.aborted) {
          failure = upstreamErrorOf(err);
          if (!(err instanceof UpstreamError)) deps.log?.error({ err, model: model.modelId }, 'llm upstream stream failed unexpectedly');
          else deps.log?.warn({ failure: err.failure, msg: err.message, model: model.modelId }, 'llm upstream failed');
        }
      } finally {
        signal.removeEventListener('abort', onAbort);
        if (!finish || failure) ac.abort(); // stop whatever the upstream still does
      }

      const aborted = signal.aborted && failure === null && finish === undefined;
      const latencyMs = performance.now() - started;
      const anyToken = ttft !== null || (finish !== undefined && failure === null);
      const charged = anyToken
        ? usage && finish !== undefined && !aborted
          ? usage
          : { promptTokens: usage?.promptTokens ?? promptTokens, completionTokens: Math.max(counted, 0) }
        : { promptTokens: 0, completionTokens: 0 };
      const status = aborted ? CLIENT_CLOSED : failure ? failure.status : 200;
      if (!aborted && anyToken) {
        try {
          onFinish?.({ text, promptTokens: charged.promptTokens, completionTokens: charged.completionTokens, finishReason: failure ? 'error' : (finish ?? 'stop'), error: failure });
        } catch (err) {
          deps.log?.error({ err }, 'llm onFinish failed');
        }
      }
      const settling = billing.settle(hold, caller, model, {
        promptTokens: charged.promptTokens,
        completionTokens: charged.completionTokens,
        status,
        errorCode: aborted ? 'client_closed' : (failure?.code ?? ''),
        latencyMs,
        ttftMs: ttft,
        stream: input.stream,
      });
      pending.add(settling);
      void settling.finally(() => pending.delete(settling)).catch(() => {});
      const settled = await settling;
      // Refused before anything arrived: the caller answers the error (nothing was charged).
      if (failure && ttft === null) throw failure;
      return {
        text,
        promptTokens: charged.promptTokens,
        completionTokens: charged.completionTokens,
        cost: settled.cost,
        finishReason: aborted ? 'aborted' : failure ? 'error' : (finish ?? 'stop'),
        error: failure,
        latencyMs,
        ttftMs: ttft,
        balanceAfter: settled.balanceAfter,
      };
    },
  };
}
