import { spawn } from 'node:child_process';
import os from 'node:os';
import { PassThrough, Writable } from 'node:stream';
import * as pty from 'node-pty';
import { ComputeError, type ExecOptions, type ExecSession, type TerminalOptions, type TerminalSession, type TerminalSize } from '../port.ts';

/**
 * Capabilities left to root inside an instance (Docker's default set, without CAP_MKNOD): no
 * CAP_SYS_ADMIN (no mounts), no CAP_SYS_MODULE, CAP_SYS_PTRACE, CAP_NET_ADMIN, CAP_SYS_RAWIO …
 */
export const INSTANCE_CAPS = ['chown', 'dac_override', 'fowner', 'fsetid', 'kill', 'setgid', 'setuid', 'setpcap', 'net_bind_service', 'net_raw', 'sys_chroot', 'audit_write', 'setfcap'];

const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/**
 * The host-side wrapper every session runs: it writes its own pid into each of the instance's
 * cgroup.procs files FIRST (so everything it becomes and forks is counted against the instance's
 * memory, cpu and pids limits: a bare nsenter would stay in the server's cgroup), then joins all
 * the init's namespaces with nsenter (which forks into the instance's PID namespace), then drops
 * the capability bounding set to INSTANCE_CAPS and runs the command with a clean environment.
 */
export function sessionArgv(initPid: number, cgroupProcs: string[], argv: string[], env: Record<string, string>): { file: string; args: string[]; env: Record<string, string> } {
  const envArgs = Object.entries(env)
    .filter(([k]) => ENV_NAME.test(k))
    .map(([k, v]) => `${k}=${v.replace(/\0/g, '')}`);
  const script = 'for f in $SUANLI_CGROUP_PROCS; do echo $$ > "$f" || exit 125; done; exec nsenter -t "$SUANLI_INIT_PID" -a -r -w -- "$@"';
  return {
    file: '/bin/sh',
    args: ['-c', script, 'suanli-session', '/usr/bin/setpriv', `--bounding-set=-all,${INSTANCE_CAPS.map((c) => `+${c}`).join(',')}`, '--', '/usr/bin/env', '-i', ...envArgs, ...argv],
    env: { PATH, SUANLI_CGROUP_PROCS: cgroupProcs.join(' '), SUANLI_INIT_PID: String(initPid) },
  };
}

export function baseEnv(term: string | undefined, extra: Record<string, string> | undefined): Record<string, string> {
  return { HOME: '/root', USER: 'root', LOGNAME: 'root', SHELL: '/bin/bash', PATH, LANG: 'C.UTF-8', TERM: term ?? 'xterm-256color', ...(extra ?? {}) };
}

const signalNames = new Map(Object.entries(os.constants.signals).map(([name, n]) => [n, name]));

function killGroup(pid: number | undefined, signal: NodeJS.Signals) {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

/** SIGTERM (or the given signal), then SIGKILL after a grace if the session is still there. */
function killWithGrace(pid: number | undefined, exited: () => boolean, signal?: NodeJS.Signals) {
  killGroup(pid, signal ?? 'SIGTERM');
  if (!signal || signal === 'SIGTERM' || signal === 'SIGHUP') {
    setTimeout(() => {
      if (!exited()) killGroup(pid, 'SIGKILL');
    }, 2000).unref();
  }
}

function checkSize(size: TerminalSize) {
  const ok = (n: number) => Number.isInteger(n) && n >= 1 && n <= 1000;
  if (!ok(size.cols) || !ok(size.rows)) throw new ComputeError(`bad terminal size ${size.cols}x${size.rows}`);
}

type PtyHandle = { proc: pty.IPty; output: PassThrough; exit: Promise<{ code: number | null; signal: string | null }>; exited: () => boolean };

function spawnPty(cmd: { file: string; args: string[]; env: Record<string, string> }, size: TerminalSize, term: string): PtyHandle {
  checkSize(size);
  const proc = pty.spawn(cmd.file, cmd.args, { name: term, cols: size.cols, rows: size.rows, env: cmd.env, cwd: '/' });
  const output = new PassThrough();
  let done = false;
  proc.onData((d) => output.write(Buffer.from(d, 'utf8')));
  const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    proc.onExit(({ exitCode, signal }) => {
      done = true;
      // let the last bytes drain into `output` before ending it
      setImmediate(() => output.end());
      resolve(signal ? { code: null, signal: signalNames.get(signal) ?? String(signal) } : { code: exitCode, signal: null });
    });
  });
  return { proc, output, exit, exited: () => done };
}

export function startExec(initPid: number, cgroupProcs: string[], opts: ExecOptions): ExecSession {
  const argv = typeof opts.command === 'string' ? ['/bin/bash', '-lc', opts.command] : opts.command;
  if (!argv.length) throw new ComputeError('empty command');
  const env = baseEnv(opts.pty?.term, opts.env);
  const cmd = sessionArgv(initPid, cgroupProcs, argv, env);
  if (opts.pty) {
    const h = spawnPty(cmd, opts.pty, opts.pty.term ?? 'xterm-256color');
    const stdin = new Writable({
      write(chunk: Buffer, _enc, cb) {
        if (!h.exited()) h.proc.write(chunk.toString('utf8'));
        cb();
      },
      final(cb) {
        if (!h.exited()) h.proc.write('\x04');
        cb();
      },
    });
    return {
      stdin,
      stdout: h.output,
      stderr: h.output,
      exit: h.exit,
      resize: (size) => {
        checkSize(size);
        if (!h.exited()) h.proc.resize(size.cols, size.rows);
      },
      kill: (signal) => killWithGrace(h.proc.pid, h.exited, signal),
    };
  }
  const child = spawn(cmd.file, cmd.args, { env: cmd.env, stdio: 'pipe', detached: true, cwd: '/' });
  let done = false;
  const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.on('error', () => {
      done = true;
      resolve({ code: 127, signal: null });
    });
    child.on('close', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
  });
  child.stdin.on('error', () => {});
  return {
    stdin: child.stdin,
    stdout: child.stdout,
    stderr: child.stderr,
    exit,
    resize: () => {},
    kill: (signal) => killWithGrace(child.pid, () => done, signal),
  };
}

export function startTerminal(initPid: number, cgroupProcs: string[], opts: TerminalOptions): TerminalSession {
  const term = opts.term && /^[A-Za-z0-9._+-]{1,64}$/.test(opts.term) ? opts.term : 'xterm-256color';
  const cmd = sessionArgv(initPid, cgroupProcs, ['/bin/bash', '-l'], baseEnv(term, opts.env));
  const h = spawnPty(cmd, opts, term);
  return {
    output: h.output,
    write: (data) => {
      if (!h.exited()) h.proc.write(typeof data === 'string' ? data : data.toString('utf8'));
    },
    resize: (size) => {
      checkSize(size);
      if (!h.exited()) h.proc.resize(size.cols, size.rows);
    },
    close: () => killWithGrace(h.proc.pid, h.exited, 'SIGHUP'),
    exit: h.exit,
  };
}
