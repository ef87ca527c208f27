import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ssh2 from 'ssh2';
import type { ClientChannel, ConnectConfig, SFTPWrapper } from 'ssh2';
import { startSshGateway, type SshGateway } from '../../src/ssh/gateway.ts';
import { createAuthThrottle } from '../../src/ssh/throttle.ts';
import { createFakeSshAccess, type FakeInstance } from '../fakes/ssh-access.ts';

const quiet = { info: () => {}, warn: () => {} };
const config = { SSH_PORT: 0, SSH_HOST_KEY_FILE: undefined, HOST: '127.0.0.1' };

/** ssh2's generator sometimes writes an ed25519 key its parser refuses; keep the good ones. */
function edKeys() {
  for (;;) {
    const k = ssh2.utils.generateKeyPairSync('ed25519');
    if (!(ssh2.utils.parseKey(k.private) instanceof Error)) return k;
  }
}
const ed = edKeys();
const rsa = ssh2.utils.generateKeyPairSync('rsa', { bits: 2048 });
const stranger = edKeys();

let fake: ReturnType<typeof createFakeSshAccess>;
let gw: SshGateway;
let mine: FakeInstance;
let theirs: FakeInstance;
let stopped: FakeInstance;

beforeAll(async () => {
  fake = createFakeSshAccess();
  mine = fake.add({ tenantId: 1, userId: 10, keys: [ed.public, rsa.public] });
  theirs = fake.add({ tenantId: 1, userId: 11, keys: [stranger.public] });
  stopped = fake.add({ tenantId: 1, userId: 10, keys: [ed.public], running: false });
  gw = await startSshGateway({ config, access: fake.access, log: quiet });
});
afterAll(async () => {
  await gw?.close();
  fake?.close();
});

function connect(cfg: Partial<ConnectConfig>): Promise<ssh2.Client> {
  return new Promise((resolve, reject) => {
    const c = new ssh2.Client();
    c.once('ready', () => resolve(c));
    c.once('error', reject);
    // A connection dropped before the handshake ends closes without an error.
    c.once('close', () => reject(new Error('connection closed')));
    c.connect({ host: '127.0.0.1', port: gw.port, readyTimeout: 20_000, tryKeyboard: false, ...cfg });
  });
}

function run(c: ssh2.Client, cmd: string, stdin?: string, opts: { pty?: boolean } = {}): Promise<{ out: string; err: string; code: number | null; signal?: string }> {
  return new Promise((resolve, reject) => {
    c.exec(cmd, opts.pty ? { pty: { cols: 100, rows: 30, term: 'xterm' } } : {}, (err, ch: ClientChannel) => {
      if (err) return reject(err);
      let out = '';
      let errOut = '';
      let code: number | null = null;
      let signal: string | undefined;
      ch.on('data', (d: Buffer) => (out += d.toString()));
      ch.stderr.on('data', (d: Buffer) => (errOut += d.toString()));
      ch.on('exit', (c0: number | null, sig?: string) => {
        code = c0;
        signal = sig;
      });
      ch.on('close', () => resolve({ out, err: errOut, code, signal }));
      if (stdin !== undefined) ch.end(stdin);
    });
  });
}

const sftpOf = (c: ssh2.Client) => new Promise<SFTPWrapper>((resolve, reject) => c.sftp((err, s) => (err ? reject(err) : resolve(s))));

describe('SSH gateway: authentication', () => {
  it('logs in with an ed25519 key and runs a command with its output and exit code', async () => {
    const c = await connect({ username: mine.id, privateKey: ed.private });
    try {
      const r = await run(c, 'echo hi; echo oops >&2; exit 3');
      expect(r.out).toBe('hi\n');
      expect(r.err).toBe('oops\n');
      expect(r.code).toBe(3);
    } finally {
      c.end();
    }
  });

  it('logs in with an RSA key', async () => {
    const c = await connect({ username: mine.id, privateKey: rsa.private });
    try {
      expect((await run(c, 'pwd')).out.trim()).toBe(fs.realpathSync(mine.dir));
    } finally {
      c.end();
    }
  });

  it('logs in with the instance password', async () => {
    const c = await connect({ username: mine.id, password: mine.password });
    try {
      expect((await run(c, 'echo ok')).out).toBe('ok\n');
    } finally {
      c.end();
    }
  });

  it('refuses a key the owner has not added, another user\'s instance, a stopped or unknown instance, a wrong password', async () => {
    const attempts: Partial<ConnectConfig>[] = [
      { username: mine.id, privateKey: stranger.private },
      { username: theirs.id, privateKey: ed.private },
      { username: stopped.id, privateKey: ed.private },
      { username: 'i-0000000000', privateKey: ed.private },
      { username: 'root', privateKey: ed.private },
    ];
    for (const a of attempts) await expect(connect(a), JSON.stringify(a.username)).rejects.toThrow(/authentication methods failed/);
  });

  it('refuses a key whose signature does not verify (the public half of an allowed key, a foreign private key)', async () => {
    // The client offers the allowed public key but signs with another private key.
    let offered = false;
    const forged = new Promise((resolve, reject) => {
      const c = new ssh2.Client();
      c.once('ready', () => {
        c.end();
        resolve('logged in');
      });
      c.once('error', reject);
      c.connect({
        host: '127.0.0.1',
        port: gw.port,
        username: mine.id,
        authHandler: (_methods, _partial, next) => {
          if (offered) return false;
          offered = true;
          const allowed = ssh2.utils.parseKey(ed.public) as ssh2.ParsedKey;
          const other = ssh2.utils.parseKey(stranger.private) as ssh2.ParsedKey;
          // Claims to be the allowed key; its signatures come from another private key.
          other.getPublicSSH = () => allowed.getPublicSSH();
          next({ type: 'publickey', username: mine.id, key: other });
          return undefined as never;
        },
      });
    });
    await expect(forged).rejects.toThrow(/authentication methods failed/);
  });
});

