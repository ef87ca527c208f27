import fastifyWebsocket from '@fastify/websocket';
import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { okEnvelope } from '@suanli/contract/envelope';
import { ShellCloseCode, shellTicket, shellTicketBody, type ShellClientMessage, type ShellServerMessage } from '@suanli/contract/shell';
import type { App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import { authOf } from '../plugins/auth.ts';
import { AppError, forbidden } from '../../lib/errors.ts';
import type { TerminalSession } from '../../adapters/compute/port.ts';
import { NOT_RUNNING, SHELL_PATH, type ShellService } from '../../modules/shell/shell.service.ts';

/** Limits of the web shell (docs/ssh.md); tests shorten them. */
export const SHELL_LIMITS = {
  /** Largest frame a client may send (input is typed or pasted text). */
  maxFrameBytes: 64 * 1024,
  /** Web shells one user may have open at once in this process. */
  perUser: 8,
  /** A shell with no input or resize from the page for this long is closed. */
  idleMs: 30 * 60_000,
  /** Terminal output waiting for a slow client before the terminal is paused. */
  maxBufferedBytes: 1024 * 1024,
};

const MAX_SIZE = 1000;
const sizeOk = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= MAX_SIZE;

/**
 * Whether the page that opened the socket is this site: the Origin must be the request's own host
 * (or PUBLIC_URL's), so another site can't open a shell with a ticket it stole or a user's cookies
 * (cross-site WebSocket hijacking). Browsers always send Origin on WebSocket handshakes.
 */
export function originAllowed(req: FastifyRequest, publicUrl: string | undefined): boolean {
  const origin = req.headers.origin;
  if (!origin) return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (url.host === req.headers.host) return true;
  if (!publicUrl) return false;
  try {
    return new URL(publicUrl).origin === url.origin;
  } catch {
    return false;
  }
}

function parseMessage(raw: string): ShellClientMessage | null {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!v || typeof v !== 'object') return null;
  const m = v as Record<string, unknown>;
  if (m.type === 'input' && typeof m.data === 'string') return { type: 'input', data: m.data };
  if (m.type === 'resize' && sizeOk(m.cols) && sizeOk(m.rows)) return { type: 'resize', cols: m.cols, rows: m.rows };
  if (m.type === 'ping') return { type: 'ping' };
  return null;
}

/**
 * The web shell (/shell): `POST /api/v1/instance/shell_ticket` gives the signed-in user a one-time
 * ticket, and `GET /api/v1/ws/shell?ticket=…` upgrades to a WebSocket carrying a terminal in the
 * instance (frames per packages/contract/src/shell.ts). The socket route is hidden from the OpenAPI
 * document: it takes no JSON and the fuzzer can't speak WebSocket.
 */
