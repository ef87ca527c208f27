import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { loadConfig, parseTrustProxy } from '../../src/config.ts';
import { createContainer, type Container } from '../../src/container.ts';
import { buildApp } from '../../src/app.ts';
import { seedDemo } from '../../src/db/seed.ts';
import { openPglite } from '../../src/db/client.ts';
import { tenants } from '../../src/db/schema/tenant.ts';
import { generateRsaKeys } from '../../src/lib/rsa-keys.ts';
import { sha256 } from '../../src/lib/crypto.ts';
import { createIdempotencyRepository } from '../../src/modules/idempotency/idempotency.repository.ts';
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, canonicalJson } from '../../src/http/plugins/idempotency.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { createTestClock } from '../helpers/clock.ts';
import { engines } from '../helpers/db.ts';
import { createUser, randomPhone } from '../helpers/factories.ts';
import { OWN_MODE_TREES } from '../../src/lib/data-dir.ts';

const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const rsaKeys = generateRsaKeys();

type Built = { app: FastifyInstance; container: Container; close(): Promise<void> };

/**
 * The app as `npm start` builds it (real console SMS adapter, rate limits on unless told), on an
 * in-memory database, with the environment a test names.
 */
async function buildRealApp(env: Record<string, string> = {}, opts: { webDist?: string } = {}): Promise<Built> {
  const config = loadConfig({ CAPTCHA: 'off', DATA_DIR: '/nonexistent-test-data', LOG_LEVEL: 'silent', ...env });
  const container = await createContainer(config, { database: await openPglite(), rsaKeys: await rsaKeys });
  await seedDemo(container.db, () => {});
  const app = await buildApp(container, { webDist: opts.webDist });
  return {
    app,
    container,
    async close() {
      await app.close();
      await container.close();
    },
  };
}

const tenantId = async (c: Container, code: string) => {
  const [row] = await c.db.select({ id: tenants.id }).from(tenants).where(eq(tenants.code, code));
  if (!row) throw new Error(`no tenant ${code}`);
  return row.id;
};

let phoneSeq = 0;
/** A contact-form body; each from its own phone (the service also limits each phone to a few an hour). */
const question = (n: number) => ({ name: '张三', phone: `1380${String(process.pid % 1000).padStart(3, '0')}${String(phoneSeq++ % 10_000).padStart(4, '0')}`, content: `想租 8 卡 A100，第 ${n} 次咨询` });

/** The CSP header as a map of directive -> sources. */
const cspOf = (header: unknown) =>
  Object.fromEntries(
    String(header ?? '')
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...sources]) => [name, sources]),
  ) as Record<string, string[]>;

