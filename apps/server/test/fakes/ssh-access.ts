import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { ExecOptions, ExecSession, TerminalOptions, TerminalSession } from '../../src/adapters/compute/port.ts';
import type { InstanceAccess, SshTarget } from '../../src/modules/instance/instance-access.ts';
import { conflict, notFound } from '../../src/lib/errors.ts';

const PTY_HELPER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'pty-helper.py');

export type FakeInstance = {
  id: string;
  tenantId: number;
  userId: number;
  running: boolean;
  password: string;
  keys: string[];
  /** Where the owner's keys come from instead of `keys` (e.g. the real SshKeyService). */
  keysFrom?: () => Promise<string[]>;
  dir: string;
};

/**
 * Test-only InstanceAccess: each "instance" is a temp directory on this host, and its shells and
 * commands are host processes started there (a pty through test/fakes/pty-helper.py). It follows
 * the interface's rules: foreign or missing ids 404, not running 409, null targets for unknown ids.
 */
export function createFakeSshAccess() {
  const instances = new Map<string, FakeInstance>();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-ssh-'));
  const procs = new Set<{ instanceId: string; kill(): void }>();
  const stats = { terminals: 0, execs: [] as (string | string[])[] };

  function spawnIn(inst: FakeInstance, argv: string[], env: Record<string, string> | undefined, pty: (TerminalOptions & { term?: string }) | undefined): ExecSession {
    const baseEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: inst.dir, TERM: pty?.term ?? 'dumb', ...env };
    const child = pty
      ? spawn('python3', [PTY_HELPER, String(pty.cols), String(pty.rows), ...argv], { cwd: inst.dir, env: baseEnv, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] })
      : spawn(argv[0]!, argv.slice(1), { cwd: inst.dir, env: baseEnv, stdio: ['pipe', 'pipe', 'pipe'] });
    const entry = { instanceId: inst.id, kill: () => child.kill('SIGKILL') };
    procs.add(entry);
    const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
      child.once('close', (code, signal) => {
        procs.delete(entry);
        resolve({ code, signal });
      });
      child.once('error', () => resolve({ code: 127, signal: null }));
    });
    const control = child.stdio[3] as NodeJS.WritableStream | undefined;
    control?.on?.('error', () => {});
    return {
      stdin: child.stdin!,
      stdout: child.stdout!,
      stderr: pty ? child.stdout! : child.stderr!,
      exit,
      resize: (s) => control?.write(`${s.cols} ${s.rows}\n`),
      kill: (sig = 'SIGTERM') => child.kill(sig),
    };
  }

  function targetOf(inst: FakeInstance): SshTarget {
    return {
      instanceId: inst.id,
      name: `实例 ${inst.id.slice(-4)}`,
      tenantId: inst.tenantId,
      userId: inst.userId,
      running: inst.running,
      checkPassword: async (pw) => pw.length === inst.password.length && crypto.timingSafeEqual(Buffer.from(pw), Buffer.from(inst.password)),
      publicKeys: async () => (inst.keysFrom ? inst.keysFrom() : inst.keys),
      exec: async (o: ExecOptions) => {
        stats.execs.push(o.command);
        const argv = typeof o.command === 'string' ? ['bash', '-c', o.command] : o.command;
        if (argv[0]?.startsWith('/') && !fs.existsSync(argv[0])) throw new Error(`${argv[0]} is missing on this host (sftp needs Debian's openssh-sftp-server)`);
        return spawnIn(inst, argv, o.env, o.pty);
      },
      openTerminal: async (o: TerminalOptions) => openTerminal(inst, o),
    };
  }

  function openTerminal(inst: FakeInstance, o: TerminalOptions): TerminalSession {
    stats.terminals += 1;
    const proc = spawnIn(inst, ['bash', '--noprofile', '--norc', '-i'], { PS1: '$ ', ...o.env }, o);
    const output = new PassThrough();
    proc.stdout.pipe(output);
    return {
      output,
      write: (d) => proc.stdin.write(d),
      resize: (s) => proc.resize(s),
      close: () => proc.kill('SIGKILL'),
      exit: proc.exit,
    };
  }

  const access: InstanceAccess = {
    async openTerminal(owner, instanceId, opts) {
      const inst = instances.get(instanceId);
      if (!inst || inst.tenantId !== owner.tenantId || inst.userId !== owner.userId) throw notFound('实例不存在');
      if (!inst.running) throw conflict('实例未在运行，请先开机');
      return openTerminal(inst, opts);
    },
    async sshTarget(instanceId) {
      const inst = instances.get(instanceId);
      return inst ? targetOf(inst) : null;
    },
  };

  return {
    access,
    stats,
    add(values: Omit<FakeInstance, 'dir' | 'id' | 'running' | 'password' | 'keys'> & Partial<Pick<FakeInstance, 'id' | 'running' | 'password' | 'keys'>>): FakeInstance {
      const id = values.id ?? `i-${crypto.randomBytes(8).toString('hex').slice(0, 10)}`;
      const dir = path.join(root, id);
      fs.mkdirSync(dir);
      const inst: FakeInstance = { running: true, password: 'Passw0rd!', keys: [], ...values, id, dir };
      instances.set(id, inst);
      return inst;
    },
    /** Stops the instance: every shell and command in it is killed, as the driver does. */
    stop(id: string) {
      const inst = instances.get(id);
      if (inst) inst.running = false;
      for (const p of procs) if (p.instanceId === id) p.kill();
    },
    close() {
      for (const p of procs) p.kill();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
export type FakeSshAccess = ReturnType<typeof createFakeSshAccess>;
