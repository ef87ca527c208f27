import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ShellCloseCode, type ShellServerMessage } from '@suanli/contract/shell';
import { loadConfig } from '../../src/config.ts';
import { createContainer } from '../../src/container.ts';
import { buildApp } from '../../src/app.ts';
import { seedDemo } from '../../src/db/seed.ts';
import { generateRsaKeys } from '../../src/lib/rsa-keys.ts';
import { createFakeSms } from '../fakes/sms.ts';
import { openTestDatabase, engines, type Engine } from '../helpers/db.ts';
import { createTestClock } from '../helpers/clock.ts';
import { createUser } from '../helpers/factories.ts';
import type { TestApp } from '../helpers/app.ts';
import { createFakeSshAccess } from '../fakes/ssh-access.ts';

const rsaKeys = generateRsaKeys();

/** The real app (rate limits on, as in production) with the fake InstanceAccess, listening on a loopback port (WebSockets need a socket). */
async function shellApp(engine: Engine, clock = createTestClock(new Date())) {
  const fake = createFakeSshAccess();
  const config = loadConfig({ CAPTCHA: 'off', RATE_LIMIT: 'on', DATA_DIR: '/nonexistent-test-data', LOG_LEVEL: 'silent', PORT: '0' });
  const database = await openTestDatabase(engine);
  const container = await createContainer(config, { database, sms: createFakeSms(), clock, rsaKeys: await rsaKeys, instanceAccess: fake.access });
  await seedDemo(container.db, () => {});
  const app = await buildApp(container);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const t = {
    app,
    container,
    request: ({ token, headers, ...rest }: Parameters<TestApp['request']>[0]) =>
      app.inject({ ...rest, headers: { host: 'localhost', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } }),
  } as unknown as TestApp;
  return {
    t,
    fake,
    clock,
    port,
    async close() {
      await app.close();
      await container.close();
      fake.close();
    },
  };
}

type Harness = Awaited<ReturnType<typeof shellApp>>;

async function ticketFor(h: Harness, token: string, instanceId: string) {
  const res = await h.t.request({ method: 'POST', url: '/api/v1/instance/shell_ticket', token, payload: { instanceId } });
  return res;
}

