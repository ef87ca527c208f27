/**
 * Issue #10 operations of the local driver: data disk resize, system layer → image layer, clone,
 * data copy between instances. The disks are those of driver.ts: <dir>/upper (and usr-upper) is
 * the system layer over the image, <dir>/data.img a sparse ext4 image loop-mounted at <dir>/data
 * while the instance runs (bound to /root/data inside).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ComputeError, type ComputeDriver, type CopyOptions, type CopyProgress, type InstanceSpec } from '../port.ts';
import { allocatedBytes, copySparseFile, copyTree, ext4Info, fsck, runCopyWorker, sourceOf, treeBytes } from './disk-ops.ts';
import { isMounted } from './fsutil.ts';
import { run, runCode } from './sh.ts';

type Paths = {
  dir: string;
  upper: string;
  work: string;
  usrUpper: string;
  usrWork: string;
  root: string;
  dataImg: string;
  dataMnt: string;
  spec: string;
};

export type OpsDeps = {
  paths(id: string): Paths;
  initOf(id: string): number | null;
  checkSpec(spec: InstanceSpec): void;
  umount(target: string): Promise<void>;
  log?: { info: (o: object, m?: string) => void; warn?: (o: object, m?: string) => void };
};

/**
 * Grows an unmounted data disk's filesystem to its image file's size when the file is bigger (a
 * resize that could not happen online, or a crash between the two steps). start() calls it.
 */
export async function growToFile(image: string): Promise<void> {
  if (!fs.existsSync(image)) return;
  const info = await ext4Info(image);
  if (info.blockCount >= Math.floor(fs.statSync(image).size / info.blockSize)) return;
  await fsck(image);
  await run('resize2fs', [image], { timeoutMs: 600_000 });
}

/** Whether this process may resize a mounted ext4 online (CAP_SYS_RESOURCE in its effective set). */
export function canResizeOnline(): boolean {
  const m = /^CapEff:\s*([0-9a-f]+)/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return !!m && (BigInt(`0x${m[1]}`) & (1n << 24n)) !== 0n;
}

/**
 * Files the driver writes into the system layer at every boot (driver.ts writeInstanceFiles): an
 * image layer leaves them out, so an image never carries its author's SSH keys or hostname.
 */
const PER_BOOT_FILES = ['etc/hostname', 'etc/hosts', 'etc/resolv.conf', 'etc/motd', 'etc/profile.d/00-suanli-motd.sh', 'root/.ssh/authorized_keys'];

const MIN_DISK = 16 * 2 ** 20;

/** Throttles progress reports to one per `everyMs` (the last one always goes out via `flush`). */
function reporter(onProgress: CopyOptions['onProgress'], everyMs = 250) {
  let last = 0;
  return {
    report(p: CopyProgress) {
      const now = Date.now();
      if (!onProgress || now - last < everyMs) return;
      last = now;
      onProgress({ ...p });
    },
    flush(p: CopyProgress) {
      onProgress?.({ ...p });
    },
  };
}

/** A data-disk path relative to /root/data: leading "/" (or "/root/data") dropped; ".." refused. */
export function dataRel(input: string): string {
  // eslint-disable-next-line no-control-regex
  if (typeof input !== 'string' || input.length > 4096 || /[\u0000-\u001f\u007f]/.test(input)) throw new ComputeError('bad data path');
  let s = input.trim();
  if (s === '/root/data' || s.startsWith('/root/data/')) s = s.slice('/root/data'.length);
  const parts = s.split('/').filter((x) => x && x !== '.');
  if (parts.includes('..')) throw new ComputeError(`data path ${JSON.stringify(input)} leaves /root/data`);
  return parts.join('/');
}

