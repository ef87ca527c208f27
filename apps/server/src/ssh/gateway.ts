import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import ssh2 from 'ssh2';
import type { AuthContext, Connection, ServerChannel, Session } from 'ssh2';
import { INSTANCE_ID_RE } from '@suanli/contract/instance';
import type { Config } from '../config.ts';
import type { InstanceAccess, SshTarget } from '../modules/instance/instance-access.ts';
import type { ExecSession, TerminalSession } from '../adapters/compute/port.ts';
import { loadHostKey } from './host-key.ts';
import { createAuthThrottle, type AuthThrottle } from './throttle.ts';

/** Limits of the gateway (docs/ssh.md); tests shorten the timeouts. */
export const SSH_LIMITS = {
  /** Connections open at once from one address. */
  connectionsPerIp: 10,
  /** Connections open at once in all. */
  connections: 1_000,
  /** Authentication requests per connection (OpenSSH's MaxAuthTries is 6; agents offer several keys). */
  authAttempts: 10,
  /** Session channels open at once per connection (shells, commands, sftp). */
  sessionsPerConnection: 10,
  /** A connection that hasn't logged in by then is closed (OpenSSH's LoginGraceTime). */
  loginGraceMs: 30_000,
  /** A logged-in connection with no data either way for this long is closed. */
  idleMs: 60 * 60_000,
  /** Environment variables accepted per session (LANG, LC_*, TZ, COLORTERM only). */
  envVars: 32,
};

export type SshLogger = {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
};

export type SshGateway = { port: number; close(): Promise<void> };

const SFTP_SERVER = '/usr/lib/openssh/sftp-server';
const METHODS: AuthContext['method'][] = ['publickey', 'password'];
const ENV_NAME = /^(LANG|LC_[A-Z]+|TZ|COLORTERM)$/;
const MAX_PASSWORD_LENGTH = 256;

type PtyInfo = { cols: number; rows: number; term: string };

const clampSize = (n: number, fallback: number) => (Number.isInteger(n) && n > 0 ? Math.min(n, 1000) : fallback);

/**
 * The SSH gateway (ssh2): `ssh -p SSH_PORT <instance-id>@host` logs in with one of the owner's
 * public keys (the signature is verified) or the instance's root password, and each session
 * channel becomes a shell, a command or the sftp subsystem inside the instance, through
 * InstanceAccess.sshTarget. Unknown ids, stopped instances and wrong credentials get the same
 * refusal. No port forwarding, agent forwarding or X11: those requests are refused.
 */
