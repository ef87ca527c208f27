/**
 * A fake OpenAI-compatible server for tests and benchmarks (issue #9): a real node:http server on
 * 127.0.0.1 answering POST /v1/chat/completions (streamed or not) and GET /v1/models, scripted per
 * test, recording every request it got.
 *
 *   const fake = await startFakeOpenAi({ tokens: ['Hel', 'lo'] });
 *   createOpenAiUpstream({ baseUrl: fake.url, ... })   // fake.url ends with /v1
 *   fake.setScript({ fault: { kind: 'refuse', status: 503 } });
 *   fake.requests[0].headers.authorization; fake.requests[0].body.max_tokens
 *   await fake.requests[0].done   // 'finished' | 'aborted' (the client closed the socket first)
 *   await fake.close();
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type FakeFault =
  /** Answer this HTTP status with an OpenAI-style error body. */
  | { kind: 'refuse'; status: number; message?: string }
  /** Send nothing (afterTokens undefined: not even headers), or stop sending after that many tokens; the socket stays open. */
  | { kind: 'hang'; afterTokens?: number }
  /** After that many tokens, send a frame that isn't JSON. */
  | { kind: 'garbage'; afterTokens?: number }
  /** After that many tokens, destroy the socket (no finish, no [DONE]). */
  | { kind: 'close'; afterTokens: number };

export type FakeOpenAiScript = {
  /** Content chunks, one per SSE frame (default ['Hello', ',', ' world', '!']); cut at the request's max_tokens (finish 'length'). */
  tokens?: string[];
  /** Wait this long before each token. */
  delayMs?: number;
  /** Send a usage chunk when the client asks (stream_options.include_usage); default true. */
  usage?: boolean;
  /** prompt_tokens reported in usage (default 11). */
  promptTokens?: number;
  fault?: FakeFault;
  /** Model ids of GET /v1/models (default ['fake-model']). */
  models?: string[];
  /** Line ends of SSE frames (default '\n'). */
  lineEnd?: '\n' | '\r\n';
  /** Write every frame split in pieces of this many bytes, each its own write an event-loop turn apart. */
  splitBytes?: number;
  /** A `: keep-alive` comment before every frame. */
  comments?: boolean;
  /** Leave out the final `data: [DONE]`. */
  omitDone?: boolean;
  /** Answer a streamed request with one JSON completion, as servers that ignore `stream` do. */
  ignoreStream?: boolean;
};

export type FakeRequest = {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The parsed JSON body (POST), null otherwise. */
  body: Record<string, unknown> | null;
  /** How the exchange ended: the answer was finished, or the client went away first. */
  done: Promise<'finished' | 'aborted'>;
};

export type FakeOpenAi = {
  /** Base URL including /v1, as an upstream's baseUrl. */
  url: string;
  setScript(script: FakeOpenAiScript): void;
  requests: FakeRequest[];
  close(): Promise<void>;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startFakeOpenAi(initial: FakeOpenAiScript = {}): Promise<FakeOpenAi> {
  let script: FakeOpenAiScript = initial;
  const requests: FakeRequest[] = [];
  const sockets = new Set<Socket>();

  const server = http.createServer((req, res) => {
    const s = script;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let settle!: (v: 'finished' | 'aborted') => void;
      const done = new Promise<'finished' | 'aborted'>((r) => (settle = r));
      res.on('close', () => settle(res.writableFinished ? 'finished' : 'aborted'));
      let body: Record<string, unknown> | null = null;
      if (chunks.length) {
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        } catch {
          body = null;
        }
      }
      const path = (req.url ?? '/').split('?')[0]!;
      requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body, done });
      void answer(s, req.method ?? 'GET', path, body, res).catch(() => res.destroy());
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function answer(s: FakeOpenAiScript, method: string, path: string, body: Record<string, unknown> | null, res: http.ServerResponse) {
    if (method === 'GET' && path === '/v1/models') {
      if (s.fault?.kind === 'refuse') return json(res, s.fault.status, { error: { message: s.fault.message ?? 'refused', type: 'fake' } });
      return json(res, 200, { object: 'list', data: (s.models ?? ['fake-model']).map((id) => ({ id, object: 'model', owned_by: 'fake' })) });
    }
    if (method !== 'POST' || path !== '/v1/chat/completions') return json(res, 404, { error: { message: 'not found' } });
    if (!body) return json(res, 400, { error: { message: 'body is not JSON' } });
    const fault = s.fault;
    if (fault?.kind === 'refuse') return json(res, fault.status, { error: { message: fault.message ?? 'refused', type: 'fake' } });
    if (fault?.kind === 'hang' && fault.afterTokens === undefined) return; // never answers

    const all = s.tokens ?? ['Hello', ',', ' world', '!'];
    const max = typeof body.max_tokens === 'number' ? body.max_tokens : Infinity;
    const tokens = all.slice(0, max);
    const finish = tokens.length < all.length ? 'length' : 'stop';
    const model = typeof body.model === 'string' ? body.model : 'fake-model';
    const promptTokens = s.promptTokens ?? 11;
    const id = `chatcmpl-fake-${requests.length}`;
    const usage = { prompt_tokens: promptTokens, completion_tokens: tokens.length, total_tokens: promptTokens + tokens.length };

    if (body.stream !== true || s.ignoreStream) {
      for (let i = 0; i < tokens.length; i++) if (s.delayMs) await sleep(s.delayMs);
      return json(res, 200, { id, object: 'chat.completion', model, choices: [{ index: 0, message: { role: 'assistant', content: tokens.join('') }, finish_reason: finish }], usage });
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    const eol = s.lineEnd ?? '\n';
    const send = async (data: string) => {
      const frame = `${s.comments ? `: keep-alive${eol}` : ''}data: ${data}${eol}${eol}`;
      if (!s.splitBytes) {
        res.write(frame);
        return;
      }
      const bytes = Buffer.from(frame, 'utf8');
      for (let i = 0; i < bytes.length; i += s.splitBytes) {
        if (res.destroyed) return;
        res.write(bytes.subarray(i, i + s.splitBytes));
        await new Promise((r) => setImmediate(r));
      }
    };
    const chunk = (delta: Record<string, unknown>, finishReason: string | null) => JSON.stringify({ id, object: 'chat.completion.chunk', model, choices: [{ index: 0, delta, finish_reason: finishReason }] });

    await send(chunk({ role: 'assistant', content: '' }, null));
    for (let i = 0; i <= tokens.length; i++) {
      if (res.destroyed) return;
      if (fault && 'afterTokens' in fault && fault.afterTokens === i) {
        if (fault.kind === 'hang') return;
        if (fault.kind === 'garbage') {
          await send('{"choices": [ this is not json');
          return res.end();
        }
        // flush what was written, then close the connection mid-body (FIN, no final chunk)
        if (fault.kind === 'close') return void res.socket?.end();
      }
      if (i === tokens.length) break;
      if (s.delayMs) await sleep(s.delayMs);
      await send(chunk({ content: tokens[i] }, null));
    }
    await send(chunk({}, finish));
    const wantsUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    if (wantsUsage && s.usage !== false) await send(JSON.stringify({ id, object: 'chat.completion.chunk', model, choices: [], usage }));
    if (!s.omitDone) await send('[DONE]');
    res.end();
  }

  function json(res: http.ServerResponse, status: number, value: unknown) {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    setScript(next) {
      script = next;
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