/** The root account's password hash in a saved layer's /etc/shadow is blanked (`*`): images are shareable. */
function blankRootPassword(layerRoot: string) {
  const etc = path.join(layerRoot, 'etc');
  const shadow = path.join(etc, 'shadow');
  const etcSt = fs.lstatSync(etc, { throwIfNoEntry: false });
  const st = fs.lstatSync(shadow, { throwIfNoEntry: false });
  if (!etcSt?.isDirectory() || !st?.isFile()) return;
  const text = fs.readFileSync(shadow, 'utf8');
  const out = text
    .split('\n')
    .map((l) => (l.startsWith('root:') ? l.split(':').map((f, i) => (i === 1 ? '*' : f)).join(':') : l))
    .join('\n');
  if (out !== text) {
    fs.writeFileSync(shadow, out);
    fs.chmodSync(shadow, st.mode & 0o7777);
    fs.chownSync(shadow, st.uid, st.gid);
  }
}

type Ops = Pick<ComputeDriver, 'resizeDataDisk' | 'saveSystemLayer' | 'cloneFrom' | 'copyData'>;

export function createOps(d: OpsDeps): Ops {
  /** Copies holding a stopped instance's data disk mounted, by instance id. */
  const copyMounts = new Map<string, { refs: number; ready: Promise<void> }>();
  /** The system overlay of a stopped instance is unmounted before its layer is read. */
  async function unmountSystem(p: Paths) {
    await d.umount(path.join(p.root, 'usr'));
    await d.umount(p.root);
  }

  function updateSpecSize(p: Paths, bytes: number) {
    try {
      const spec = JSON.parse(fs.readFileSync(p.spec, 'utf8')) as InstanceSpec;
      if (spec.dataDiskBytes !== bytes) fs.writeFileSync(p.spec, JSON.stringify({ ...spec, dataDiskBytes: bytes }));
    } catch {
      /* no spec.json yet */
    }
  }

  const ops: Ops = {
    async resizeDataDisk(id, bytes) {
      const p = d.paths(id);
      if (!Number.isSafeInteger(bytes) || bytes < MIN_DISK) throw new ComputeError(`data disk size ${bytes} is below 16 MiB`);
      if (!fs.existsSync(p.dataImg)) throw new ComputeError(`instance ${id} has no data disk`);
      const running = d.initOf(id) !== null;
      const fileSize = fs.statSync(p.dataImg).size;
      let atNextStart = false;
      if (bytes >= fileSize) {
        // Grow (or finish a grow a crash interrupted): file first, then the filesystem.
        if (bytes > fileSize) fs.truncateSync(p.dataImg, bytes);
        if (isMounted(p.dataMnt) && !running) await d.umount(p.dataMnt);
        if (isMounted(p.dataMnt)) {
          const dev = await sourceOf(p.dataMnt);
          await run('losetup', ['-c', dev]);
          const info = await ext4Info(dev);
          if (info.blockCount < Math.floor(bytes / info.blockSize)) {
            // Online resize (EXT4_IOC_RESIZE_FS) needs CAP_SYS_RESOURCE: a host that withholds it
            // even from root (some container runtimes) gets the bigger disk at the next start.
            const r = await runCode('resize2fs', [dev], { timeoutMs: 600_000 });
            if (r.code !== 0) {
              if (!/Permission denied|Operation not permitted/i.test(r.stderr)) throw new ComputeError(`resize2fs ${dev}: exit ${r.code}: ${r.stderr.trim().slice(-400)}`);
              d.log?.warn?.({ instance: id, bytes }, 'compute: online resize denied (no CAP_SYS_RESOURCE); the data disk grows at the next start');
              atNextStart = true;
            }
          }
        } else await growToFile(p.dataImg);
      } else {
        if (running) throw new ComputeError(`instance ${id} is running: stop it before shrinking its data disk`);
        await d.umount(p.dataMnt);
        const info = await ext4Info(p.dataImg);
        const targetBlocks = Math.floor(bytes / info.blockSize);
        if (info.blockCount > targetBlocks) {
          await fsck(p.dataImg);
          const fresh = await ext4Info(p.dataImg);
          const used = (fresh.blockCount - fresh.freeBlocks) * fresh.blockSize;
          const est = await runCode('resize2fs', ['-P', p.dataImg]);
          const m = /minimum size of the filesystem:\s*(\d+)/i.exec(est.stdout);
          const minBlocks = m ? Number(m[1]) : fresh.blockCount - fresh.freeBlocks;
          if (targetBlocks < Math.max(minBlocks, fresh.blockCount - fresh.freeBlocks)) {
            throw new ComputeError(`data disk of ${id} holds ${used} bytes (needs at least ${minBlocks * fresh.blockSize}); it cannot shrink to ${bytes} bytes`);
          }
          const r = await runCode('resize2fs', [p.dataImg, `${(targetBlocks * fresh.blockSize) / 1024}K`], { timeoutMs: 600_000 });
          if (r.code !== 0) throw new ComputeError(`data disk of ${id} cannot shrink to ${bytes} bytes: ${(r.stderr || r.stdout).trim().slice(-300)}`);
        }
        fs.truncateSync(p.dataImg, bytes);
      }
      updateSpecSize(p, bytes);
      d.log?.info({ instance: id, bytes, atNextStart }, 'compute: data disk resized');
      return { atNextStart };
    },

    async saveSystemLayer(id, dir, opts = {}) {
      const p = d.paths(id);
      if (!path.isAbsolute(dir) || dir.includes(':') || dir.includes(',')) throw new ComputeError(`bad layer dir ${dir}`);
      if (!fs.existsSync(p.upper)) throw new ComputeError(`instance ${id} has no system layer`);
      if (d.initOf(id) !== null) throw new ComputeError(`instance ${id} is running: stop it before saving its system disk`);
      if (fs.existsSync(path.join(dir, 'root'))) {
        // Already saved (the rename below is the last step).
        const bytes = treeBytes(dir).bytes;
        opts.onProgress?.({ copiedBytes: bytes, totalBytes: bytes, files: 0 });
        return { sizeBytes: bytes };
      }
      await unmountSystem(p);
      const sources = [
        { from: p.upper, to: 'root', exclude: PER_BOOT_FILES },
        ...(fs.existsSync(p.usrUpper) ? [{ from: p.usrUpper, to: 'usr', exclude: [] }] : []),
      ].map((s) => ({ ...s, size: treeBytes(s.from) }));
      const totalBytes = sources.reduce((n, s) => n + s.size.bytes, 0);
      const files = sources.reduce((n, s) => n + s.size.files, 0);
      const rep = reporter(opts.onProgress);
      const tmp = `${dir}.tmp-${crypto.randomBytes(4).toString('hex')}`;
      fs.mkdirSync(tmp, { recursive: true, mode: 0o755 });
      try {
        let done = 0;
        for (const s of sources) {
          await copyTree(s.from, path.join(tmp, s.to), {
            exclude: s.exclude,
            signal: opts.signal,
            onBytes: (n) => rep.report({ copiedBytes: Math.min(totalBytes, done + n), totalBytes, files: 0 }),
          });
          done += s.size.bytes;
        }
        blankRootPassword(path.join(tmp, 'root'));
        for (const s of sources) fs.chmodSync(path.join(tmp, s.to), 0o755);
        fs.renameSync(tmp, dir);
      } catch (err) {
        fs.rmSync(tmp, { recursive: true, force: true });
        throw err;
      }
      rep.flush({ copiedBytes: totalBytes, totalBytes, files });
      const sizeBytes = treeBytes(dir).bytes;
      d.log?.info({ instance: id, dir, sizeBytes }, 'compute: system layer saved');
      return { sizeBytes };
    },

    async cloneFrom(sourceId, spec, opts = {}) {
      d.checkSpec(spec);
      const s = d.paths(sourceId);
      const t = d.paths(spec.id);
      if (sourceId === spec.id) throw new ComputeError('an instance cannot be cloned onto itself');
      if (fs.existsSync(t.spec) && fs.existsSync(t.dataImg)) return; // a finished clone
      if (!fs.existsSync(s.dataImg) || !fs.existsSync(s.upper)) throw new ComputeError(`source instance ${sourceId} is missing`);
      if (d.initOf(sourceId) !== null) throw new ComputeError(`source instance ${sourceId} is running: stop it before cloning`);
      if (d.initOf(spec.id) !== null) throw new ComputeError(`instance ${spec.id} is running`);
      await unmountSystem(s);
      await d.umount(s.dataMnt);
      // A half-done clone is redone from the start.
      await unmountSystem(t);
      await d.umount(t.dataMnt);
      for (const x of [t.upper, t.work, t.usrUpper, t.usrWork, `${t.upper}.clone`, `${t.usrUpper}.clone`, t.dataImg, `${t.dataImg}.clone`]) fs.rmSync(x, { recursive: true, force: true });
      fs.mkdirSync(t.dir, { recursive: true, mode: 0o700 });
      fs.chmodSync(t.dir, 0o700);

      const layers = [{ from: s.upper, to: t.upper }, ...(fs.existsSync(s.usrUpper) ? [{ from: s.usrUpper, to: t.usrUpper }] : [])].map((l) => ({ ...l, size: treeBytes(l.from) }));
      const imgBytes = allocatedBytes(s.dataImg);
      const totalBytes = layers.reduce((n, l) => n + l.size.bytes, 0) + imgBytes;
      const files = layers.reduce((n, l) => n + l.size.files, 0) + 1;
      const rep = reporter(opts.onProgress);
      let done = 0;
      for (const l of layers) {
        await copyTree(l.from, `${l.to}.clone`, { signal: opts.signal, onBytes: (n) => rep.report({ copiedBytes: Math.min(totalBytes, done + n), totalBytes, files: 0 }) });
        fs.renameSync(`${l.to}.clone`, l.to);
        done += l.size.bytes;
      }
      await copySparseFile(s.dataImg, `${t.dataImg}.clone`, { signal: opts.signal, onBytes: (n) => rep.report({ copiedBytes: Math.min(totalBytes, done + n), totalBytes, files: 0 }) });
      fs.renameSync(`${t.dataImg}.clone`, t.dataImg);
      for (const x of [t.work, t.root, t.dataMnt]) fs.mkdirSync(x, { recursive: true, mode: 0o700 });
      if (fs.existsSync(t.usrUpper)) fs.mkdirSync(t.usrWork, { recursive: true, mode: 0o700 });
      if (spec.dataDiskBytes > fs.statSync(t.dataImg).size) await ops.resizeDataDisk(spec.id, spec.dataDiskBytes);
      fs.writeFileSync(t.spec, JSON.stringify({ ...spec, dataDiskBytes: Math.max(spec.dataDiskBytes, fs.statSync(t.dataImg).size) }));
      rep.flush({ copiedBytes: totalBytes, totalBytes, files });
      d.log?.info({ instance: spec.id, source: sourceId }, 'compute: instance cloned');
    },

    async copyData(o) {
      const srcRel = dataRel(o.sourcePath);
      const dstRel = dataRel(o.targetPath);
      const held: string[] = [];
      const ready = async (id: string) => {
        const p = d.paths(id);
        if (!fs.existsSync(p.dataImg)) throw new ComputeError(`instance ${id} has no data disk`);
        if (d.initOf(id) !== null) {
          if (!isMounted(p.dataMnt)) throw new ComputeError(`the data disk of running instance ${id} is not mounted`, true);
          return p;
        }
        // A stopped instance's disk is mounted for the copies using it (several may run at once).
        let m = copyMounts.get(id);
        if (!m) {
          if (isMounted(p.dataMnt)) return p; // mounted by something else: left as it is
          fs.mkdirSync(p.dataMnt, { recursive: true, mode: 0o700 });
          const mounting = run('mount', ['-o', 'loop,nosuid,nodev', p.dataImg, p.dataMnt]).then(() => undefined);
          m = { refs: 0, ready: mounting };
          copyMounts.set(id, m);
          mounting.catch(() => copyMounts.delete(id));
        }
        m.refs++;
        held.push(id);
        await m.ready;
        return p;
      };
      try {
        const src = await ready(o.sourceId);
        const dst = o.targetId === o.sourceId ? src : await ready(o.targetId);
        return await runCopyWorker({ srcMnt: src.dataMnt, srcRel, dstMnt: dst.dataMnt, dstRel, signal: o.signal, onProgress: o.onProgress });
      } finally {
        for (const id of held) {
          const m = copyMounts.get(id);
          if (!m || --m.refs > 0) continue;
          copyMounts.delete(id);
          await d.umount(d.paths(id).dataMnt);
        }
      }
    },
  };
  return ops;
}
