import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChatMessageItem } from '@suanli/contract/llm';
import { ApiError } from '../errors.ts';
import { TOKEN_KEY } from '../session.ts';
import { isInsufficientBalance, streamChat } from './llm.ts';

const encoder = new TextEncoder();
/** A text/event-stream response whose body arrives in the given pieces. */
const sse = (pieces: string[]) =>
  new Response(
    new ReadableStream<Uint8Array>({
      start(c) {
        pieces.forEach((p) => c.enqueue(encoder.encode(p)));
        c.close();
      },
    }),
    { status: 200, headers: { 'Content-Type': 'text/event-stream; charset=utf-8' } },
  );

const reply: ChatMessageItem = { id: 'a1', role: 'assistant', content: 'Hi there', model: 'm', promptTokens: 5, completionTokens: 2, cost: 3, status: 'done', error: null, createdAt: '2026-11-23T00:00:00.000Z' };

afterEach(() => {
  vi.unstubAllGlobals();
  localStorage.clear();
});

describe('streamChat', () => {
  it('posts with the session token and hands each event to its handler, frames split anywhere', async () => {
    localStorage.setItem(TOKEN_KEY, 'tok-1');
    const body = `event: start\ndata: {"userMessage":null,"assistantMessageId":"a1"}\n\nevent: delta\ndata: {"text":"Hi"}\n\nevent: delta\ndata: {"text":" there"}\n\nevent: done\ndata: ${JSON.stringify(reply)}\n\n`;
    const fetchMock = vi.fn(async () => sse([body.slice(0, 30), body.slice(30, 71), body.slice(71, 72), body.slice(72)]));
    vi.stubGlobal('fetch', fetchMock);
    const seen: string[] = [];
    let done: ChatMessageItem | null = null;
    await streamChat({ conversationId: 'c1', content: 'hello' }, { onStart: (e) => seen.push(`start:${e.assistantMessageId}`), onDelta: (t) => seen.push(t), onDone: (m) => (done = m) });
    expect(seen).toEqual(['start:a1', 'Hi', ' there']);
    expect(done).toEqual(reply);
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('/api/v1/llm/chat');
    expect(init.method).toBe('POST');
    expect((init.headers as Record<string, string>).Authorization).toBe('Bearer tok-1');
    expect(JSON.parse(init.body as string)).toEqual({ conversationId: 'c1', content: 'hello' });
  });

  it('reports the stream’s error event', async () => {
    vi.stubGlobal('fetch', async () => sse(['event: error\ndata: {"msg":"模型服务暂时不可用","reason":null}\n\n']));
    const errors: [string, string | null][] = [];
    await streamChat({ conversationId: 'c1', regenerate: true }, { onError: (m, r) => errors.push([m, r]) });
    expect(errors).toEqual([['模型服务暂时不可用', null]]);
  });

  it('rejects with the envelope’s status, message and reason when refused before the stream', async () => {
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ code: 402, msg: '余额不足，请先充值', reason: 'INSUFFICIENT_BALANCE' }), { status: 402, headers: { 'Content-Type': 'application/json' } }));
    const err = await streamChat({ conversationId: 'c1', content: 'x' }, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(402);
    expect((err as ApiError).message).toBe('余额不足，请先充值');
    expect(isInsufficientBalance((err as ApiError).status, (err as ApiError).reason)).toBe(true);
  });

  it('ends quietly when stopped', async () => {
    const controller = new AbortController();
    vi.stubGlobal('fetch', async (_u: string, init: RequestInit) => {
      const signal = init.signal!;
      return new Response(
        new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(encoder.encode('event: delta\ndata: {"text":"a"}\n\n'));
            signal.addEventListener('abort', () => c.error(new DOMException('aborted', 'AbortError')));
          },
        }),
        { status: 200, headers: { 'Content-Type': 'text/event-stream' } },
      );
    });
    const deltas: string[] = [];
    await streamChat({ conversationId: 'c1', content: 'x' }, { onDelta: (t) => { deltas.push(t); controller.abort(); } }, controller.signal);
    expect(deltas).toEqual(['a']);
  });

  it('tells a short balance from other refusals', () => {
    expect(isInsufficientBalance(402, undefined)).toBe(true);
    expect(isInsufficientBalance(undefined, 'insufficient_balance')).toBe(true);
    expect(isInsufficientBalance(429, 'quota_exceeded')).toBe(false);
    expect(isInsufficientBalance(400, null)).toBe(false);
  });
});
