import net from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAiUpstream, createSseParser, countCodePointTokens } from '../../src/adapters/llm/openai.ts';
import { UpstreamError, type UpstreamConfig, type UpstreamEvent, type UpstreamRequest } from '../../src/adapters/llm/port.ts';
import { startFakeOpenAi, type FakeOpenAi } from '../fakes/openai-server.ts';

let fake: FakeOpenAi;
beforeAll(async () => {
  fake = await startFakeOpenAi();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.setScript({});
  fake.requests.length = 0;
});

const config = (over: Partial<UpstreamConfig> = {}): UpstreamConfig => ({
  id: 1,
  kind: 'openai',
  baseUrl: fake.url,
  apiKey: 'sk-upstream-secret',
  modelPath: '',
  timeoutMs: 2_000,
  maxConcurrency: 4,
  version: 'v1',
  ...over,
});
const request = (over: Partial<UpstreamRequest> = {}): UpstreamRequest => ({
  model: 'qwen-test',
  messages: [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'hi' },
  ],
  maxTokens: 50,
  ...over,
});

async function collect(it: AsyncIterable<UpstreamEvent>): Promise<UpstreamEvent[]> {
  const out: UpstreamEvent[] = [];
  for await (const ev of it) out.push(ev);
  return out;
}
async function failure(it: AsyncIterable<UpstreamEvent>): Promise<{ error: UpstreamError; events: UpstreamEvent[] }> {
  const events: UpstreamEvent[] = [];
  try {
    for await (const ev of it) events.push(ev);
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamError);
    return { error: error as UpstreamError, events };
  }
  throw new Error(`expected an UpstreamError, got ${JSON.stringify(events)}`);
}
const text = (events: UpstreamEvent[]) => events.map((e) => (e.type === 'delta' ? e.text : '')).join('');