// Each app costs a fresh migrated database (seconds on a busy machine): a few shared ones.
describe('the app as started by default (console SMS, no proxy, rate limits on)', () => {
  let b: Built;
  let webDist: string;
  const demoPhone = randomPhone();
  const starlakePhone = randomPhone();
  beforeAll(async () => {
    webDist = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-web-'));
    fs.mkdirSync(path.join(webDist, 'assets'));
    fs.writeFileSync(
      path.join(webDist, 'index.html'),
      '<!doctype html><html><head><title>算力</title><!--tenant-head--><script type="module" src="/assets/app-1.js"></script></head><body><div id="root"></div></body></html>',
    );
    fs.writeFileSync(path.join(webDist, 'assets', 'app-1.js'), 'console.log(1)');
    b = await buildRealApp({ SMS_PROVIDER: 'console', RATE_LIMIT: 'on' }, { webDist });
    await b.container.accounts.sendCode(await tenantId(b.container, 'demo'), { phone: demoPhone, purpose: 'register' });
    await b.container.accounts.sendCode(await tenantId(b.container, 'starlake'), { phone: starlakePhone, purpose: 'register' });
  });
  afterAll(async () => {
    await b.close();
    fs.rmSync(webDist, { recursive: true, force: true });
  });

  const inbox = (opts: Omit<InjectOptions, 'method' | 'url'>) => b.app.inject({ method: 'GET', url: '/dev/inbox', ...opts });
  const get = (url: string, headers: Record<string, string> = {}) => b.app.inject({ method: 'GET', url, headers: { host: 'localhost', ...headers } });

  it('#1 /dev/inbox answers only loopback clients, not through a proxy, and only the requesting tenant its own codes', async () => {
    // Anyone on the network: the route doesn't exist for them.
    const remote = await inbox({ remoteAddress: '192.168.1.50', headers: { host: 'localhost' } });
    expect(remote.statusCode).toBe(404);
    expect(remote.json()).toMatchObject({ code: 404, data: null });
    expect(remote.body).not.toContain(demoPhone);

    // A reverse proxy on this machine forwarding a remote client.
    const proxied = await inbox({ remoteAddress: '127.0.0.1', headers: { host: 'localhost', 'x-forwarded-for': '192.168.1.50' } });
    expect(proxied.statusCode).toBe(404);
    expect(proxied.body).not.toContain(demoPhone);

    // This machine: each tenant (by Host) sees its own codes only.
    const demo = await inbox({ remoteAddress: '127.0.0.1', headers: { host: 'localhost' } });
    expect(demo.statusCode).toBe(200);
    const demoList = demo.json<{ list: { phone: string; code: string }[] }>().list;
    expect(demoList.map((m) => m.phone)).toContain(demoPhone);
    expect(demoList.map((m) => m.phone)).not.toContain(starlakePhone);
    expect(demoList[0]?.code).toMatch(/^\d{6}$/);

    const starlake = await inbox({ remoteAddress: '::1', headers: { host: '127.0.0.1' } });
    expect(starlake.statusCode).toBe(200);
    expect(starlake.body).toContain(starlakePhone);
    expect(starlake.body).not.toContain(demoPhone);
  });

  it('#3 every answer carries CSP (frame-ancestors none), nosniff and Referrer-Policy; the inline branding runs by a per-response nonce', async () => {
    const page = await get('/login');
    expect(page.statusCode).toBe(200);
    const csp = cspOf(page.headers['content-security-policy']);
    expect(csp['frame-ancestors']).toEqual(["'none'"]);
    expect(csp['object-src']).toEqual(["'none'"]);
    expect(csp['script-src']).not.toContain("'unsafe-inline'");
    const nonce = /'nonce-([^']+)'/.exec((csp['script-src'] ?? []).join(' '))?.[1];
    expect(nonce).toBeTruthy();
    // The branding script index.html inlines carries that nonce; nothing else inline lacks it.
    const scripts = [...page.body.matchAll(/<script([^>]*)>/g)].map((m) => m[1] ?? '');
    expect(scripts.some((attrs) => attrs.includes(`nonce="${nonce}"`))).toBe(true);
    for (const attrs of scripts) expect(attrs.includes('src=') || attrs.includes(`nonce="${nonce}"`), attrs).toBe(true);
    expect(page.body).toContain('window.__TENANT__');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['x-frame-options']).toBe('DENY');

    // No HSTS over plain HTTP, even when a client writes X-Forwarded-Proto itself.
    expect(page.headers['strict-transport-security']).toBeUndefined();
    expect((await get('/login', { 'x-forwarded-proto': 'https' })).headers['strict-transport-security']).toBeUndefined();

    const again = cspOf((await get('/login')).headers['content-security-policy']);
    expect(again['script-src']?.join(' ')).not.toContain(nonce);

    // API answers, errors and assets too.
    for (const url of ['/ucenter/api/v1/tenant/domain', '/api/v1/nothing-here', '/api/v1/wallet', '/assets/app-1.js']) {
      const res = await get(url);
      expect(res.headers['content-security-policy'], url).toContain("frame-ancestors 'none'");
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
      expect(res.headers['referrer-policy'], url).toBe('no-referrer');
    }
  });

  it('#3 /index.html requested raw is the branded page, not cached for long', async () => {
    const raw = await get('/index.html');
    expect(raw.statusCode).toBe(200);
    expect(raw.headers['content-type']).toMatch(/^text\/html/);
    expect(raw.body).toContain('window.__TENANT__');
    expect(raw.body).not.toContain('<!--tenant-head-->');
    expect(String(raw.headers['cache-control'])).not.toMatch(/max-age=[1-9]|immutable/);
    // Hashed assets keep their long cache.
    expect((await get('/assets/app-1.js')).headers['cache-control']).toMatch(/max-age=31536000/);
  });

  it('#12 the contact form (POST /api/v1/questions/) is limited per IP', async () => {
    const send = (ip: string, n: number) => b.app.inject({ method: 'POST', url: '/api/v1/questions/', remoteAddress: ip, headers: { host: 'localhost' }, payload: question(n) });
    const codes = [];
    for (let i = 0; i < 10; i++) codes.push((await send('198.51.100.20', i)).statusCode);
    expect(codes).toEqual(Array(10).fill(200));
    const refused = await send('198.51.100.20', 11);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 429, data: null });
    expect((await send('198.51.100.21', 12)).statusCode).toBe(200);
  });
});

