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
  const switches = {
    failCreate: 0,
    failStart: 0,
    retryable: false,
    unavailable: undefined as string | undefined,
    delayMs: 0,
    failStartOf: new Set<string>(),
    // Issue #10: what a disk holds, by instance id, instead of what its dir holds; a pause per copied file.
    dataUsedBytes: new Map<string, number>(),
    systemUsedBytes: new Map<string, number>(),
    copyDelayMs: 0,
  };

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
      return {
        cpuSeconds: 0,
        memoryBytes: 0,
        memoryLimitBytes: inst.spec.memoryBytes,
        dataDiskUsedBytes: usedOf(inst),
        dataDiskTotalBytes: inst.spec.dataDiskBytes,
        systemLayerBytes: switches.systemUsedBytes.get(id) ?? duBytes(path.join(inst.dir, 'system')),
        processes: inst.state === 'running' ? 1 : 0,
      };
    },
    async list() {
      return [...instances.values()].filter((i) => i.state === 'running').map((i) => i.spec.id);
    },

    // Issue #10. The data disk is <dir>/data, the system layer <dir>/system (what the instance wrote).
    async resizeDataDisk(id, bytes) {
      calls.push({ op: 'resizeDataDisk', id });
      const inst = instances.get(id);
      if (!inst) throw new ComputeError(`fake: ${id} is missing`);
      if (bytes < inst.spec.dataDiskBytes && inst.state === 'running') throw new ComputeError(`fake: ${id} is running; shrink it stopped`);
      if (bytes < usedOf(inst)) throw new ComputeError(`fake: ${id} holds ${usedOf(inst)} bytes, more than ${bytes}`);
      inst.spec = { ...inst.spec, dataDiskBytes: bytes };
      return { atNextStart: false };
    },
    async saveSystemLayer(id, dir, opts) {
      calls.push({ op: 'saveSystemLayer', id });
      const inst = instances.get(id);
      if (!inst) throw new ComputeError(`fake: ${id} is missing`);
      if (inst.state === 'running') throw new ComputeError(`fake: ${id} is running`);
      await pause();
      fs.mkdirSync(path.join(dir, 'root'), { recursive: true });
      const system = path.join(inst.dir, 'system');
      if (fs.existsSync(system)) fs.cpSync(system, path.join(dir, 'root'), { recursive: true });
      const sizeBytes = duBytes(path.join(dir, 'root'));
      opts?.onProgress?.({ copiedBytes: sizeBytes, totalBytes: sizeBytes, files: 0 });
      return { sizeBytes };
    },
    async cloneFrom(sourceId, spec, opts) {
      calls.push({ op: 'cloneFrom', id: spec.id });
      await pause();
      failIf('failCreate', 'clone');
      const src = instances.get(sourceId);
      if (!src) throw new ComputeError(`fake: ${sourceId} is missing`);
      if (src.state === 'running') throw new ComputeError(`fake: ${sourceId} is running`);
      if (instances.has(spec.id)) return;
      const dir = path.join(root, spec.id);
      fs.cpSync(src.dir, dir, { recursive: true });
      fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
      instances.set(spec.id, { spec, state: 'created', dir, resets: 0 });
      const bytes = duBytes(dir);
      opts?.onProgress?.({ copiedBytes: bytes, totalBytes: bytes, files: 0 });
    },
    async copyData(o) {
      calls.push({ op: 'copyData', id: o.targetId });
      const src = instances.get(o.sourceId);
      const dst = instances.get(o.targetId);
      if (!src || !dst) throw new ComputeError(`fake: ${!src ? o.sourceId : o.targetId} is missing`);
      const from = path.join(src.dir, 'data', o.sourcePath);
      const to = path.join(dst.dir, 'data', o.targetPath);
      if (!fs.existsSync(from)) throw new ComputeError(`fake: ${o.sourcePath || '/'} is missing on ${o.sourceId}`);
      const files = fs.statSync(from).isDirectory() ? (fs.readdirSync(from, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name))) : [from];
      const totalBytes = files.reduce((n, f) => n + fs.statSync(f).size, 0);
      const progress = { copiedBytes: 0, totalBytes, files: 0 };
      for (const f of files) {
        if (o.signal?.aborted) throw new ComputeError('fake: copy aborted');
        if (switches.copyDelayMs > 0) await new Promise((r) => setTimeout(r, switches.copyDelayMs));
        if (o.signal?.aborted) throw new ComputeError('fake: copy aborted');
        const rel = fs.statSync(from).isDirectory() ? path.relative(from, f) : path.basename(f);
        fs.mkdirSync(path.dirname(path.join(to, rel)), { recursive: true });
        fs.copyFileSync(f, path.join(to, rel));
        progress.copiedBytes += fs.statSync(f).size;
        progress.files++;
        o.onProgress?.({ ...progress });
      }
      return progress;
    },
  };

  /** Bytes in the fake data disk (or what a test said it holds). */
  function usedOf(inst: FakeInstance): number {
    return switches.dataUsedBytes.get(inst.spec.id) ?? duBytes(path.join(inst.dir, 'data'));
  }

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

function duBytes(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  let n = 0;
  for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) if (e.isFile()) n += fs.statSync(path.join(e.parentPath, e.name)).size;
  return n;
}
