/**
 * Disk helpers of the local driver's issue-#10 operations: ext4 facts of a data disk image, and
 * copies with progress that can be aborted (a system layer as a tar stream, a sparse disk image,
 * a data copy in a sandboxed worker).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ComputeError, type CopyProgress } from '../port.ts';
import { run, runCode } from './sh.ts';

export type Ext4Info = { blockCount: number; freeBlocks: number; blockSize: number };

/** Block count, free blocks and block size from the superblock (`dumpe2fs -h`): no mount needed. */
export async function ext4Info(imageOrDevice: string): Promise<Ext4Info> {
  const out = await run('dumpe2fs', ['-h', imageOrDevice], { timeoutMs: 30_000 });
  const num = (label: string) => {
    const m = new RegExp(`^${label}:\\s+(\\d+)`, 'm').exec(out);
    if (!m) throw new ComputeError(`dumpe2fs ${imageOrDevice}: no "${label}"`);
    return Number(m[1]);
  };
  return { blockCount: num('Block count'), freeBlocks: num('Free blocks'), blockSize: num('Block size') };
}

/** The device mounted at `mountPoint` (a /dev/loopN for a data disk), from the mount table. */
export async function sourceOf(mountPoint: string): Promise<string> {
  const dev = (await run('findmnt', ['-n', '-o', 'SOURCE', '--mountpoint', mountPoint])).trim();
  if (!/^\/dev\/loop\d+$/.test(dev)) throw new ComputeError(`${mountPoint} is mounted from ${dev || 'nothing'}, not a loop device`);
  return dev;
}

/** e2fsck -f -y, accepting "errors corrected" (exit 1) as well as "clean" (0). */
export async function fsck(image: string): Promise<void> {
  const r = await runCode('e2fsck', ['-f', '-y', image], { timeoutMs: 600_000 });
  if (r.code > 1) throw new ComputeError(`e2fsck ${image}: exit ${r.code}: ${(r.stderr || r.stdout).trim().slice(-400)}`);
}

/** Bytes (apparent sizes of regular files) and entries under `dir`, never following a symlink. */
export function treeBytes(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  const visit = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      files++;
      if (e.isDirectory()) visit(full);
      else if (e.isFile()) bytes += fs.lstatSync(full).size;
    }
  };
  if (fs.existsSync(dir)) visit(dir);
  return { bytes, files };
}

