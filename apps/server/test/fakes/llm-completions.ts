import { llmCost } from '@suanli/contract/llm';
import type { LlmError } from '../../src/modules/llm/errors.ts';
import type { CompletionCaller, CompletionInput, CompletionResult, CompletionService } from '../../src/modules/llm/types.ts';

/**
 * A scripted CompletionService for the console chat's tests. Each call takes the next script (or
 * the default): `refuse` throws before anything (like a hold refused: nothing charged); otherwise
 * each part is a delta (one completion token) or a pause (awaited, ended early by the abort
 * signal); `failWith` ends it as an upstream failure after the parts; `hang` waits for the abort.
 * An abort ends it with finishReason 'aborted' and the tokens so far, charged like the real service.
 * Prompt tokens: ceil(characters / 4) over the messages.
 */
export type CompletionScript = {
  refuse?: LlmError;
  parts?: Array<string | (() => Promise<void>)>;
  finishReason?: 'stop' | 'length';
  failWith?: LlmError;
  hang?: boolean;
};

export type FakeCompletions = CompletionService & {
  calls: Array<{ caller: CompletionCaller; input: CompletionInput }>;
  /** Scripts for the next calls, in order. */
  script(...s: CompletionScript[]): void;
};

const DEFAULT: CompletionScript = { parts: ['你好', '，我是助手。'] };

export function createFakeCompletions(): FakeCompletions {
  const queue: CompletionScript[] = [];
  const calls: FakeCompletions['calls'] = [];

  const untilAbort = (signal: AbortSignal, wait: Promise<void>) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) return resolve();
      const onAbort = () => resolve();
      signal.addEventListener('abort', onAbort, { once: true });
      wait.then(
        () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        (e: unknown) => reject(e instanceof Error ? e : new Error(String(e))),
      );
    });

  return {
    calls,
    script(...s) {
      queue.push(...s);
    },
    async run(caller, input, opts) {
      calls.push({ caller, input });
      const s = queue.shift() ?? DEFAULT;
      if (s.refuse) throw s.refuse;
      const started = Date.now();
      const promptTokens = Math.ceil(input.messages.reduce((n, m) => n + m.content.length, 0) / 4);
      let text = '';
      let completionTokens = 0;
      let ttftMs: number | null = null;
      const end = (finishReason: CompletionResult['finishReason'], error: LlmError | null = null): CompletionResult => ({
        text,
        promptTokens,
        completionTokens,
        cost: llmCost(promptTokens, completionTokens, input.model.inputPrice, input.model.outputPrice),
        finishReason,
        error,
        latencyMs: Date.now() - started,
        ttftMs,
        balanceAfter: 0,
      });
      for (const part of s.parts ?? []) {
        if (opts.signal.aborted) return end('aborted');
        if (typeof part === 'string') {
          text += part;
          completionTokens += 1;
          ttftMs ??= Date.now() - started;
          opts.onDelta?.(part);
        } else {
          await untilAbort(opts.signal, part());
        }
      }
      if (s.hang) await untilAbort(opts.signal, new Promise<void>(() => {}));
      if (opts.signal.aborted) return end('aborted');
      if (s.failWith) return end('error', s.failWith);
      return end(s.finishReason ?? 'stop');
    },
  };
}