/** Opens the socket the way the page does; collects frames. */
function openShell(h: Harness, url: string, origin = `http://localhost:${h.port}`) {
  const ws = new WebSocket(`ws://127.0.0.1:${h.port}${url}`, { headers: { host: `localhost:${h.port}`, origin } });
  const messages: ShellServerMessage[] = [];
  let output = '';
  const waiters: (() => void)[] = [];
  ws.on('message', (data, isBinary) => {
    if (isBinary) output += data.toString();
    else messages.push(JSON.parse(data.toString()) as ShellServerMessage);
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  const until = (pred: () => boolean, ms = 10_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out; output so far: ${JSON.stringify(output)} messages: ${JSON.stringify(messages)}`)), ms);
      const check = () => {
        if (pred()) {
          clearTimeout(timer);
          resolve();
        } else waiters.push(check);
      };
      check();
    });
  return {
    ws,
    messages,
    output: () => output,
    closed,
    until,
    send: (m: object) => ws.send(JSON.stringify(m)),
    opened: new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    }),
  };
}

describe.each(engines)('web shell ticket API (%s)', (engine) => {
  let h: Harness;
  beforeAll(async () => {
    h = await shellApp(engine);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('issues a one-time ticket for the caller\'s running instance', async () => {
    const { token, user } = await createUser(h.t);
    const inst = h.fake.add({ tenantId: user.tenantId, userId: user.id });
    const res = await ticketFor(h, token, inst.id);
    expect(res.statusCode).toBe(200);
    const data = res.json<{ data: { ticket: string; url: string; expiresAt: string } }>().data;
    expect(data.ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(data.url).toBe(`/api/v1/ws/shell?ticket=${data.ticket}`);
    expect(new Date(data.expiresAt).getTime() - Date.now()).toBeLessThanOrEqual(60_000);
  });

  it('answers 404 for a foreign or missing instance, 409 when it is not running, 400 for a bad id, 401 without a session', async () => {
    const { token, user } = await createUser(h.t);
    const other = await createUser(h.t);
    const foreign = h.fake.add({ tenantId: other.user.tenantId, userId: other.user.id });
    const stopped = h.fake.add({ tenantId: user.tenantId, userId: user.id, running: false });
    const f = await ticketFor(h, token, foreign.id);
    const m = await ticketFor(h, token, 'i-zzzzzzzzzz');
    expect([f.statusCode, m.statusCode]).toEqual([404, 404]);
    expect(f.json()).toEqual({ ...m.json(), requestId: f.json<{ requestId: string }>().requestId });
    const s = await ticketFor(h, token, stopped.id);
    expect(s.statusCode).toBe(409);
    expect(s.json().msg).toContain('未在运行');
    const bad = await ticketFor(h, token, '../etc/passwd');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().msg).toBe('实例 ID 格式不正确');
    expect((await h.t.request({ method: 'POST', url: '/api/v1/instance/shell_ticket', payload: { instanceId: foreign.id } })).statusCode).toBe(401);
  });
});

describe('web shell WebSocket', () => {
  let h: Harness;
  let token: string;
  let inst: ReturnType<Harness['fake']['add']>;
  beforeAll(async () => {
    h = await shellApp('pglite');
    const u = await createUser(h.t);
    token = u.token;
    inst = h.fake.add({ tenantId: u.user.tenantId, userId: u.user.id });
  });
  afterAll(async () => {
    await h?.close();
  });

  const newTicket = async () => (await ticketFor(h, token, inst.id)).json<{ data: { url: string; ticket: string } }>().data;

  it('echoes input, resizes, answers ping, and says exit when the shell ends', async () => {
    const s = openShell(h, (await newTicket()).url);
    await s.opened;
    await s.until(() => s.messages.some((m) => m.type === 'ready'));
    expect(s.messages[0]).toEqual({ type: 'ready', instanceId: inst.id, instanceName: `实例 ${inst.id.slice(-4)}` });
    s.send({ type: 'input', data: 'echo hel""lo-$((6*7))\r' });
    await s.until(() => s.output().includes('hello-42'));
    s.send({ type: 'resize', cols: 132, rows: 43 });
    s.send({ type: 'input', data: 'stty size\r' });
    await s.until(() => s.output().includes('43 132'));
    s.send({ type: 'ping' });
    await s.until(() => s.messages.some((m) => m.type === 'pong'));
    s.send({ type: 'nonsense' });
    await s.until(() => s.messages.some((m) => m.type === 'error'));
    s.send({ type: 'input', data: 'exit 5\r' });
    const closed = await s.closed;
    expect(closed.code).toBe(1000);
    expect(s.messages.find((m) => m.type === 'exit')).toEqual({ type: 'exit', code: 5, reason: '终端会话已结束' });
  });

  it('says the instance stopped when it does', async () => {
    const u = await createUser(h.t);
    const mine = h.fake.add({ tenantId: u.user.tenantId, userId: u.user.id });
    const url = (await ticketFor(h, u.token, mine.id)).json<{ data: { url: string } }>().data.url;
    const s = openShell(h, url);
    await s.until(() => s.messages.some((m) => m.type === 'ready'));
    h.fake.stop(mine.id);
    expect((await s.closed).code).toBe(1000);
    expect(s.messages.find((m) => m.type === 'exit')).toMatchObject({ type: 'exit', reason: '实例已停止，终端已断开' });
  });

  it('closes with 4401 for a missing, unknown, used or expired ticket', async () => {
    const missing = openShell(h, '/api/v1/ws/shell');
    expect((await missing.closed).code).toBe(ShellCloseCode.Unauthorized);
    const unknown = openShell(h, '/api/v1/ws/shell?ticket=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect((await unknown.closed).code).toBe(ShellCloseCode.Unauthorized);

    const { url } = await newTicket();
    const first = openShell(h, url);
    await first.until(() => first.messages.some((m) => m.type === 'ready'));
    const reused = openShell(h, url);
    expect((await reused.closed).code).toBe(ShellCloseCode.Unauthorized);
    expect(reused.messages[0]).toMatchObject({ type: 'error', msg: '终端票据无效或已过期，请重新打开终端' });
    first.ws.close();

    const late = await newTicket();
    h.clock.advance(61_000);
    const expired = openShell(h, late.url);
    expect((await expired.closed).code).toBe(ShellCloseCode.Unauthorized);
  });

  it('closes with 4404 when the instance is gone by the time the socket opens, 4409 when it stopped', async () => {
    const u = await createUser(h.t);
    const a = h.fake.add({ tenantId: u.user.tenantId, userId: u.user.id });
    const url = (await ticketFor(h, u.token, a.id)).json<{ data: { url: string } }>().data.url;
    a.running = false;
    const s = openShell(h, url);
    expect((await s.closed).code).toBe(ShellCloseCode.NotRunning);
    a.running = true;
    const url2 = (await ticketFor(h, u.token, a.id)).json<{ data: { url: string } }>().data.url;
    a.userId = -1; // handed to someone else meanwhile
    const s2 = openShell(h, url2);
    expect((await s2.closed).code).toBe(ShellCloseCode.NotFound);
  });

  it('refuses the upgrade from another site (Origin check) and without an Origin', async () => {
    const { url } = await newTicket();
    await expect(openShell(h, url, 'https://evil.example').opened).rejects.toThrow('HTTP 403');
    await expect(openShell(h, url, `http://localhost:${h.port + 1}`).opened).rejects.toThrow('HTTP 403');
    // The ticket was not consumed by the refused attempts.
    const s = openShell(h, url);
    await s.until(() => s.messages.some((m) => m.type === 'ready'));
    s.ws.close();
  });

  it('limits open shells per user, and frames to 64 KiB', async () => {
    const u = await createUser(h.t);
    const a = h.fake.add({ tenantId: u.user.tenantId, userId: u.user.id });
    const shells = [];
    for (let i = 0; i < 8; i++) {
      const s = openShell(h, (await ticketFor(h, u.token, a.id)).json<{ data: { url: string } }>().data.url);
      await s.until(() => s.messages.some((m) => m.type === 'ready'));
      shells.push(s);
    }
    const ninth = openShell(h, (await ticketFor(h, u.token, a.id)).json<{ data: { url: string } }>().data.url);
    expect((await ninth.closed).code).toBe(ShellCloseCode.TooMany);
    const big = shells[0]!;
    big.send({ type: 'input', data: 'x'.repeat(70_000) });
    expect((await big.closed).code).toBe(1009);
    for (const s of shells) s.ws.close();
    await Promise.all(shells.map((s) => s.closed));
    const again = openShell(h, (await ticketFor(h, u.token, a.id)).json<{ data: { url: string } }>().data.url);
    await again.until(() => again.messages.some((m) => m.type === 'ready'));
    again.ws.close();
  });

  it('keeps the socket route out of the OpenAPI document; the CSP allows this host\'s ws:// and wss://', async () => {
    const doc = (await h.t.request({ method: 'GET', url: '/api/docs/json' })).json<{ paths: Record<string, unknown> }>();
    expect(Object.keys(doc.paths)).toContain('/api/v1/instance/shell_ticket');
    expect(Object.keys(doc.paths)).not.toContain('/api/v1/ws/shell');
    const res = await h.t.request({ method: 'GET', url: '/api/health', headers: { host: 'console.example.com:8443' } });
    expect(res.headers['content-security-policy']).toContain("connect-src 'self' ws://console.example.com:8443 wss://console.example.com:8443;");
  });
});
