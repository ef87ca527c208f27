import type { ShellClientMessage, ShellServerMessage, ShellTicket } from '@suanli/contract/shell';

/**
 * The web shell's connection (contract/shell.ts): a one-time ticket, then a WebSocket; binary
 * frames are terminal output, text frames JSON messages. A dropped connection is tried again with
 * backoff, each time with a new ticket; an ending the user must act on (instance stopped, not
 * theirs, too many shells, the shell exited) stops there with its reason.
 */

/** ShellCloseCode of the contract (kept here as numbers: the contract module pulls in zod). */
export const CLOSE = { Unauthorized: 4401, NotFound: 4404, NotRunning: 4409, TooMany: 4429 } as const;

export type EndReason = 'notRunning' | 'notFound' | 'unauthorized' | 'tooMany' | 'exited' | 'closed' | 'gaveUp';

export type ShellState =
  | { kind: 'connecting'; attempt: number }
  | { kind: 'open'; instanceName: string | null }
  | { kind: 'waiting'; attempt: number; delayMs: number }
  | { kind: 'ended'; reason: EndReason; message: string | null };

/** The delay before retry number `attempt` (1-based): 1 s, 2 s, 4 s, 8 s, then 15 s. */
export function backoffDelay(attempt: number): number {
  return Math.min(15_000, 1_000 * 2 ** Math.max(0, attempt - 1));
}
/** Retries after a drop before giving up (then the user's reconnect button starts over). */
export const MAX_RETRIES = 8;
/** A ping keeps proxies from closing an idle terminal. */
export const PING_MS = 25_000;

export type SocketLike = {
  binaryType: string;
  readyState: number;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
};

export type ShellDeps = {
  ticket: (instanceId: string) => Promise<ShellTicket>;
  createSocket: (url: string) => SocketLike;
  /** The page's location, for a same-origin ws:/wss: URL. */
  location: { protocol: string; host: string };
  setTimeout: (fn: () => void, ms: number) => unknown;
  clearTimeout: (id: unknown) => void;
  setInterval: (fn: () => void, ms: number) => unknown;
  clearInterval: (id: unknown) => void;
};