export async function startSshGateway(opts: {
  config: Pick<Config, 'SSH_PORT' | 'SSH_HOST_KEY_FILE' | 'HOST'>;
  access: InstanceAccess;
  log: SshLogger;
  dataDir?: string;
  /** Tests: shorter limits, a throttle with a driven clock. */
  limits?: Partial<typeof SSH_LIMITS>;
  throttle?: AuthThrottle;
  /** Tests: the host to bind (default config.HOST). */
  host?: string;
}): Promise<SshGateway> {
  const { access, log } = opts;
  const limits = { ...SSH_LIMITS, ...opts.limits };
  const throttle = opts.throttle ?? createAuthThrottle();
  const hostKey = loadHostKey({ file: opts.config.SSH_HOST_KEY_FILE, dataDir: opts.dataDir });
  const perIp = new Map<string, number>();
  const clients = new Set<Connection>();

  const server = new ssh2.Server({ hostKeys: [hostKey.key], ident: 'Suanli' }, (client, info) => {
    const ip = info.ip;
    const count = perIp.get(ip) ?? 0;
    if (count >= limits.connectionsPerIp) {
      log.warn({ ip }, 'ssh: too many connections from one address, refused');
      client.on('error', () => {});
      // Connection.end() only half-closes; drop the socket outright.
      (client as unknown as { _sock?: { destroy(): void } })._sock?.destroy();
      return;
    }
    perIp.set(ip, count + 1);
    clients.add(client);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      clients.delete(client);
      const n = (perIp.get(ip) ?? 1) - 1;
      if (n <= 0) perIp.delete(ip);
      else perIp.set(ip, n);
    };
    client.on('close', release);
    client.on('end', release);
    client.on('error', (err) => log.info({ ip, err: err.message }, 'ssh: connection error'));
    handleConnection(client, ip);
  });

  function handleConnection(client: Connection, ip: string) {
    let attempts = 0;
    let target: SshTarget | null = null;
    let lastActivity = Date.now();
    const touch = () => {
      lastActivity = Date.now();
    };
    const grace = setTimeout(() => {
      if (!target) client.end();
    }, limits.loginGraceMs);
    grace.unref();
    let idleTimer: NodeJS.Timeout | undefined;
    const stopTimers = () => {
      clearTimeout(grace);
      if (idleTimer) clearInterval(idleTimer);
    };
    client.on('close', stopTimers);

    const refuse = (ctx: AuthContext) => {
      try {
        ctx.reject(METHODS);
      } catch {
        // the client went away while we were checking
      }
    };

    client.on('authentication', (ctx) => {
      attempts += 1;
      if (attempts > limits.authAttempts) {
        refuse(ctx);
        client.end();
        return;
      }
      void authenticate(ctx).then(
        (ok) => {
          if (!ok) return;
          try {
            ctx.accept();
          } catch {
            // gone
          }
        },
        (err: unknown) => {
          log.warn({ ip, err: err instanceof Error ? err.message : String(err) }, 'ssh: authentication error');
          refuse(ctx);
        },
      );
    });

    /** True to accept; false after refusing (possibly after the throttle's delay). */
    async function authenticate(ctx: AuthContext): Promise<boolean> {
      const id = ctx.username;
      if (ctx.method === 'publickey') {
        const t = INSTANCE_ID_RE.test(id) ? await access.sshTarget(id) : null;
        const matched = t?.running ? matchKey(await t.publicKeys(), ctx.key.data) : null;
        if (!t || !matched) {
          refuse(ctx);
          return false;
        }
        // Without a signature the client only asks whether this key would do (RFC 4252 §7).
        if (!ctx.signature) {
          ctx.accept();
          return false;
        }
        if (!ctx.blob || matched.verify(ctx.blob, ctx.signature, ctx.hashAlgo) !== true) {
          refuse(ctx);
          return false;
        }
        target = t;
        return true;
      }
      if (ctx.method === 'password') {
        const locked = throttle.lockedFor(ip, id);
        if (locked > 0) {
          await sleep(throttle.fail(ip, id));
          refuse(ctx);
          return false;
        }
        const t = INSTANCE_ID_RE.test(id) && ctx.password.length <= MAX_PASSWORD_LENGTH ? await access.sshTarget(id) : null;
        const good = t?.running ? await t.checkPassword(ctx.password) : false;
        if (!t || !good) {
          await sleep(throttle.fail(ip, id));
          refuse(ctx);
          return false;
        }
        throttle.succeed(id);
        target = t;
        return true;
      }
      refuse(ctx);
      return false;
    }

    client.on('ready', () => {
      clearTimeout(grace);
      touch();
      const check = Math.max(50, Math.min(limits.idleMs / 4, 30_000));
      idleTimer = setInterval(() => {
        if (Date.now() - lastActivity > limits.idleMs) {
          log.info({ ip, instanceId: target?.instanceId }, 'ssh: idle timeout');
          client.end();
        }
      }, check);
      idleTimer.unref();
      let sessions = 0;
      client.on('session', (accept, reject) => {
        if (sessions >= limits.sessionsPerConnection || !target) {
          reject();
          return;
        }
        sessions += 1;
        const session = accept();
        let closed = false;
        const done = () => {
          if (closed) return;
          closed = true;
          sessions -= 1;
        };
        session.once('close', done);
        handleSession(session, target.instanceId, ip, touch, done);
      });
    });
  }

  function handleSession(session: Session, instanceId: string, ip: string, touch: () => void, done: () => void) {
    let pty: PtyInfo | null = null;
    const env: Record<string, string> = {};
    let running: { kill(): void; resize(size: { cols: number; rows: number }): void; signal?(name: NodeJS.Signals): void } | null = null;

    session.on('pty', (accept, _reject, info) => {
      pty = { cols: clampSize(info.cols, 80), rows: clampSize(info.rows, 24), term: /^[\w.+-]{1,64}$/.test(info.term) ? info.term : 'xterm' };
      accept?.();
    });
    session.on('window-change', (accept, _reject, info) => {
      const size = { cols: clampSize(info.cols, 80), rows: clampSize(info.rows, 24) };
      if (pty) pty = { ...pty, ...size };
      running?.resize(size);
      accept?.();
    });
    session.on('env', (accept, reject, info) => {
      if (ENV_NAME.test(info.key) && Object.keys(env).length < limits.envVars && info.val.length <= 1024 && !info.val.includes('\0')) {
        env[info.key] = info.val;
        accept?.();
      } else reject?.();
    });
    session.on('signal', (accept, _reject, info) => {
      running?.signal?.(`SIG${info.name}` as NodeJS.Signals);
      accept?.();
    });

    /** A fresh look at the instance: it may have stopped since the login. */
    const fresh = async () => {
      const t = await access.sshTarget(instanceId);
      return t?.running ? t : null;
    };

    /**
     * Accepts the request at once (ssh2 drops a request still unanswered when the client's EOF
     * arrives, and OpenSSH sends EOF right after `exec` when stdin is empty), then starts the work
     * inside the instance; input that arrives meanwhile waits in the channel. A failure to start
     * is told on stderr with exit status 255.
     */
    const begin = (accept: (() => ServerChannel | undefined) | undefined, what: string, work: (t: SshTarget, channel: ServerChannel) => Promise<void>) => {
      const channel = accept?.();
      if (!channel) return;
      void (async () => {
        const t = await fresh();
        if (!t) {
          channel.stderr.write('实例未在运行，连接已关闭\r\n');
          finish(channel, { code: 255, signal: null });
          return;
        }
        await work(t, channel);
      })().catch((err: unknown) => {
        log.warn({ ip, instanceId, err: err instanceof Error ? err.message : String(err) }, `ssh: ${what} failed`);
        try {
          channel.stderr.write('无法在实例中启动会话，请稍后重试\r\n');
        } catch {
          // closed
        }
        finish(channel, { code: 255, signal: null });
      });
    };

    session.on('shell', (accept) => {
      begin(accept, 'shell', async (t, channel) => {
        if (pty) {
          const term = await t.openTerminal({ cols: pty.cols, rows: pty.rows, term: pty.term, env });
          running = { kill: () => term.close(), resize: (s) => term.resize(s) };
          pipeTerminal(term, channel, touch, done);
        } else {
          const proc = await t.exec({ command: ['/bin/bash', '-l'], env });
          running = processControls(proc);
          pipeProcess(proc, channel, touch, done);
        }
      });
    });

    session.on('exec', (accept, _reject, info) => {
      begin(accept, 'exec', async (t, channel) => {
        const proc = await t.exec({ command: info.command, env, ...(pty ? { pty: { cols: pty.cols, rows: pty.rows, term: pty.term } } : {}) });
        running = processControls(proc);
        pipeProcess(proc, channel, touch, done);
      });
    });

    // `sftp` (and scp, which speaks sftp by default) runs OpenSSH's sftp-server inside the instance,
    // its stdin/stdout piped raw to the channel: files land in the instance with its permissions.
    session.on('subsystem', (accept, reject, info) => {
      if (info.name !== 'sftp') return reject?.();
      begin(accept, 'sftp', async (t, channel) => {
        const proc = await t.exec({ command: [SFTP_SERVER], env });
        running = processControls(proc);
        pipeProcess(proc, channel, touch, done);
      });
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.config.SSH_PORT, opts.host ?? opts.config.HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err: Error) => log.warn({ err: err.message }, 'ssh: server error'));
  const port = (server.address() as AddressInfo).port;
  log.info({ port, hostKey: hostKey.source }, 'SSH gateway listening');

  return {
    port,
    async close() {
      await new Promise<void>((resolve) => {
        // Sessions are told to go; one that lingers is cut after 3 s so shutdown isn't held up.
        const cut = setTimeout(() => {
          for (const c of clients) (c as unknown as { _sock?: { destroy(): void } })._sock?.destroy();
          resolve();
        }, 3_000);
        cut.unref();
        server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        for (const c of clients) c.end();
      });
    },
  };
}

