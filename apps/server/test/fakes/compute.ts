import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { ComputeError, type ComputeDriver, type ExecSession, type InstanceSpec, type InstanceUsage, type TerminalSession } from '../../src/adapters/compute/port.ts';

type FakeInstance = { spec: InstanceSpec; state: 'created' | 'running' | 'stopped'; dir: string; resets: number };

/**
 * An in-memory ComputeDriver for tests, honouring the port's contract: every call idempotent for
 * the same id, errors are ComputeError, exec/openTerminal only on a running instance. Commands run
 * as `bash -c` in a temporary directory on the host (tests only: nothing here is isolated).
 * Switches make the next (or every) create/start fail, or the driver unavailable.
 */
export function createFakeCompute() {
  const instances = new Map<string, FakeInstance>();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-fake-compute-'));
  const calls: { op: string; id: string }[] = [];
  const switches = { failCreate: 0, failStart: 0, retryable: false, unavailable: undefined as string | undefined, delayMs: 0, failStartOf: new Set<string>() };

  const pause = () => (switches.delayMs > 0 ? new Promise((r) => setTimeout(r, switches.delayMs)) : Promise.resolve());
  const failIf = (which: 'failCreate' | 'failStart', what: string) => {
    if (switches[which] > 0) {
      switches[which]--;
      throw new ComputeError(`fake: ${what} failed on purpose`, switches.retryable);
    }
  };
  const running = (id: string) => {
    const inst = instances.get(id);
    if (!inst || inst.state !== 'running') throw new ComputeError(`fake: ${id} is not running`);
    return inst;
  };

  const driver: ComputeDriver = {
    name: 'fake',
    async availability() {
      return switches.unavailable ? { ok: false, reason: switches.unavailable } : { ok: true };
    },
    async create(spec) {
      calls.push({ op: 'create', id: spec.id });
      await pause();
      failIf('failCreate', 'create');
      if (instances.has(spec.id)) return;
      const dir = path.join(root, spec.id);
      fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
      instances.set(spec.id, { spec, state: 'created', dir, resets: 0 });
    },
    async start(spec) {
      calls.push({ op: 'start', id: spec.id });
      await pause();
      failIf('failStart', 'start');
      if (switches.failStartOf.has(spec.id)) throw new ComputeError(`fake: start of ${spec.id} failed on purpose`, switches.retryable);
      const inst = instances.get(spec.id);
      if (!inst) throw new ComputeError(`fake: ${spec.id} was never created`);
      inst.spec = spec;
      inst.state = 'running';
    },
    async stop(id) {
      calls.push({ op: 'stop', id });
      const inst = instances.get(id);
      if (inst) inst.state = 'stopped';
    },
    async destroy(id) {
      calls.push({ op: 'destroy', id });
      const inst = instances.get(id);
      if (inst) fs.rmSync(inst.dir, { recursive: true, force: true });
      instances.delete(id);
    },
    async resetSystem(spec) {
      calls.push({ op: 'resetSystem', id: spec.id });
      const inst = instances.get(spec.id);
      if (!inst) throw new ComputeError(`fake: ${spec.id} was never created`);
      if (inst.state === 'running') throw new ComputeError(`fake: ${spec.id} is running`);
      inst.spec = spec;
      inst.resets++;
    },
    async status(id) {
      const inst = instances.get(id);
      return inst?.state === 'running' ? 'running' : inst ? 'stopped' : 'missing';
    },
    async exec(id, opts): Promise<ExecSession> {
      const inst = running(id);
      const args = typeof opts.command === 'string' ? ['-c', opts.command] : ['-c', 'exec "$@"', 'bash', ...opts.command];
      const child = spawn('bash', args, { cwd: inst.dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: inst.dir, HOSTNAME: inst.spec.hostname, ...opts.env } });
      const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
      return { stdin: child.stdin, stdout: child.stdout, stderr: opts.pty ? child.stdout : child.stderr, exit, resize: () => {}, kill: (s) => void child.kill(s ?? 'SIGTERM') };
    },
    async openTerminal(id): Promise<TerminalSession> {
      const inst = running(id);
      const child = spawn('bash', ['-i'], { cwd: inst.dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: inst.dir, PS1: `root@${inst.spec.hostname}:~# ` } });
      const output = new PassThrough();
      output.write(`${inst.spec.banner}\r\n`);
      child.stdout.pipe(output, { end: false });
      child.stderr.pipe(output, { end: false });
      const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        child.once('close', (code, signal) => {
          output.end();
          resolve({ code, signal });
        }),
      );
      return { output, write: (d) => void child.stdin.write(d), resize: () => {}, close: () => void child.kill('SIGTERM'), exit };
    },
    async usage(id): Promise<InstanceUsage> {
      const inst = instances.get(id);
      if (!inst) throw new ComputeError(`fake: ${id} is missing`);
      return { cpuSeconds: 0, memoryBytes: 0, memoryLimitBytes: inst.spec.memoryBytes, dataDiskUsedBytes: 0, dataDiskTotalBytes: inst.spec.dataDiskBytes, systemLayerBytes: 0, processes: inst.state === 'running' ? 1 : 0 };
    },
    async list() {
      return [...instances.values()].filter((i) => i.state === 'running').map((i) => i.spec.id);
    },
  };

  return Object.assign(driver, {
    instances,
    calls,
    switches,
    /** Forget every running instance, as a host reboot would (their disks stay). */
    reboot() {
      for (const i of instances.values()) if (i.state === 'running') i.state = 'stopped';
    },
    cleanup() {
      fs.rmSync(root, { recursive: true, force: true });
    },
  });
}
export type FakeCompute = ReturnType<typeof createFakeCompute>;
