import type { FastifyInstance } from 'fastify';

export type InjectedCall = { method: string; url: string; headers: Record<string, string>; body: string | undefined; status: number; answer: string };

/**
 * A `fetch` that delivers to the app under test through app.inject instead of the network: the
 * app isn't listening in API tests, yet the sandbox's notifications must reach it over its real
 * HTTP route (raw-body parser, headers, ack). Every call is recorded; `failNext(n)` answers the
 * next n calls with a 502 without reaching the app, like a proxy in front of a restarting server.
 */
export function createInjectFetch(app: FastifyInstance) {
  const calls: InjectedCall[] = [];
  let failing = 0;

  const fetchToApp = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    const body = typeof init?.body === 'string' ? init.body : undefined;
    const method = init?.method ?? 'GET';
    if (failing > 0) {
      failing--;
      calls.push({ method, url: url.href, headers, body, status: 502, answer: 'Bad Gateway' });
      return new Response('Bad Gateway', { status: 502 });
    }
    const res = await app.inject({
      method: method as 'GET' | 'POST',
      url: url.pathname + url.search,
      headers: { ...headers, host: url.host },
      ...(body !== undefined ? { payload: body } : {}),
    });
    calls.push({ method, url: url.href, headers, body, status: res.statusCode, answer: res.body });
    const answerHeaders = new Headers();
    for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string' || typeof v === 'number') answerHeaders.set(k, String(v));
    const nullBody = res.statusCode === 204 || res.statusCode === 304;
    return new Response(nullBody ? null : res.body, { status: res.statusCode, headers: answerHeaders });
  };

  return Object.assign(fetchToApp, {
    calls,
    failNext(n = 1) {
      failing = n;
    },
  });
}