/** The WebSocket URL of a ticket's `url`: same origin, ws: or wss: by the page's protocol. */
export function socketUrl(url: string, location: { protocol: string; host: string }): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  if (/^wss?:\/\//i.test(url)) return url;
  if (/^https?:\/\//i.test(url)) return url.replace(/^https?:/i, scheme);
  return `${scheme}//${location.host}${url.startsWith('/') ? '' : '/'}${url}`;
}

type ErrorWithStatus = { status?: number; message?: string };

export class ShellConnection {
  state: ShellState = { kind: 'connecting', attempt: 0 };
  private socket: SocketLike | null = null;
  private retries = 0;
  private timer: unknown = null;
  private ping: unknown = null;
  private disposed = false;
  /** Bumped on every new attempt: events of an older socket are ignored. */
  private generation = 0;
  private size: { cols: number; rows: number } | null = null;

  constructor(
    private readonly instanceId: string,
    private readonly deps: ShellDeps,
    private readonly events: { onState: (s: ShellState) => void; onOutput: (data: Uint8Array | string) => void },
  ) {}

  private set(state: ShellState) {
    this.state = state;
    this.events.onState(state);
  }

  /** Starts (or, from the reconnect button, starts over). */
  connect(): void {
    if (this.disposed) return;
    this.stopTimers();
    this.dropSocket();
    void this.attempt();
  }

  /** The user's reconnect: the retry count starts again. */
  reconnect(): void {
    this.retries = 0;
    this.connect();
  }

  private async attempt(): Promise<void> {
    const gen = ++this.generation;
    this.set({ kind: 'connecting', attempt: this.retries });
    let ticket: ShellTicket;
    try {
      ticket = await this.deps.ticket(this.instanceId);
    } catch (err) {
      if (gen !== this.generation || this.disposed) return;
      const { status, message } = (err ?? {}) as ErrorWithStatus;
      if (status === 404 || status === 400) return this.end('notFound', message ?? null);
      if (status === 409 || status === 503) return this.end('notRunning', message ?? null);
      if (status === 429) return this.end('tooMany', message ?? null);
      if (status === 401 || status === 403) return this.end('unauthorized', message ?? null);
      return this.retry();
    }
    if (gen !== this.generation || this.disposed) return;
    const socket = this.deps.createSocket(socketUrl(ticket.url.includes('ticket=') ? ticket.url : `${ticket.url}${ticket.url.includes('?') ? '&' : '?'}ticket=${encodeURIComponent(ticket.ticket)}`, this.deps.location));
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    let ended = false;
    socket.onopen = () => {
      if (gen !== this.generation) return;
      this.set({ kind: 'open', instanceName: null });
      if (this.size) this.send({ type: 'resize', ...this.size });
      this.ping = this.deps.setInterval(() => this.send({ type: 'ping' }), PING_MS);
    };
    socket.onmessage = (ev) => {
      if (gen !== this.generation) return;
      if (typeof ev.data === 'string') {
        let msg: ShellServerMessage;
        try {
          msg = JSON.parse(ev.data) as ShellServerMessage;
        } catch {
          return;
        }
        if (msg.type === 'ready') {
          this.retries = 0;
          this.set({ kind: 'open', instanceName: msg.instanceName });
        } else if (msg.type === 'exit') {
          ended = true;
          this.end('exited', msg.reason || null);
        } else if (msg.type === 'error') {
          this.events.onOutput(`\r\n\x1b[31m${msg.msg}\x1b[0m\r\n`);
        }
        return;
      }
      // By tag, not instanceof: an ArrayBuffer from another realm (a test's, a worker's) is one too.
      if (Object.prototype.toString.call(ev.data) === '[object ArrayBuffer]') this.events.onOutput(new Uint8Array(ev.data as ArrayBuffer));
      else if (ArrayBuffer.isView(ev.data)) this.events.onOutput(new Uint8Array(ev.data.buffer, ev.data.byteOffset, ev.data.byteLength));
    };
    socket.onerror = () => {
      /* onclose follows and decides */
    };
    socket.onclose = (ev) => {
      if (gen !== this.generation || this.disposed) return;
      this.socket = null;
      this.stopTimers();
      if (ended) return;
      const reason = ev.reason || null;
      switch (ev.code) {
        case CLOSE.NotFound:
          return this.end('notFound', reason);
        case CLOSE.NotRunning:
          return this.end('notRunning', reason);
        case CLOSE.TooMany:
          return this.end('tooMany', reason);
        case CLOSE.Unauthorized:
          // A ticket is used once and lives 60 s: a fresh one may well work, but not forever.
          return this.retries >= 2 ? this.end('unauthorized', reason) : this.retry();
        case 1000:
          return this.end('closed', reason);
        default:
          return this.retry();
      }
    };
  }

  private retry() {
    if (this.retries >= MAX_RETRIES) return this.end('gaveUp', null);
    this.retries += 1;
    const delayMs = backoffDelay(this.retries);
    this.set({ kind: 'waiting', attempt: this.retries, delayMs });
    this.timer = this.deps.setTimeout(() => {
      this.timer = null;
      void this.attempt();
    }, delayMs);
  }

  private end(reason: EndReason, message: string | null) {
    this.stopTimers();
    this.dropSocket();
    this.set({ kind: 'ended', reason, message });
  }

  private send(msg: ShellClientMessage) {
    if (this.socket && this.socket.readyState === 1) this.socket.send(JSON.stringify(msg));
  }

  input(data: string): void {
    this.send({ type: 'input', data });
  }

  resize(cols: number, rows: number): void {
    this.size = { cols, rows };
    this.send({ type: 'resize', cols, rows });
  }

  private stopTimers() {
    if (this.timer !== null) this.deps.clearTimeout(this.timer);
    if (this.ping !== null) this.deps.clearInterval(this.ping);
    this.timer = null;
    this.ping = null;
  }

  private dropSocket() {
    this.generation += 1;
    const s = this.socket;
    this.socket = null;
    if (s && s.readyState <= 1) s.close(1000);
  }

  dispose(): void {
    this.disposed = true;
    this.stopTimers();
    this.dropSocket();
  }
}
