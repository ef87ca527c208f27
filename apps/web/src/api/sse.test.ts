import { describe, expect, it } from 'vitest';
import { createSseParser, readSse, type SseEvent } from './sse.ts';

const collect = (chunks: string[]) => {
  const events: SseEvent[] = [];
  const p = createSseParser((e) => events.push(e));
  chunks.forEach((c) => p.push(c));
  p.end();
  return events;
};

describe('SSE parser', () => {
  const stream = 'event: start\ndata: {"a":1}\n\nevent: delta\ndata: {"text":"你好"}\n\nevent: done\ndata: {"id":"x"}\n\n';

  it('parses whole frames', () => {
    expect(collect([stream])).toEqual([
      { event: 'start', data: '{"a":1}' },
      { event: 'delta', data: '{"text":"你好"}' },
      { event: 'done', data: '{"id":"x"}' },
    ]);
  });

  it('gives the same events however the text is split', () => {
    const whole = collect([stream]);
    for (let size = 1; size <= 7; size += 1) {
      const chunks: string[] = [];
      for (let i = 0; i < stream.length; i += size) chunks.push(stream.slice(i, i + size));
      expect(collect(chunks)).toEqual(whole);
    }
    for (let cut = 1; cut < stream.length; cut += 1) expect(collect([stream.slice(0, cut), stream.slice(cut)])).toEqual(whole);
  });

  it('handles CRLF and CR line ends, also with CRLF split across chunks', () => {
    expect(collect(['event: delta\r', '\ndata: a\r\n\r', '\n'])).toEqual([{ event: 'delta', data: 'a' }]);
    expect(collect(['data: b\r\r'])).toEqual([{ event: 'message', data: 'b' }]);
  });

  it('joins data lines, skips comments, keeps ids and drops an unfinished event', () => {
    expect(collect([': ping\n\nid: 7\ndata: one\ndata:two\n\nevent: delta\ndata: lost'])).toEqual([{ event: 'message', data: 'one\ntwo', id: '7' }]);
  });

  it('ignores blocks without data and unknown fields', () => {
    expect(collect(['event: start\n\nretry: 10\nfoo: bar\ndata: x\n\n'])).toEqual([{ event: 'message', data: 'x' }]);
  });

  it('reads a byte stream whose chunks split a multi-byte character', async () => {
    const bytes = new TextEncoder().encode('event: delta\ndata: {"text":"你好"}\n\n');
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (const b of bytes) c.enqueue(new Uint8Array([b]));
        c.close();
      },
    });
    const events: SseEvent[] = [];
    await readSse(body, (e) => events.push(e));
    expect(events).toEqual([{ event: 'delta', data: '{"text":"你好"}' }]);
  });
});
