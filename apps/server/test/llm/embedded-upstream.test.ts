/**
 * The embedded upstream against the real bundled SmolLM2-135M-Instruct (CPU): loaded once, a few
 * short generations. The tokenizer check loads the same GGUF vocabulary-only, independently.
 */
import { getLlama, type LlamaModel } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedUpstream } from '../../src/adapters/llm/embedded.ts';
import { UpstreamError, type ChatMessage, type LlmUpstream, type UpstreamConfig, type UpstreamEvent } from '../../src/adapters/llm/port.ts';
import { testModelPath } from '../helpers/llm-weights.ts';

const config = (over: Partial<UpstreamConfig> = {}): UpstreamConfig => ({
  id: 7,
  kind: 'embedded',
  baseUrl: '',
  apiKey: null,
  modelPath: '',
  timeoutMs: 60_000,
  maxConcurrency: 1,
  version: '1',
  ...over,
});
// one thread: llama.cpp's threads spin-wait on each other and crawl on a shared, busy machine
const threads = 1;
const counting: ChatMessage[] = [
  { role: 'system', content: 'You are helpful.' },
  { role: 'user', content: 'Count from 1 to 20.' },
];

let up: LlmUpstream;
let vocab: LlamaModel;
beforeAll(async () => {
  const modelPath = await testModelPath();
  up = createEmbeddedUpstream(config(), { defaultModelPath: modelPath, threads });
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: 'error' as never });
  vocab = await llama.loadModel({ modelPath, vocabOnly: true });
}, 120_000);
afterAll(async () => {
  await up?.close();
  await vocab?.dispose();
});

async function collect(it: AsyncIterable<UpstreamEvent>) {
  const events: UpstreamEvent[] = [];
  for await (const ev of it) events.push(ev);
  return events;
}
const text = (events: UpstreamEvent[]) => events.map((e) => (e.type === 'delta' ? e.text : '')).join('');

describe('embedded upstream (SmolLM2-135M-Instruct on the CPU)', { timeout: 90_000 }, () => {
  it('health loads the model and reports it', async () => {
    const health = await up.health();
    expect(health).toMatchObject({ ok: true, error: null });
    expect(health.models).toHaveLength(1);
    expect(health.models[0]).toMatch(/smollm2/i);
  });

  it('counts prompt tokens exactly with the model chat template (ChatML)', async () => {
    const count = await up.countPromptTokens('ignored', counting);
    const chatml = '<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nCount from 1 to 20.<|im_end|>\n<|im_start|>assistant\n';
    const bos = vocab.tokens.bos === null ? 0 : 1;
    expect(count).toBe(bos + vocab.tokenize(chatml, true).length);
    expect(await up.countPromptTokens('ignored', [...counting, { role: 'assistant', content: '1, 2, 3' }, { role: 'user', content: 'go on' }])).toBeGreaterThan(count + 5);
  });

  it('streams deltas, then exact usage, then finish length at maxTokens', async () => {
    const events = await collect(up.stream({ model: 'ignored', messages: counting, maxTokens: 12, temperature: 0 }, new AbortController().signal));
    const deltas = events.filter((e) => e.type === 'delta');
    const usage = events.find((e) => e.type === 'usage');
    expect(deltas.length).toBeGreaterThan(1);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'length' });
    expect(events.at(-2)).toBe(usage);
    expect(usage).toEqual({ type: 'usage', promptTokens: await up.countPromptTokens('x', counting), completionTokens: 12 });
    // the generated text re-tokenizes to the tokens counted, and the deltas carry them
    expect(vocab.tokenize(text(events)).length).toBe(12);
    const carried = deltas.reduce((n, d) => n + d.tokens, 0);
    expect(carried).toBeLessThanOrEqual(12);
    expect(carried).toBeGreaterThanOrEqual(10);
  });

  it('a stop sequence ends the answer before it, finish stop', async () => {
    const events = await collect(up.stream({ model: 'x', messages: counting, maxTokens: 40, temperature: 0, stop: ['5'] }, new AbortController().signal));
    expect(text(events)).toContain('4');
    expect(text(events)).not.toContain('5');
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
  });

  it('same seed and temperature → same answer', async () => {
    const req = { model: 'x', messages: [{ role: 'user' as const, content: 'Write a word.' }], maxTokens: 6, temperature: 1, topP: 0.9, seed: 42 };
    const a = text(await collect(up.stream(req, new AbortController().signal)));
    const b = text(await collect(up.stream(req, new AbortController().signal)));
    expect(a).toBe(b);
    expect(a.length).toBeGreaterThan(0);
  });

  it('really streams, and an abort mid-generation stops it promptly', async () => {
    const ctl = new AbortController();
    const seen: UpstreamEvent[] = [];
    let thrown: unknown = null;
    const started = performance.now();
    try {
      for await (const ev of up.stream({ model: 'x', messages: counting, maxTokens: 400, temperature: 0 }, ctl.signal)) {
        seen.push(ev);
        if (seen.length === 2) ctl.abort();
      }
    } catch (err) {
      thrown = err;
    }
    expect((thrown as Error).name).toBe('AbortError');
    // deltas came while generating: two, then the abort, not the 400 tokens asked for
    expect(seen.every((e) => e.type === 'delta')).toBe(true);
    expect(seen.length).toBeLessThanOrEqual(3);
    expect(performance.now() - started).toBeLessThan(20_000);
    // the sequence is free again
    const again = await collect(up.stream({ model: 'x', messages: counting, maxTokens: 3, temperature: 0 }, new AbortController().signal));
    expect(again.at(-1)).toEqual({ type: 'finish', reason: 'length' });
  });

  it('maxConcurrency run, as many wait, beyond → busy', async () => {
    const signal = new AbortController().signal;
    const req = { model: 'x', messages: counting, maxTokens: 4, temperature: 0 };
    const running = collect(up.stream(req, signal));
    const waiting = collect(up.stream(req, signal));
    const refused = collect(up.stream(req, signal));
    await expect(refused).rejects.toBeInstanceOf(UpstreamError);
    await expect(refused).rejects.toMatchObject({ failure: 'busy' });
    const [a, b] = await Promise.all([running, waiting]);
    expect(text(a)).toBe(text(b));
    expect(a.at(-1)).toEqual({ type: 'finish', reason: 'length' });
  });

  it('no first token within timeoutMs (loading, in line) → timeout', async () => {
    const slow = createEmbeddedUpstream(config({ id: 8, timeoutMs: 50 }), { defaultModelPath: await testModelPath(), threads });
    try {
      await expect(collect(slow.stream({ model: 'x', messages: counting, maxTokens: 2 }, new AbortController().signal))).rejects.toMatchObject({ failure: 'timeout' });
    } finally {
      await slow.close();
    }
  });

  it('a missing model file: health says why, a call fails unavailable; close then refuses calls', async () => {
    const missing = createEmbeddedUpstream(config({ modelPath: '/nonexistent/model.gguf' }), { defaultModelPath: '/unused', threads });
    const health = await missing.health();
    expect(health.ok).toBe(false);
    expect(health.error).toContain('/nonexistent/model.gguf');
    await expect(collect(missing.stream({ model: 'x', messages: counting, maxTokens: 2 }, new AbortController().signal))).rejects.toMatchObject({ failure: 'unavailable' });
    await missing.close();
    await expect(missing.countPromptTokens('x', counting)).rejects.toMatchObject({ failure: 'unavailable' });
  });
});