/** The allowed key whose blob is exactly the offered one, parsed (ssh2) for signature checks. */
function matchKey(lines: string[], offered: Buffer) {
  for (const line of lines) {
    const parsed = ssh2.utils.parseKey(line);
    if (parsed instanceof Error) continue;
    const key = Array.isArray(parsed) ? parsed[0] : parsed;
    if (!key) continue;
    const blob = key.getPublicSSH();
    if (blob.length === offered.length && crypto.timingSafeEqual(blob, offered)) return key;
  }
  return null;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function processControls(proc: ExecSession) {
  return { kill: () => proc.kill('SIGKILL'), resize: (s: { cols: number; rows: number }) => proc.resize(s), signal: (name: NodeJS.Signals) => proc.kill(name) };
}

const ended = (s: Readable) =>
  new Promise<void>((resolve) => {
    if (s.readableEnded || s.destroyed) return resolve();
    s.once('end', resolve);
    s.once('close', resolve);
    s.once('error', () => resolve());
  });

/** Sends the exit status (or signal) once, then closes the channel. */
function finish(channel: ServerChannel, result: { code: number | null; signal: string | null }) {
  try {
    if (result.signal) channel.exit(result.signal.replace(/^SIG/, ''), false, '');
    else channel.exit(result.code ?? 255);
    channel.end();
  } catch {
    // the client closed first
  }
}

function pipeProcess(proc: ExecSession, channel: ServerChannel, touch: () => void, done: () => void) {
  let over = false;
  channel.on('data', touch);
  proc.stdout.on('data', touch);
  // Client -> stdin, and the client's EOF (end of `ssh host cmd < file`) closes stdin.
  channel.pipe(proc.stdin);
  proc.stdin.on('error', () => {});
  proc.stdout.pipe(channel, { end: false });
  if (proc.stderr !== proc.stdout) proc.stderr.pipe(channel.stderr, { end: false });
  channel.on('close', () => {
    done();
    if (!over) proc.kill('SIGKILL');
  });
  void Promise.all([proc.exit, ended(proc.stdout), proc.stderr !== proc.stdout ? ended(proc.stderr) : Promise.resolve()]).then(([result]) => {
    over = true;
    finish(channel, result);
  });
}

function pipeTerminal(term: TerminalSession, channel: ServerChannel, touch: () => void, done: () => void) {
  let over = false;
  channel.on('data', (d: Buffer) => {
    touch();
    term.write(d);
  });
  term.output.on('data', touch);
  term.output.pipe(channel, { end: false });
  channel.on('close', () => {
    done();
    if (!over) term.close();
  });
  void Promise.all([term.exit, ended(term.output)]).then(([result]) => {
    over = true;
    finish(channel, result);
  });
}