describe('#4 TRUST_PROXY', () => {
  it('#4 TRUST_PROXY takes a hop count or proxy addresses; the old "on" is refused naming the new format', () => {
    expect(parseTrustProxy('off')).toBe(false);
    expect(parseTrustProxy('2')).toBe(2);
    expect(parseTrustProxy('10.0.0.2, 192.168.0.0/16,::1')).toEqual(['10.0.0.2', '192.168.0.0/16', '::1']);
    expect(() => loadConfig({ TRUST_PROXY: 'on' })).toThrow(/TRUST_PROXY.*number of proxies.*comma-separated list/s);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.300' })).toThrow(/TRUST_PROXY: not an address or CIDR: 10\.0\.0\.300/);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/33' })).toThrow(/TRUST_PROXY/);
  });

  describe.each([
    // with a hop count the app is also on HTTPS by PUBLIC_URL; with an address list, by the proxy's X-Forwarded-Proto
    { trust: '1', env: { PUBLIC_URL: 'https://console.example.com' } },
    { trust: '10.0.0.2', env: {} },
  ] as { trust: string; env: Record<string, string> }[])('behind a proxy at 10.0.0.2 (TRUST_PROXY=$trust)', ({ trust, env }) => {
    let b: Built;
    beforeAll(async () => {
      b = await buildRealApp({ TRUST_PROXY: trust, RATE_LIMIT: 'on', SMS_PROVIDER: 'console', ...env });
    });
    afterAll(() => b.close());

    it('#4 a forged left-most X-Forwarded-For does not reset per-IP limits', async () => {
      // The proxy (10.0.0.2) appends the address it saw; the client writes anything to the left.
      const viaProxy = (client: string, forged: string, n: number) =>
        b.app.inject({
          method: 'POST',
          url: '/api/v1/questions/',
          remoteAddress: '10.0.0.2',
          headers: { host: 'localhost', 'x-forwarded-for': `${forged}, ${client}` },
          payload: question(n),
        });
      const answers = [];
      for (let i = 0; i < 12; i++) answers.push((await viaProxy('198.51.100.7', `203.0.113.${i + 1}`, i)).statusCode);
      expect(answers.slice(0, 10)).toEqual(Array(10).fill(200));
      expect(answers.slice(10)).toEqual([429, 429]);
      // Another client behind the same proxy has its own allowance.
      expect((await viaProxy('198.51.100.8', '198.51.100.7', 99)).statusCode).toBe(200);
    });

    it('#3 HSTS over HTTPS: PUBLIC_URL https, or https per the trusted proxy', async () => {
      const viaProxy = await b.app.inject({ method: 'GET', url: '/api/health', remoteAddress: '10.0.0.2', headers: { host: 'localhost', 'x-forwarded-proto': 'https' } });
      expect(viaProxy.headers['strict-transport-security']).toMatch(/max-age=\d{7,}/);
      const direct = await b.app.inject({ method: 'GET', url: '/api/health', remoteAddress: '10.0.0.2', headers: { host: 'localhost' } });
      if (trust === '1') expect(direct.headers['strict-transport-security']).toMatch(/max-age=\d{7,}/);
      else expect(direct.headers['strict-transport-security']).toBeUndefined();
    });

    it('#1 behind a configured proxy there is no /dev/inbox, even from loopback', async () => {
      const phone = randomPhone();
      await b.container.accounts.sendCode(await tenantId(b.container, 'demo'), { phone, purpose: 'register' });
      const res = await b.app.inject({ method: 'GET', url: '/dev/inbox', remoteAddress: '127.0.0.1', headers: { host: 'localhost' } });
      expect(res.statusCode).toBe(404);
      expect(res.body).not.toContain(phone);
    });
  });
});