describe('SSH gateway: sessions', () => {
  let c: ssh2.Client;
  beforeAll(async () => {
    c = await connect({ username: mine.id, privateKey: ed.private });
  });
  afterAll(() => c?.end());

  it('forwards stdin and its EOF to the command', async () => {
    const r = await run(c, 'tr a-z A-Z; echo done', 'hello\nworld\n');
    expect(r.out).toBe('HELLO\nWORLD\ndone\n');
    expect(r.code).toBe(0);
  });

  it('reports the signal that ended a command', async () => {
    const r = await run(c, 'kill -TERM $$');
    expect(r.code).toBeNull();
    expect(r.signal).toBe('SIGTERM'); // ssh2's client names it with the SIG prefix; the wire carries "TERM"
  });

  it('runs a command on a pty when asked (ssh -t)', async () => {
    const r = await run(c, 'tty; stty size', undefined, { pty: true });
    expect(r.out).toMatch(/\/dev\/pts\/\d+/);
    expect(r.out).toContain('30 100');
  });

  it('opens an interactive shell on a pty and resizes it', async () => {
    const out = await new Promise<string>((resolve, reject) => {
      c.shell({ cols: 80, rows: 24, term: 'xterm' }, (err, ch) => {
        if (err) return reject(err);
        let buf = '';
        ch.on('data', (d: Buffer) => {
          buf += d.toString();
          if (buf.includes('SIZE=40 120') && !buf.includes('sent-exit')) {
            buf += 'sent-exit';
            ch.write('exit 0\n');
          }
        });
        ch.on('close', () => resolve(buf));
        ch.setWindow(40, 120, 0, 0);
        setTimeout(() => ch.write('echo SIZE=$(stty size)\n'), 300);
      });
    });
    expect(out).toContain('SIZE=40 120');
  });

  it('serves sftp: put, get, list', async () => {
    const sftp = await sftpOf(c);
    const data = Buffer.from('x'.repeat(200_000) + 'end');
    await new Promise<void>((resolve, reject) => sftp.writeFile('up.bin', data, (e) => (e ? reject(e) : resolve())));
    expect(fs.readFileSync(path.join(mine.dir, 'up.bin')).equals(data)).toBe(true);
    const back = await new Promise<Buffer>((resolve, reject) => sftp.readFile('up.bin', (e, b) => (e ? reject(e) : resolve(b))));
    expect(back.equals(data)).toBe(true);
    const list = await new Promise<string[]>((resolve, reject) => sftp.readdir('.', (e, l) => (e ? reject(e) : resolve(l.map((x) => x.filename)))));
    expect(list).toContain('up.bin');
    sftp.end();
  });

  it('refuses port forwarding', async () => {
    await expect(new Promise((resolve, reject) => c.forwardOut('127.0.0.1', 0, '127.0.0.1', 5432, (e, s) => (e ? reject(e) : resolve(s))))).rejects.toThrow();
  });
});

