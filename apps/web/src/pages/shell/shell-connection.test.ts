import { describe, expect, it } from 'vitest';
import { ShellCloseCode } from '@suanli/contract/shell';
import { CLOSE, MAX_RETRIES, ShellConnection, backoffDelay, socketUrl, type ShellDeps, type ShellState, type SocketLike } from './shell-connection.ts';

class FakeSocket implements SocketLike {
  binaryType = 'blob';
  readyState = 0;
  sent: string[] = [];
  onopen: SocketLike['onopen'] = null;
  onmessage: SocketLike['onmessage'] = null;
  onclose: SocketLike['onclose'] = null;
  onerror: SocketLike['onerror'] = null;
  closedWith: number | null = null;
  constructor(readonly url: string) {}
  send(data: string) {
    this.sent.push(data);
  }
  close(code?: number) {
    this.closedWith = code ?? 1000;
    this.readyState = 3;
  }
  open() {
    this.readyState = 1;
    this.onopen?.({});
  }
  text(msg: object) {
    this.onmessage?.({ data: JSON.stringify(msg) });
  }
  drop(code: number, reason = '') {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
}

function setup(ticketFails?: (n: number) => unknown) {
  const sockets: FakeSocket[] = [];
  const timers: { fn: () => void; ms: number }[] = [];
  let tickets = 0;
  const states: ShellState[] = [];
  const output: (string | Uint8Array)[] = [];
  const deps: ShellDeps = {
    ticket: async () => {
      tickets += 1;
      const err = ticketFails?.(tickets);
      if (err) throw err;
      return { ticket: `t${tickets}`, url: `/api/v1/ws/shell?ticket=t${tickets}`, expiresAt: '' };
    },
    createSocket: (url) => {
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    },
    location: { protocol: 'https:', host: 'demo.example.com' },
    setTimeout: (fn, ms) => timers.push({ fn, ms }) - 1,
    clearTimeout: (id) => {
      const t = timers[id as number];
      if (t) t.fn = () => {};
    },
    setInterval: () => 0,
    clearInterval: () => {},
  };
  const conn = new ShellConnection('i-abcdefghij', deps, { onState: (s) => states.push(s), onOutput: (d) => output.push(d) });
  const flush = () => new Promise((r) => setTimeout(r, 0));
  const fire = async () => {
    const t = timers.shift();
    t?.fn();
    await flush();
    return t?.ms;
  };
  return { conn, sockets, timers, states, output, flush, fire, tickets: () => tickets };
}

describe('web shell connection', () => {
  it('keeps the close codes of the contract', () => {
    expect(CLOSE).toEqual(ShellCloseCode);
  });

  it('opens the ticket URL over wss on an https page, sends the size, input as JSON and writes output bytes', async () => {
    expect(socketUrl('/api/v1/ws/shell?ticket=x', { protocol: 'http:', host: 'a:1' })).toBe('ws://a:1/api/v1/ws/shell?ticket=x');
    expect(socketUrl('https://b/api/v1/ws/shell?ticket=x', { protocol: 'https:', host: 'a' })).toBe('wss://b/api/v1/ws/shell?ticket=x');
    const { conn, sockets, states, output, flush } = setup();
    conn.resize(100, 30);
    conn.connect();
    await flush();
    expect(sockets[0]?.url).toBe('wss://demo.example.com/api/v1/ws/shell?ticket=t1');
    sockets[0]!.open();
    sockets[0]!.text({ type: 'ready', instanceId: 'i-abcdefghij', instanceName: 'train' });
    expect(states.at(-1)).toEqual({ kind: 'open', instanceName: 'train' });
    expect(JSON.parse(sockets[0]!.sent[0]!)).toEqual({ type: 'resize', cols: 100, rows: 30 });
    conn.input('ls\r');
    conn.resize(120, 40);
    expect(sockets[0]!.sent.slice(1).map((s) => JSON.parse(s))).toEqual([{ type: 'input', data: 'ls\r' }, { type: 'resize', cols: 120, rows: 40 }]);
    sockets[0]!.onmessage?.({ data: new TextEncoder().encode('hello').buffer });
    expect(new TextDecoder().decode(output[0] as Uint8Array)).toBe('hello');
  });

  it('after a dropped connection, retries with backoff and a new ticket each time, then resets once ready', async () => {
    const { conn, sockets, states, flush, fire, tickets } = setup();
    conn.connect();
    await flush();
    sockets[0]!.open();
    sockets[0]!.drop(1006);
    expect(states.at(-1)).toEqual({ kind: 'waiting', attempt: 1, delayMs: 1000 });
    expect(await fire()).toBe(1000);
    expect(tickets()).toBe(2);
    sockets[1]!.drop(1006);
    expect(states.at(-1)).toEqual({ kind: 'waiting', attempt: 2, delayMs: 2000 });
    expect(await fire()).toBe(2000);
    expect(tickets()).toBe(3);
    expect(sockets[2]!.url).toContain('ticket=t3');
    sockets[2]!.open();
    sockets[2]!.text({ type: 'ready', instanceId: 'i-abcdefghij', instanceName: 'x' });
    sockets[2]!.drop(1006);
    expect(states.at(-1)).toEqual({ kind: 'waiting', attempt: 1, delayMs: 1000 });
    expect([1, 2, 3, 4, 5, 6].map(backoffDelay)).toEqual([1000, 2000, 4000, 8000, 15000, 15000]);
  });

  it('gives up after MAX_RETRIES failures (network errors getting a ticket count too); the button starts over', async () => {
    const { conn, sockets, states, flush, fire, tickets } = setup((n) => (n > 1 ? new Error('network') : undefined));
    conn.connect();
    await flush();
    sockets[0]!.drop(1006);
    for (let i = 0; i < MAX_RETRIES; i += 1) await fire();
    expect(states.filter((s) => s.kind === 'waiting').length).toBe(MAX_RETRIES);
    expect(states.at(-1)).toEqual({ kind: 'ended', reason: 'gaveUp', message: null });
    const before = tickets();
    conn.reconnect();
    await flush();
    expect(tickets()).toBe(before + 1);
  });

  it('stops with a clear reason when the instance stops or is not running, and never retries on its own', async () => {
    const { conn, sockets, states, flush, timers } = setup();
    conn.connect();
    await flush();
    sockets[0]!.open();
    sockets[0]!.text({ type: 'exit', code: null, reason: '实例已关机' });
    sockets[0]!.drop(1000);
    expect(states.at(-1)).toEqual({ kind: 'ended', reason: 'exited', message: '实例已关机' });
    expect(timers.length).toBe(0);

    conn.reconnect();
    await flush();
    sockets[1]!.drop(ShellCloseCode.NotRunning, '实例未运行');
    expect(states.at(-1)).toEqual({ kind: 'ended', reason: 'notRunning', message: '实例未运行' });
    conn.reconnect();
    await flush();
    sockets[2]!.drop(ShellCloseCode.NotFound);
    expect(states.at(-1)).toMatchObject({ kind: 'ended', reason: 'notFound' });
    conn.reconnect();
    await flush();
    sockets[3]!.drop(ShellCloseCode.TooMany);
    expect(states.at(-1)).toMatchObject({ kind: 'ended', reason: 'tooMany' });
    expect(timers.length).toBe(0);
  });

  it('a ticket refused with 409 (instance stopped) ends at once with the server message', async () => {
    const { conn, states, flush, timers } = setup(() => Object.assign(new Error('实例未在运行'), { status: 409 }));
    conn.connect();
    await flush();
    expect(states.at(-1)).toEqual({ kind: 'ended', reason: 'notRunning', message: '实例未在运行' });
    expect(timers.length).toBe(0);
  });

  it('dispose closes the socket and ignores its late events', async () => {
    const { conn, sockets, states, flush, timers } = setup();
    conn.connect();
    await flush();
    sockets[0]!.open();
    conn.dispose();
    expect(sockets[0]!.closedWith).toBe(1000);
    const n = states.length;
    sockets[0]!.drop(1006);
    expect(states.length).toBe(n);
    expect(timers.length).toBe(0);
  });
});