describe('#5 and #1 at start: the server process', () => {
  const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-perm-')), 'data');
  let child: ChildProcess | undefined;
  let output = '';
  beforeAll(async () => {
    // An older version left the data dir and a key world-readable.
    fs.mkdirSync(path.join(dataDir, 'keys'), { recursive: true, mode: 0o777 });
    fs.chmodSync(dataDir, 0o755);
    fs.writeFileSync(path.join(dataDir, 'keys', 'old.pem'), 'x', { mode: 0o644 });
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: serverDir,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', WEB_DIST: '/nonexistent', SMS_PROVIDER: 'console', TRUST_PROXY: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (/listening at http:\/\/127\.0\.0\.1:\d+/.test(output) && /\/dev\/inbox/.test(output)) resolve();
      };
      proc.stdout.on('data', onData);
      proc.stderr.on('data', onData);
      proc.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
    });
  }, 90_000);
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child?.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
  });

  it('#1 the server says at start that /dev/inbox is for loopback clients only, per tenant', () => {
    const line = output.split('\n').find((l) => l.includes('/dev/inbox')) ?? '';
    expect(line).toMatch(/loopback/);
    expect(line).toMatch(/not through a proxy/);
    expect(line).toMatch(/tenant/);
  });

  it('#5 the data dir is 0700 and everything in it owner-only (dirs 0700, files 0600), the embedded database included', () => {
    const wrong: string[] = [];
    let files = 0;
    const walk = (p: string) => {
      const st = fs.lstatSync(p);
      if (st.isSymbolicLink()) return;
      const mode = st.mode & 0o777;
      if (st.isDirectory()) {
        if (mode !== 0o700) wrong.push(`${mode.toString(8)} ${p}`);
        // Image root filesystems and instance disks keep the modes a Linux system needs inside;
        // their top directories are 0700 (checked above), so nobody else reaches them.
        if (OWN_MODE_TREES.some((name) => p === path.join(dataDir, name))) return;
        for (const name of fs.readdirSync(p)) walk(path.join(p, name));
      } else {
        files++;
        if (mode !== 0o600) wrong.push(`${mode.toString(8)} ${p}`);
      }
    };
    walk(dataDir);
    expect(files).toBeGreaterThan(100); // the PGlite cluster is there
    expect(fs.existsSync(path.join(dataDir, 'db', 'PG_VERSION'))).toBe(true);
    expect(wrong.slice(0, 10)).toEqual([]);
  });
});