describe('SSH gateway: throttling and limits', () => {
  it('locks password logins after 5 failures, even with the right password, with growing delays', async () => {
    let now = 0;
    const throttle = createAuthThrottle({ now: () => now, limits: { BASE_DELAY_MS: 10, MAX_DELAY_MS: 40 } });
    const g = await startSshGateway({ config, access: fake.access, log: quiet, throttle });
    const target = fake.add({ tenantId: 1, userId: 10 });
    try {
      const login = (password: string) =>
        new Promise<string>((resolve) => {
          const cl = new ssh2.Client();
          cl.once('ready', () => {
            cl.end();
            resolve('ok');
          });
          cl.once('error', () => resolve('refused'));
          cl.connect({ host: '127.0.0.1', port: g.port, username: target.id, password, tryKeyboard: false });
        });
      for (let i = 0; i < 5; i++) expect(await login('wrong-password')).toBe('refused');
      expect(throttle.lockedFor('127.0.0.1', target.id)).toBeGreaterThan(0);
      expect(await login(target.password)).toBe('refused');
      // Keys still work while passwords are locked.
      target.keys = [ed.public];
      const cl = await connect({ username: target.id, privateKey: ed.private, port: g.port });
      cl.end();
      now += 16 * 60_000;
      expect(await login(target.password)).toBe('ok');
    } finally {
      await g.close();
    }
  });

  it('counts per address across instances, and per instance across addresses; locks expire', () => {
    let now = 0;
    const t = createAuthThrottle({ now: () => now });
    for (let i = 0; i < 5; i++) t.fail('10.0.0.9', `i-aaaaaaaaa${i}`);
    expect(t.lockedFor('10.0.0.9', 'i-bbbbbbbbbb')).toBe(15 * 60_000);
    expect(t.lockedFor('10.0.0.10', 'i-bbbbbbbbbb')).toBe(0);
    for (let i = 0; i < 5; i++) t.fail(`10.1.0.${i}`, 'i-cccccccccc');
    expect(t.lockedFor('10.2.0.1', 'i-cccccccccc')).toBe(15 * 60_000);
    now += 15 * 60_000 + 1;
    expect(t.lockedFor('10.0.0.9', 'i-bbbbbbbbbb')).toBe(0);
    expect(t.lockedFor('10.2.0.1', 'i-cccccccccc')).toBe(0);
    // Four failures spread over more than the window never lock.
    for (let i = 0; i < 4; i++) t.fail('10.3.0.1', 'i-dddddddddd');
    now += 16 * 60_000;
    t.fail('10.3.0.1', 'i-dddddddddd');
    expect(t.lockedFor('10.3.0.1', 'i-dddddddddd')).toBe(0);
  });

  it('delays grow with each failure and are capped', () => {
    const t = createAuthThrottle({ now: () => 0 });
    const delays = Array.from({ length: 7 }, () => t.fail('10.0.0.1', 'i-aaaaaaaaaa'));
    expect(delays).toEqual([250, 500, 1000, 2000, 4000, 4000, 4000]);
  });

  it('closes a connection after too many authentication attempts, and limits connections per address', async () => {
    const g = await startSshGateway({ config, access: fake.access, log: quiet, limits: { authAttempts: 3, connectionsPerIp: 1 } });
    try {
      // Each refused key is one attempt (the client only asks whether the key would do).
      const keys = [stranger.private, edKeys().private, edKeys().private, ed.private];
      let tried = 0;
      const result = await new Promise<string>((resolve) => {
        const cl = new ssh2.Client();
        cl.once('ready', () => {
          cl.end();
          resolve('logged in');
        });
        cl.once('error', (e) => resolve(e.message));
        cl.once('close', () => resolve('closed'));
        cl.connect({
          host: '127.0.0.1',
          port: g.port,
          username: mine.id,
          authHandler: (_m, _p, next) => {
            const k = keys[tried++];
            if (!k) return false;
            next({ type: 'publickey', username: mine.id, key: k });
            return undefined as never;
          },
        });
      });
      // The 4th key is a valid one: it comes too late, the connection is closed after 3 attempts.
      expect(result).not.toBe('logged in');
      expect(tried).toBeGreaterThanOrEqual(4);
      await new Promise((r) => setTimeout(r, 100));

      const first = await connect({ username: mine.id, privateKey: ed.private, port: g.port });
      await expect(connect({ username: mine.id, privateKey: ed.private, port: g.port })).rejects.toThrow('connection closed');
      first.end();
    } finally {
      await g.close();
    }
  });

  it('closes idle connections and refuses too many session channels', async () => {
    const g = await startSshGateway({ config, access: fake.access, log: quiet, limits: { idleMs: 400, sessionsPerConnection: 1 } });
    try {
      const cl = await connect({ username: mine.id, privateKey: ed.private, port: g.port });
      const closed = new Promise<void>((resolve) => cl.once('close', () => resolve()));
      await new Promise<ClientChannel>((resolve, reject) => cl.exec('sleep 30', (e, ch) => (e ? reject(e) : resolve(ch))));
      await expect(new Promise((resolve, reject) => cl.exec('echo second', (e, ch) => (e ? reject(e) : resolve(ch))))).rejects.toThrow();
      // Nothing is typed and the command prints nothing: the idle timer closes the connection.
      await closed;
    } finally {
      await g.close();
    }
  });
});
