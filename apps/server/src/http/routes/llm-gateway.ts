import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../lib/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { GatewayErrors, LlmError, LlmErrors, type LlmErrorType } from '../../modules/llm/errors.ts';
import type { ApiKeyAuth, CompletionCaller, CompletionService, KeyPrincipal, LlmCatalog } from '../../modules/llm/types.ts';
import { chatCompletion, chunk, completionId, errorBody, modelList, parseCompletionBody, SSE_DONE, sseFrame, usageOf } from '../../modules/llm/openai-schema.ts';

/** Largest request body of the gateway (long conversations); past it 413. */
export const GATEWAY_BODY_LIMIT = 4 * 1024 * 1024;

export type GatewayDeps = { keyAuth: ApiKeyAuth; catalog: LlmCatalog; completions: CompletionService; clock: Clock };

const typeOfStatus = (status: number): LlmErrorType =>
  status === 401 ? 'authentication_error' : status === 403 ? 'permission_error' : status === 404 ? 'not_found_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error';

/** Any error of the /v1 scope as an LlmError: ours as they are, the framework's and the console hooks' (AppError) translated. */
function asLlmError(err: FastifyError | Error): LlmError {
  if (err instanceof LlmError) return err;
  const code = (err as FastifyError).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return GatewayErrors.tooLarge(GATEWAY_BODY_LIMIT / 1024 / 1024);
  if (err instanceof AppError) return new LlmError(err.status, typeOfStatus(err.status), err.status >= 500 ? 'internal_error' : 'invalid_request', err.message);
  const status = (err as FastifyError).statusCode;
  if (err instanceof SyntaxError || (status !== undefined && status >= 400 && status < 500)) return LlmErrors.badRequest('请求不合法：' + (code ?? 'bad request'));
  return GatewayErrors.internal();
}

/** `::ffff:1.2.3.4` (an IPv4 client on a dual-stack socket) → `1.2.3.4`. */
function plainIp(ip: string): string {
  const m = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  return m?.[1] ?? ip;
}

/** The key's allow-list as a BlockList (entries the key service let through: addresses or CIDRs), built once per cached principal. */
const allowLists = new WeakMap<KeyPrincipal, BlockList>();
function allowListOf(p: KeyPrincipal): BlockList {
  let list = allowLists.get(p);
  if (list) return list;
  list = new BlockList();
  for (const entry of p.ipAllow) {
    const [addr = '', bits] = entry.trim().split('/');
    const ip = plainIp(addr);
    const type = isIPv4(ip) ? 'ipv4' : isIPv6(ip) ? 'ipv6' : undefined;
    if (!type) continue;
    try {
      if (bits === undefined) list.addAddress(ip, type);
      else list.addSubnet(ip, Number(bits), type);
    } catch {
      // An entry BlockList refuses (a prefix out of range) allows nothing.
    }
  }
  allowLists.set(p, list);
  return list;
}

function ipAllowed(p: KeyPrincipal, rawIp: string): boolean {
  if (p.ipAllow.length === 0) return true;
  const ip = plainIp(rawIp);
  const type = isIPv4(ip) ? 'ipv4' : isIPv6(ip) ? 'ipv6' : undefined;
  return type !== undefined && allowListOf(p).check(ip, type);
}

/**
 * The OpenAI-compatible gateway (issue #9): GET /v1/models, GET /v1/models/:model and POST
 * /v1/chat/completions, authenticated by `Authorization: Bearer sk-…`, answering in OpenAI's own
 * shapes. Registered in its own scope (prefix /v1) with its own error handler, 404 and body
 * parser: the body is taken as bytes and parsed here, so the console's JSON parser, envelope and
 * input guard (which skips a Buffer body) never shape its answers; no route here is flagged for
 * encryption or idempotency; compression is off (streams go out chunk by chunk); hidden from
 * /api/docs (the OpenAI API reference describes it).
 */