describe.each(engines)('with a test SMS sender (%s)', (engine) => {
  let t: TestApp;
  const clock = createTestClock();
  beforeAll(async () => {
    t = await buildTestApp({ engine, clock });
  });
  afterAll(() => t.close());

  it('has no /dev/inbox when SMS codes go to a real provider (as before #1)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/dev/inbox', remoteAddress: '127.0.0.1', headers: { host: 'localhost' } });
    expect(res.statusCode).toBe(404);
  });

  describe('#14 idempotency leases', () => {
    const post = (key: string, body: object) => t.request({ method: 'POST', url: '/api/v1/questions/', headers: { 'idempotency-key': key }, payload: body });

    /** What a process killed in the middle of `body` leaves behind: a reservation nobody will complete or release. */
    const crashMidRequest = async (key: string, body: object) => {
      const repo = createIdempotencyRepository(t.container.db);
      const now = clock();
      const fingerprint = crypto.createHmac('sha256', key).update(canonicalJson({ params: {}, query: {}, body })).digest('hex');
      const result = await repo.reserve(
        { tenantId: await tenantId(t.container, 'demo'), scope: 'anonymous', method: 'POST', route: '/api/v1/questions/', keyHash: sha256(key) },
        fingerprint,
        { now, expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS), leaseUntil: new Date(now.getTime() + IDEMPOTENCY_LEASE_MS), staleBefore: new Date(now.getTime() - 300_000) },
      );
      if (!result || !('reserved' in result)) throw new Error('could not reserve');
      return { repo, reservation: result.reserved };
    };

    it('#14 an in-progress reservation left by a crash expires within seconds, not 5 minutes', async () => {
      const key = `crash-${crypto.randomUUID()}`;
      const body = question(1);
      await crashMidRequest(key, body);
      expect((await post(key, body)).statusCode).toBe(409); // the lease still holds
      clock.advance(20_000);
      const retried = await post(key, body);
      expect(retried.statusCode).toBe(200);
      expect(retried.json()).toMatchObject({ code: 200, data: { id: expect.any(String) } });
      // and its answer is the one replayed from now on
      const replay = await post(key, body);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.json().data).toEqual(retried.json().data);
    });

    it('#14 a live request renewing its lease keeps its key', async () => {
      const key = `live-${crypto.randomUUID()}`;
      const body = question(2);
      const { repo, reservation } = await crashMidRequest(key, body);
      for (let i = 0; i < 4; i++) {
        clock.advance(IDEMPOTENCY_LEASE_MS / 3);
        expect(await repo.renew(reservation, new Date(clock().getTime() + IDEMPOTENCY_LEASE_MS))).toBe(true);
      }
      expect((await post(key, body)).statusCode).toBe(409);
    });
  });

  describe('#15 bad input answers 400 in the envelope', () => {
    const expectEnvelope400 = (res: { statusCode: number; headers: Record<string, unknown>; json: () => unknown }, msg: RegExp) => {
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const body = res.json() as { code: number; msg: string; data: unknown; requestId: string };
      expect(body).toMatchObject({ code: 400, data: null });
      expect(body.msg).toMatch(msg);
      expect(body.requestId).toEqual(expect.any(String));
    };

    it('#15 a NUL byte in ?domain= or in a notify body (both unauthenticated) is a 400 naming it', async () => {
      expectEnvelope400(await t.request({ method: 'GET', url: '/ucenter/api/v1/tenant/domain?domain=a%00.example.com' }), /查询参数 domain .*空字符/);
      for (const method of ['sandbox', 'alipay', 'wechat']) {
        for (const [type, payload] of [
          ['application/json', '{"out_trade_no":"P1\u0000","sig":"x"}'],
          ['application/x-www-form-urlencoded', 'out_trade_no=P1\u0000&trade_status=TRADE_SUCCESS'],
          ['text/plain', 'a\u0000b'],
        ] as const) {
          const res = await t.request({ method: 'POST', url: `/api/v1/payments/notify/${method}`, headers: { 'content-type': type }, payload });
          expectEnvelope400(res, /请求体.*空字符/);
        }
        // Escaped, the NUL is text to the gateway adapter: refused as unverified, never a 5xx.
        for (const payload of ['{"out_trade_no":"P1\\u0000","sig":"x"}', 'out_trade_no=P1%00&sign=x']) {
          const res = await t.request({ method: 'POST', url: `/api/v1/payments/notify/${method}`, headers: { 'content-type': 'application/json' }, payload });
          expect(res.statusCode, `${method} ${payload}`).toBeLessThan(500);
        }
      }
      // JSON bodies of ordinary routes
      expectEnvelope400(await t.request({ method: 'POST', url: '/api/v1/questions/', payload: { ...question(3), content: 'x\u0000y' } }), /请求体 content .*空字符/);
    });

    it('#15 a year 0000 in the transaction time filters is a 400 naming the field', async () => {
      const { token } = await createUser(t);
      for (const [field, value] of [
        ['startTime', '0000-01-01T00:00:00Z'],
        ['endTime', '0000-12-31T23:59:59+08:00'],
        ['startTime', '1899-12-31T23:59:59Z'],
      ] as const) {
        const res = await t.request({ method: 'POST', url: '/api/v1/transactions/list', token, payload: { page: 1, pageSize: 20, [field]: value } });
        expectEnvelope400(res, field === 'startTime' ? /开始时间/ : /结束时间/);
      }
      const fine = await t.request({ method: 'POST', url: '/api/v1/transactions/list', token, payload: { startTime: '2000-01-01T00:00:00Z', endTime: '9999-12-31T23:59:59Z' } });
      expect(fine.statusCode).toBe(200);
    });

    it('#15 malformed URLs answer 400 in the envelope with the security headers', async () => {
      for (const url of ['/api/v1/%zz', '/%E0%A4%A', '/user/%', '/api/v1/payments/%C0%AF']) {
        const res = await t.request({ method: 'GET', url });
        expectEnvelope400(res, /请求地址格式不正确/);
        expect(res.headers['x-content-type-options'], url).toBe('nosniff');
        expect(res.headers['content-security-policy'], url).toContain("frame-ancestors 'none'");
      }
    });
  });
});