export async function shellRoutes(app: App, deps: { shell: ShellService; publicUrl?: string; limits?: Partial<typeof SHELL_LIMITS> }) {
  const { shell } = deps;
  const limits = { ...SHELL_LIMITS, ...deps.limits };
  const openPerUser = new Map<number, number>();

  await app.register(fastifyWebsocket, { options: { maxPayload: limits.maxFrameBytes } });

  app.post(
    '/api/v1/instance/shell_ticket',
    {
      onRequest: app.requireUser,
      config: { rateLimit: { max: 60, timeWindow: '1 minute' } },
      schema: {
        tags: ['实例'],
        summary: '获取网页终端的一次性票据（60 秒内有效，只能使用一次）',
        description: `用票据打开 WebSocket：GET ${SHELL_PATH}?ticket=…`,
        security: [{ bearer: [] }],
        body: shellTicketBody,
        response: { 200: okEnvelope(shellTicket) },
      },
    },
    async (req) => {
      const { user } = authOf(req);
      return ok(await shell.issueTicket({ tenantId: user.tenantId, userId: user.id }, req.body.instanceId));
    },
  );

  app.get(
    SHELL_PATH,
    {
      websocket: true,
      schema: { hide: true },
      // Strangers can knock with made-up tickets: cheap to refuse, but not unboundedly.
      config: { rateLimit: { max: 120, timeWindow: '1 minute' } },
      // Refused before the upgrade: a page of another site gets a plain 403.
      preValidation: async (req) => {
        if (!originAllowed(req, deps.publicUrl)) throw forbidden('不允许从其他网站打开终端');
      },
    },
    (socket, req) => {
      const ticket = typeof (req.query as Record<string, unknown>).ticket === 'string' ? ((req.query as Record<string, string>).ticket) : undefined;
      serve(socket, req, ticket);
    },
  );

  function serve(socket: WebSocket, req: FastifyRequest, ticket: string | undefined) {
    const send = (m: ShellServerMessage) => {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(m));
    };
    const closeWith = (code: number, msg: string) => {
      send({ type: 'error', msg });
      socket.close(code, code >= 4000 ? msg.slice(0, 30) : undefined);
    };

    const claim = shell.redeem(ticket, req.tenant.id);
    if (!claim) return closeWith(ShellCloseCode.Unauthorized, '终端票据无效或已过期，请重新打开终端');
    const open = openPerUser.get(claim.userId) ?? 0;
    if (open >= limits.perUser) return closeWith(ShellCloseCode.TooMany, `最多同时打开 ${limits.perUser} 个终端，请先关闭不用的终端`);
    openPerUser.set(claim.userId, open + 1);

    let term: TerminalSession | null = null;
    let closed = false;
    const pending: ShellClientMessage[] = [];
    let lastInput = Date.now();
    const idle = setInterval(
      () => {
        if (Date.now() - lastInput > limits.idleMs) {
          send({ type: 'exit', code: null, reason: '长时间无操作，终端已断开' });
          socket.close(1000);
        }
      },
      Math.max(50, Math.min(limits.idleMs / 4, 30_000)),
    );
    idle.unref();

    const handle = (m: ShellClientMessage) => {
      if (m.type === 'ping') return send({ type: 'pong' });
      lastInput = Date.now();
      if (!term) {
        pending.push(m);
        return;
      }
      if (m.type === 'input') term.write(m.data);
      else term.resize({ cols: m.cols, rows: m.rows });
    };

    socket.on('message', (data, isBinary) => {
      if (isBinary) return send({ type: 'error', msg: '消息格式不正确：请发送 JSON 文本帧' });
      const m = parseMessage(data.toString());
      if (!m) return send({ type: 'error', msg: '消息格式不正确' });
      handle(m);
    });
    socket.on('close', () => {
      closed = true;
      clearInterval(idle);
      const n = (openPerUser.get(claim.userId) ?? 1) - 1;
      if (n <= 0) openPerUser.delete(claim.userId);
      else openPerUser.set(claim.userId, n);
      term?.close();
    });
    socket.on('error', () => {});

    void shell
      .openTerminal({ tenantId: claim.tenantId, userId: claim.userId }, claim.instanceId, { cols: 80, rows: 24, term: 'xterm-256color' })
      .then(
        (t) => {
          if (closed) return t.close();
          term = t;
          send({ type: 'ready', instanceId: claim.instanceId, instanceName: claim.instanceName });
          for (const m of pending.splice(0)) handle(m);
          t.output.on('data', (chunk: Buffer) => {
            if (socket.readyState !== socket.OPEN) return;
            socket.send(chunk, { binary: true });
            // A client that can't keep up pauses the terminal instead of growing this process's memory.
            if (socket.bufferedAmount > limits.maxBufferedBytes) {
              t.output.pause();
              const wait = setInterval(() => {
                if (socket.readyState !== socket.OPEN || socket.bufferedAmount < limits.maxBufferedBytes / 2) {
                  clearInterval(wait);
                  t.output.resume();
                }
              }, 20);
            }
          });
          void t.exit.then(async ({ code }) => {
            if (closed) return;
            const reason = (await shell.running(claim.instanceId).catch(() => true)) ? '终端会话已结束' : '实例已停止，终端已断开';
            send({ type: 'exit', code, reason });
            socket.close(1000);
          });
        },
        (err: unknown) => {
          if (err instanceof AppError && err.status === 404) return closeWith(ShellCloseCode.NotFound, '实例不存在');
          if (err instanceof AppError && err.status === 409) return closeWith(ShellCloseCode.NotRunning, err.message || NOT_RUNNING);
          req.log.error({ err }, 'web shell: opening the terminal failed');
          closeWith(1011, '无法打开终端，请稍后重试');
        },
      );
  }
}