describe('openai upstream: happy paths', () => {
  it('streams deltas, then usage, then finish; sends the request OpenAI-style with the bearer key', async () => {
    const up = createOpenAiUpstream(config());
    const events = await collect(up.stream(request({ temperature: 0.5, topP: 0.9, stop: ['\n\n'], seed: 7 }), new AbortController().signal));
    expect(events).toEqual([
      { type: 'delta', text: 'Hello', tokens: 1 },
      { type: 'delta', text: ',', tokens: 1 },
      { type: 'delta', text: ' world', tokens: 1 },
      { type: 'delta', text: '!', tokens: 1 },
      { type: 'usage', promptTokens: 11, completionTokens: 4 },
      { type: 'finish', reason: 'stop' },
    ]);
    const [req] = fake.requests;
    expect(req?.path).toBe('/v1/chat/completions');
    expect(req?.headers.authorization).toBe('Bearer sk-upstream-secret');
    expect(req?.body).toMatchObject({ model: 'qwen-test', max_tokens: 50, temperature: 0.5, top_p: 0.9, stop: ['\n\n'], seed: 7, stream: true, stream_options: { include_usage: true } });
    expect(req?.body?.messages).toEqual(request().messages);
    expect(await req?.done).toBe('finished');
  });

  it('no Authorization header without a key; max_tokens cut → finish length', async () => {
    fake.setScript({ tokens: ['a', 'b', 'c', 'd', 'e'] });
    const up = createOpenAiUpstream(config({ apiKey: null }));
    const events = await collect(up.stream(request({ maxTokens: 2 }), new AbortController().signal));
    expect(text(events)).toBe('ab');
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'length' });
    expect(fake.requests[0]?.headers.authorization).toBeUndefined();
    expect(fake.requests[0]?.body?.max_tokens).toBe(2);
  });

  it('without usage from the upstream: deltas then finish only', async () => {
    fake.setScript({ usage: false });
    const events = await collect(createOpenAiUpstream(config()).stream(request(), new AbortController().signal));
    expect(events.map((e) => e.type)).toEqual(['delta', 'delta', 'delta', 'delta', 'finish']);
  });

  it('CRLF line ends, keep-alive comments and frames split every 3 bytes parse the same', async () => {
    fake.setScript({ tokens: ['你好', '，', '世界', '🙂'], lineEnd: '\r\n', comments: true, splitBytes: 3 });
    const events = await collect(createOpenAiUpstream(config()).stream(request(), new AbortController().signal));
    expect(text(events)).toBe('你好，世界🙂');
    expect(events.slice(-2)).toEqual([
      { type: 'usage', promptTokens: 11, completionTokens: 4 },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('a server that ignores stream: one JSON completion becomes one delta', async () => {
    fake.setScript({ ignoreStream: true, tokens: ['x', 'y', 'z'] });
    const events = await collect(createOpenAiUpstream(config()).stream(request(), new AbortController().signal));
    expect(events).toEqual([
      { type: 'delta', text: 'xyz', tokens: 3 },
      { type: 'usage', promptTokens: 11, completionTokens: 3 },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('health lists the models with a latency; a refused health says why', async () => {
    fake.setScript({ models: ['m1', 'm2'] });
    const ok = await createOpenAiUpstream(config()).health();
    expect(ok).toMatchObject({ ok: true, models: ['m1', 'm2'], error: null });
    expect(ok.latencyMs).toBeGreaterThanOrEqual(0);
    expect(fake.requests[0]).toMatchObject({ method: 'GET', path: '/v1/models' });
    expect(fake.requests[0]?.headers.authorization).toBe('Bearer sk-upstream-secret');
    fake.setScript({ fault: { kind: 'refuse', status: 401 } });
    expect(await createOpenAiUpstream(config()).health()).toMatchObject({ ok: false, models: [], error: 'HTTP 401' });
  });

  it('countPromptTokens: code points + 4 per message + 3, an upper bound', async () => {
    const up = createOpenAiUpstream(config());
    expect(await up.countPromptTokens('m', [{ role: 'user', content: 'hi' }])).toBe(2 + 4 + 3);
    // 🙂 is one code point (two UTF-16 units); 你好 two
    expect(await up.countPromptTokens('m', [{ role: 'system', content: '你好🙂' }, { role: 'user', content: '' }])).toBe(3 + 4 + 4 + 3);
    expect(countCodePointTokens([])).toBe(3);
  });
});

describe('openai upstream: faults', () => {
  it('connection refused → refused', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const { error } = await failure(createOpenAiUpstream(config({ baseUrl: `http://127.0.0.1:${port}/v1` })).stream(request(), new AbortController().signal));
    expect(error.failure).toBe('refused');
    expect(error.message).toContain('ECONNREFUSED');
    const health = await createOpenAiUpstream(config({ baseUrl: `http://127.0.0.1:${port}/v1` })).health();
    expect(health.ok).toBe(false);
    expect(health.error).toContain('ECONNREFUSED');
  });

  it('HTTP 5xx / 4xx → refused with the status; 429 → busy', async () => {
    fake.setScript({ fault: { kind: 'refuse', status: 503, message: 'overloaded' } });
    let { error } = await failure(createOpenAiUpstream(config()).stream(request(), new AbortController().signal));
    expect([error.failure, error.status]).toEqual(['refused', 503]);
    expect(error.message).toContain('overloaded');
    fake.setScript({ fault: { kind: 'refuse', status: 401 } });
    ({ error } = await failure(createOpenAiUpstream(config()).stream(request(), new AbortController().signal)));
    expect([error.failure, error.status]).toEqual(['refused', 401]);
    fake.setScript({ fault: { kind: 'refuse', status: 429 } });
    ({ error } = await failure(createOpenAiUpstream(config()).stream(request(), new AbortController().signal)));
    expect([error.failure, error.status]).toEqual(['busy', 429]);
  });

  it('no first byte within timeoutMs → timeout, and the request is dropped', async () => {
    fake.setScript({ fault: { kind: 'hang' } });
    const started = Date.now();
    const { error } = await failure(createOpenAiUpstream(config({ timeoutMs: 150 })).stream(request(), new AbortController().signal));
    expect(error.failure).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(await fake.requests[0]?.done).toBe('aborted');
  });

  it('a stall mid-stream longer than timeoutMs → timeout after the deltas already yielded', async () => {
    fake.setScript({ fault: { kind: 'hang', afterTokens: 2 } });
    const { error, events } = await failure(createOpenAiUpstream(config({ timeoutMs: 150 })).stream(request(), new AbortController().signal));
    expect(error.failure).toBe('timeout');
    expect(text(events)).toBe('Hello,');
  });

  it('slow tokens each within timeoutMs are not a timeout', async () => {
    fake.setScript({ delayMs: 60 });
    const events = await collect(createOpenAiUpstream(config({ timeoutMs: 150 })).stream(request(), new AbortController().signal));
    expect(text(events)).toBe('Hello, world!');
  });

  it('a slow consumer is not an upstream stall', async () => {
    fake.setScript({ tokens: ['a', 'b', 'c'], delayMs: 20 });
    const events: UpstreamEvent[] = [];
    for await (const ev of createOpenAiUpstream(config({ timeoutMs: 400 })).stream(request(), new AbortController().signal)) {
      events.push(ev);
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(text(events)).toBe('abc');
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
  });

  it('a frame that is not JSON → bad_response', async () => {
    fake.setScript({ fault: { kind: 'garbage', afterTokens: 1 } });
    const { error, events } = await failure(createOpenAiUpstream(config()).stream(request(), new AbortController().signal));
    expect(error.failure).toBe('bad_response');
    expect(text(events)).toBe('Hello');
  });

  it('socket closed mid-stream → closed, with the deltas received so far', async () => {
    fake.setScript({ fault: { kind: 'close', afterTokens: 3 } });
    const { error, events } = await failure(createOpenAiUpstream(config()).stream(request(), new AbortController().signal));
    expect(error.failure).toBe('closed');
    expect(events).toEqual([
      { type: 'delta', text: 'Hello', tokens: 1 },
      { type: 'delta', text: ',', tokens: 1 },
      { type: 'delta', text: ' world', tokens: 1 },
    ]);
  });

  it('a stream that ends cleanly after finish_reason without [DONE] still finishes', async () => {
    fake.setScript({ omitDone: true });
    const events = await collect(createOpenAiUpstream(config()).stream(request(), new AbortController().signal));
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
  });
});

describe('openai upstream: abort and concurrency', () => {
  it('aborting the signal mid-stream aborts the HTTP request (the server sees the socket close)', async () => {
    fake.setScript({ tokens: Array.from({ length: 200 }, (_, i) => `t${i} `), delayMs: 20 });
    const ctl = new AbortController();
    const seen: UpstreamEvent[] = [];
    let thrown: unknown = null;
    try {
      for await (const ev of createOpenAiUpstream(config()).stream(request({ maxTokens: 500 }), ctl.signal)) {
        seen.push(ev);
        if (seen.length === 3) ctl.abort();
      }
    } catch (err) {
      thrown = err;
    }
    expect((thrown as Error).name).toBe('AbortError');
    expect(seen).toHaveLength(3);
    expect(await fake.requests[0]?.done).toBe('aborted');
  });

  it('a consumer that stops iterating early also drops the request', async () => {
    fake.setScript({ tokens: Array.from({ length: 200 }, () => 'x'), delayMs: 20 });
    for await (const ev of createOpenAiUpstream(config()).stream(request({ maxTokens: 500 }), new AbortController().signal)) {
      if (ev.type === 'delta') break;
    }
    expect(await fake.requests[0]?.done).toBe('aborted');
  });

  it('maxConcurrency run at once, as many wait, beyond → busy; a waiter gets its turn', async () => {
    fake.setScript({ tokens: ['a', 'b', 'c'], delayMs: 40 });
    const up = createOpenAiUpstream(config({ maxConcurrency: 2 }));
    const signal = new AbortController().signal;
    const running = [0, 1, 2, 3].map(() => collect(up.stream(request(), signal)));
    const { error } = await failure(up.stream(request(), signal));
    expect(error.failure).toBe('busy');
    const results = await Promise.all(running);
    for (const events of results) expect(text(events)).toBe('abc');
    expect(fake.requests).toHaveLength(4);
    // the line is free again
    expect(text(await collect(up.stream(request(), signal)))).toBe('abc');
  });

  it('an aborted waiter leaves the line without calling the upstream', async () => {
    fake.setScript({ tokens: ['a'], delayMs: 80 });
    const up = createOpenAiUpstream(config({ maxConcurrency: 1 }));
    const first = collect(up.stream(request(), new AbortController().signal));
    const ctl = new AbortController();
    const waiting = collect(up.stream(request(), ctl.signal));
    await new Promise((r) => setTimeout(r, 10));
    ctl.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    await first;
    expect(fake.requests).toHaveLength(1);
  });
});

describe('SSE parser', () => {
  const frames = 'data: {"a":1}\r\n\r\n: ping\n\ndata: {"b":2}\n\nevent: x\ndata: line1\ndata: line2\r\rdata: [DONE]\n\n';
  it('gives the same events however the text is split', () => {
    const whole = createSseParser().push(frames);
    expect(whole).toEqual(['{"a":1}', '{"b":2}', 'line1\nline2', '[DONE]']);
    for (let i = 1; i < frames.length; i++) {
      const p = createSseParser();
      const got = [...p.push(frames.slice(0, i)), ...p.push(frames.slice(i)), ...p.end()];
      expect(got, `split at ${i}`).toEqual(whole);
    }
    const bytewise = createSseParser();
    const got: string[] = [];
    for (const ch of frames) got.push(...bytewise.push(ch));
    expect([...got, ...bytewise.end()]).toEqual(whole);
  });
  it('an event without its final blank line counts at the end of the stream', () => {
    const p = createSseParser();
    expect(p.push('data: [DONE]')).toEqual([]);
    expect(p.end()).toEqual(['[DONE]']);
  });
  it('split frames through the adapter: a body delivered in odd pieces', async () => {
    const body = ['data: {"choices":[{"delta":{"content":"He"}}]}\n', '\ndata: {"choices":[{"delta":{"con', 'tent":"y"},"finish_reason":"length"}]}\r', '\n\r\ndata: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}\n\nda', 'ta: [DONE]\n\n'];
    const fetchPieces: typeof fetch = () =>
      Promise.resolve(
        new Response(
          new ReadableStream<Uint8Array>({
            start(c) {
              for (const piece of body) c.enqueue(new TextEncoder().encode(piece));
              c.close();
            },
          }),
          { headers: { 'content-type': 'text/event-stream' } },
        ),
      );
    const events = await collect(createOpenAiUpstream(config(), { fetch: fetchPieces }).stream(request(), new AbortController().signal));
    expect(events).toEqual([
      { type: 'delta', text: 'He', tokens: 1 },
      { type: 'delta', text: 'y', tokens: 1 },
      { type: 'usage', promptTokens: 3, completionTokens: 2 },
      { type: 'finish', reason: 'length' },
    ]);
  });
});