function killTree(children: ChildProcess[]) {
  for (const c of children) {
    try {
      if (c.pid && c.exitCode === null) process.kill(c.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

function aborted(signal?: AbortSignal) {
  if (signal?.aborted) throw new ComputeError('copy aborted');
}

function waitExit(c: ChildProcess, what: string, stderr: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    c.once('error', (e) => reject(new ComputeError(`${what}: ${e.message}`)));
    c.once('close', (code, sig) => (code === 0 ? resolve() : reject(new ComputeError(`${what}: ${sig ?? `exit ${code}`}: ${stderr().trim().slice(-400)}`))));
  });
}

/**
 * Copies the tree `src` to `dst` (which must not exist) as overlayfs needs it in a layer:
 * whiteouts (0/0 character devices), opaque directories and every other xattr, owners, modes,
 * timestamps, symlinks, hard links and holes (`cp -a --sparse=always`, a reflink where the
 * filesystem can). `onBytes` hears the bytes copied so far (the destination walked at intervals
 * that grow with its size, at least every 250 ms). `exclude`d paths (relative) are removed from
 * the copy unless they are whiteouts.
 */
export async function copyTree(src: string, dst: string, opts: { exclude?: string[]; signal?: AbortSignal; onBytes?: (n: number) => void } = {}): Promise<void> {
  aborted(opts.signal);
  fs.mkdirSync(path.dirname(dst), { recursive: true });
  fs.rmSync(dst, { recursive: true, force: true });
  const cp = spawn('cp', ['-a', '--sparse=always', '--reflink=auto', '--no-target-directory', '--', src, dst], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  cp.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const poll = () => {
    if (stopped) return;
    const t0 = Date.now();
    let n = 0;
    try {
      n = treeBytes(dst).bytes;
    } catch {
      /* racing the copy */
    }
    opts.onBytes?.(n);
    timer = setTimeout(poll, Math.max(250, (Date.now() - t0) * 10));
  };
  if (opts.onBytes) timer = setTimeout(poll, 250);
  const onAbort = () => killTree([cp]);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await waitExit(cp, `cp -a ${src}`, () => err);
  } catch (e) {
    aborted(opts.signal);
    throw e;
  } finally {
    stopped = true;
    if (timer) clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
  aborted(opts.signal);
  for (const rel of opts.exclude ?? []) {
    const f = path.join(dst, rel);
    const st = fs.lstatSync(f, { throwIfNoEntry: false });
    if (st && !st.isCharacterDevice() && !st.isDirectory()) fs.rmSync(f, { force: true });
  }
}

/** Allocated bytes of a file (what a sparse copy really moves). */
export function allocatedBytes(file: string): number {
  const st = fs.statSync(file, { throwIfNoEntry: false });
  return st ? st.blocks * 512 : 0;
}

/** Copies a (sparse) disk image: a reflink where the filesystem can, holes kept otherwise. */
export async function copySparseFile(src: string, dst: string, opts: { signal?: AbortSignal; onBytes?: (n: number) => void } = {}): Promise<void> {
  aborted(opts.signal);
  fs.rmSync(dst, { force: true });
  const cp = spawn('cp', ['--sparse=always', '--reflink=auto', '--', src, dst], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  cp.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const timer = setInterval(() => opts.onBytes?.(allocatedBytes(dst)), 250);
  const onAbort = () => killTree([cp]);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await waitExit(cp, `cp ${src}`, () => err);
  } catch (e) {
    aborted(opts.signal);
    throw e;
  } finally {
    clearInterval(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
  aborted(opts.signal);
  opts.onBytes?.(allocatedBytes(dst));
}

const WORKER = fileURLToPath(new URL('./copy-worker.mjs', import.meta.url));

/** bwrap arguments that give the worker the host's /usr (read-only) and nothing else of the host. */
function sandboxBase(): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const d of ['/lib', '/lib64', '/lib32', '/libx32', '/bin', '/sbin']) {
    const st = fs.lstatSync(d, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(d), d);
    else if (st.isDirectory()) args.push('--ro-bind', d, d);
  }
  const nodeDir = path.dirname(process.execPath);
  if (!nodeDir.startsWith('/usr/') && !['/bin', '/sbin'].includes(nodeDir)) args.push('--ro-bind', nodeDir, nodeDir);
  return args;
}

/**
 * Copies `srcRel` of the disk mounted at `srcMnt` into directory `dstRel` of the one at `dstMnt`
 * in a sandboxed worker (copy-worker.mjs): the instances' symlinks can never lead it off the two
 * disks. Progress at most every `everyMs` and at the end; `signal` kills it (what was copied stays).
 */
export async function runCopyWorker(
  o: { srcMnt: string; srcRel: string; dstMnt: string; dstRel: string; signal?: AbortSignal; onProgress?: (p: CopyProgress) => void },
  everyMs = 250,
): Promise<CopyProgress> {
  aborted(o.signal);
  const args = [
    '--die-with-parent',
    '--unshare-ipc',
    '--unshare-pid',
    '--unshare-net',
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...sandboxBase(),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--ro-bind',
    WORKER,
    '/copy-worker.mjs',
    '--ro-bind',
    o.srcMnt,
    '/src',
    '--bind',
    o.dstMnt,
    '/dst',
    '--cap-drop',
    'ALL',
    ...['CHOWN', 'FOWNER', 'DAC_OVERRIDE', 'DAC_READ_SEARCH'].flatMap((c) => ['--cap-add', `CAP_${c}`]),
    '--chdir',
    '/',
    '--',
    process.execPath,
    '/copy-worker.mjs',
    path.posix.join('/src', o.srcRel),
    path.posix.join('/dst', o.dstRel),
  ];
  // its own process group (no tty, so no --new-session): an abort kills the group, also a
  // sandbox child bwrap had not yet tied to itself (--die-with-parent) when the abort came
  const child = spawn('bwrap', args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: '/usr/bin:/bin' }, detached: true });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const p: CopyProgress = { copiedBytes: 0, totalBytes: 0, files: 0 };
  let lastReport = 0;
  let failure: { code: string; message: string } | null = null;
  let done = false;
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      let m: { t: string; copiedBytes?: number; totalBytes?: number; files?: number; code?: string; message?: string };
      try {
        m = JSON.parse(line);
      } catch {
        continue;
      }
      if (m.t === 'total') p.totalBytes = m.totalBytes ?? 0;
      else if (m.t === 'p' || m.t === 'done') {
        p.copiedBytes = Math.min(m.copiedBytes ?? 0, Math.max(p.totalBytes, m.copiedBytes ?? 0));
        p.files = m.files ?? 0;
        if (m.t === 'done') {
          p.totalBytes = m.totalBytes ?? p.totalBytes;
          done = true;
        }
        const now = Date.now();
        if (now - lastReport >= everyMs && !done) {
          lastReport = now;
          o.onProgress?.({ ...p });
        }
      } else if (m.t === 'err') failure = { code: m.code ?? 'EIO', message: m.message ?? '' };
    }
  });
  const onAbort = () => {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
    killTree([child]);
  };
  o.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('error', (e) => reject(new ComputeError(`bwrap: ${e.message}`)));
      child.once('close', () => resolve());
      // aborted: bwrap's exit is enough (a straggler holding the pipes must not hold the caller)
      child.once('exit', () => {
        if (o.signal?.aborted) {
          child.stdout!.destroy();
          child.stderr!.destroy();
          resolve();
        }
      });
    });
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
  }
  aborted(o.signal);
  const f = failure as { code: string; message: string } | null;
  if (f) {
    if (f.code === 'ENOSPC') throw new ComputeError(`目标实例的数据盘空间不足（no space left on the target data disk after ${p.copiedBytes} of ${p.totalBytes} bytes）`);
    if (f.code === 'ENOENT') throw new ComputeError(`源路径不存在：${f.message}`);
    if (f.code === 'SYMLINK' || f.code === 'ENOTDIR') throw new ComputeError(`路径不可用：${f.message}`);
    throw new ComputeError(`data copy failed (${f.code}): ${f.message}`, true);
  }
  if (!done) throw new ComputeError(`data copy worker ended early: ${stderr.trim().slice(-400)}`, true);
  o.onProgress?.({ ...p });
  return p;
}