export async function llmGatewayRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  const { keyAuth, catalog, completions, clock } = deps;

  app.setErrorHandler((err: FastifyError, req, reply) => {
    const e = asLlmError(err);
    if (e.status >= 500) req.log.error({ err }, 'llm gateway error');
    if (reply.sent || reply.raw.headersSent) return;
    return reply.status(e.status).send(errorBody(e));
  });
  app.setNotFoundHandler((req, reply) => {
    const e = GatewayErrors.unknownPath(req.method, (req.url.split('?')[0] ?? '').slice(0, 200));
    return reply.status(404).send(errorBody(e));
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: GATEWAY_BODY_LIMIT }, (_req, body, done) => done(null, body));

  /** The caller's key, checked (tenant of the Host, enabled, not expired, source IP), or the 401/403. */
  async function principalOf(req: FastifyRequest): Promise<KeyPrincipal> {
    const header = req.headers.authorization;
    if (!header) throw LlmErrors.missingKey();
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m?.[1]) throw LlmErrors.missingKey();
    const p = await keyAuth.authenticate(m[1]);
    // A key of another tenant is answered like one that doesn't exist.
    if (!p || p.tenantId !== req.tenant.id) throw LlmErrors.invalidKey();
    if (!p.enabled) throw LlmErrors.keyDisabled();
    if (p.expiresAt && p.expiresAt.getTime() <= clock().getTime()) throw LlmErrors.keyExpired();
    if (!ipAllowed(p, req.ip)) throw LlmErrors.ipRefused(plainIp(req.ip));
    return p;
  }

  const allows = (p: KeyPrincipal, modelId: string) => p.models === null || p.models.includes(modelId);
  const routeOpts = { schema: { hide: true }, compress: false as const, bodyLimit: GATEWAY_BODY_LIMIT };

  app.get('/models', routeOpts, async (req) => {
    const p = await principalOf(req);
    return modelList((await catalog.publishedModels(p.tenantId)).filter((m) => allows(p, m.modelId)));
  });

  app.get('/models/*', routeOpts, async (req) => {
    const p = await principalOf(req);
    const id = (req.params as { '*': string })['*'];
    const model = await catalog.resolveModel(p.tenantId, id);
    if (!model || !allows(p, id)) throw LlmErrors.modelNotFound(id.slice(0, 128));
    return modelList([model]).data[0];
  });

  app.post('/chat/completions', routeOpts, async (req, reply) => {
    const p = await principalOf(req);
    let json: unknown;
    const raw = req.body;
    if (!Buffer.isBuffer(raw) || raw.length === 0) throw GatewayErrors.notJson();
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      throw GatewayErrors.notJson();
    }
    const parsed = parseCompletionBody(json);
    if (parsed instanceof LlmError) throw parsed;
    const model = await catalog.resolveModel(p.tenantId, parsed.model);
    if (!model) throw LlmErrors.modelNotFound(parsed.model.slice(0, 128));
    if (!allows(p, model.modelId)) throw LlmErrors.modelNotAllowed(model.modelId);

    const caller: CompletionCaller = { tenantId: p.tenantId, userId: p.userId, keyId: p.keyId, quota: p.quota, limits: p.limits, source: 'api' };
    const ac = new AbortController();
    const res = reply.raw;
    // The client went away before the answer was complete: stop the upstream, charge what was delivered.
    res.on('close', () => {
      if (!res.writableFinished) ac.abort();
    });

    const meta = { id: completionId(), created: Math.floor(clock().getTime() / 1000), model: model.modelId };
    const input = {
      model,
      messages: parsed.messages,
      stream: parsed.stream,
      ...(parsed.maxTokens !== undefined ? { maxTokens: parsed.maxTokens } : {}),
      ...(parsed.temperature !== undefined ? { temperature: parsed.temperature } : {}),
      ...(parsed.topP !== undefined ? { topP: parsed.topP } : {}),
      ...(parsed.stop !== undefined ? { stop: parsed.stop } : {}),
      ...(parsed.seed !== undefined ? { seed: parsed.seed } : {}),
    };

    if (!parsed.stream) {
      // The answer goes out as soon as it is complete (onFinish); the settlement follows.
      let sent = false;
      const r = await completions.run(caller, input, {
        signal: ac.signal,
        onFinish: (f) => {
          if (f.finishReason === 'error') return; // answered below, as an error
          sent = true;
          void reply.send(chatCompletion({ ...meta, text: f.text, finishReason: f.finishReason, promptTokens: f.promptTokens, completionTokens: f.completionTokens }));
        },
      });
      if (sent) return reply;
      if (r.finishReason === 'aborted') return reply.status(499).send();
      if (r.finishReason === 'error') throw r.error ?? LlmErrors.upstreamFailed();
      return chatCompletion({ ...meta, text: r.text, finishReason: r.finishReason, promptTokens: r.promptTokens, completionTokens: r.completionTokens });
    }

    // Streamed: the answer starts with the first token, so a refusal before it is still a plain
    // error with its status; after it, an error is one SSE frame and the stream ends.
    const withUsage = parsed.includeUsage ? { usage: null } : {};
    let open = false;
    const write = (s: string) => {
      if (!res.destroyed) res.write(s);
    };
    const begin = (r: FastifyReply) => {
      if (open) return;
      open = true;
      r.hijack();
      const headers = { ...r.getHeaders() } as Record<string, string | string[] | number>;
      delete headers['content-length'];
      res.writeHead(200, {
        ...headers,
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      write(sseFrame({ ...chunk(meta, { delta: { role: 'assistant', content: '' }, finishReason: null }), ...withUsage }));
    };
    try {
      // The stream's end goes out as soon as the answer is complete (onFinish), before the settlement.
      let ended = false;
      const end = (f: { finishReason: 'stop' | 'length' | 'error' | 'aborted'; error: LlmError | null; promptTokens: number; completionTokens: number }) => {
        if (ended) return;
        ended = true;
        begin(reply);
        if (f.finishReason === 'error') {
          write(sseFrame(errorBody(f.error ?? LlmErrors.upstreamFailed())));
        } else {
          write(sseFrame({ ...chunk(meta, { delta: {}, finishReason: f.finishReason === 'aborted' ? 'stop' : f.finishReason }), ...withUsage }));
          if (parsed.includeUsage) write(sseFrame(chunk(meta, null, usageOf(f.promptTokens, f.completionTokens))));
          write(SSE_DONE);
        }
        res.end();
      };
      const r = await completions.run(caller, input, {
        signal: ac.signal,
        onDelta: (text) => {
          begin(reply);
          write(sseFrame({ ...chunk(meta, { delta: { content: text }, finishReason: null }), ...withUsage }));
        },
        onFinish: end,
      });
      if (r.finishReason === 'aborted') {
        if (!open) reply.hijack();
        res.destroy();
        return reply;
      }
      end(r);
      return reply;
    } catch (err) {
      if (!open) throw err;
      // Failed after the stream began (e.g. the settlement's database went away): say so in the stream.
      req.log.error({ err }, 'llm gateway: stream failed after it started');
      write(sseFrame(errorBody(asLlmError(err as Error))));
      res.end();
      return reply;
    }
  });
}
