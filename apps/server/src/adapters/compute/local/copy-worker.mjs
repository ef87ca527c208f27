// The data-copy worker of the local compute driver (copy-data.ts runs it). It runs inside a
// bubblewrap sandbox that sees only /usr (read-only), the source data disk at /src (read-only) and
// the target data disk at /dst: whatever symlinks the instances plant, and however they swap
// directories during the copy, nothing outside the two disks can be read or written.
//
// argv: <source path under /src> <target directory under /dst>
// stdout: one JSON object per line — {t:'total',totalBytes,files}, {t:'p',copiedBytes,files},
// {t:'done',copiedBytes,totalBytes,files} or {t:'err',code,message}.
// A source directory's contents are merged into the target directory; a source file lands in it
// under its own name. Files already at the target with the same size and mtime are skipped.
import fs from 'node:fs';
import path from 'node:path';

const [src, dstDir] = process.argv.slice(2);
const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const CHUNK = 1 << 20;
const ZERO = Buffer.alloc(CHUNK);
/** Files copied at once (libuv's default thread pool has 4 threads). */
const CONCURRENCY = 1;
/** Files below this size are copied synchronously (no thread-pool round trip). */
const SMALL = 4 << 20;

/** lstat every component under `root`; a symlink or a non-directory on the way is refused. */
function checkChain(root, full, mustExist) {
  const parts = path.relative(root, full).split('/').filter(Boolean);
  let cur = root;
  for (const [i, part] of parts.entries()) {
    cur = path.join(cur, part);
    const st = fs.lstatSync(cur, { throwIfNoEntry: false });
    if (!st) {
      if (mustExist) throw Object.assign(new Error(`${path.relative(root, cur)} does not exist`), { code: 'ENOENT' });
      return;
    }
    if (st.isSymbolicLink()) throw Object.assign(new Error(`${path.relative(root, cur)} is a symbolic link`), { code: 'SYMLINK' });
    if (i < parts.length - 1 && !st.isDirectory()) throw Object.assign(new Error(`${path.relative(root, cur)} is not a directory`), { code: 'ENOTDIR' });
  }
}

/** [relative path, lstat] of every entry, parents before children. */
function walk(top) {
  const out = [];
  const st = fs.lstatSync(top);
  if (!st.isDirectory()) return [[path.basename(top), st]];
  const visit = (rel) => {
    for (const name of fs.readdirSync(path.join(top, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const s = fs.lstatSync(path.join(top, r), { throwIfNoEntry: false });
      if (!s) continue;
      out.push([r, s]);
      if (s.isDirectory()) visit(r);
    }
  };
  visit('');
  return out;
}

/** Makes `dir` a real directory (whatever non-directory is in the way goes). */
function ensureDir(dir, mode) {
  const st = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (st && st.isDirectory()) return;
  if (st) fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { mode });
}

async function main() {
  checkChain('/src', src, true);
  checkChain('/dst', dstDir, false);
  const srcIsDir = fs.lstatSync(src).isDirectory();
  const entries = walk(src);
  const base = srcIsDir ? src : path.dirname(src);
  let totalBytes = 0;
  let fileCount = 0;
  for (const [, s] of entries) {
    if (!s.isFile()) continue;
    totalBytes += s.size;
    fileCount++;
  }
  say({ t: 'total', totalBytes, files: fileCount });

  // the target directory chain, made without following anything
  let cur = '/dst';
  for (const part of path.relative('/dst', dstDir).split('/').filter(Boolean)) {
    cur = path.join(cur, part);
    ensureDir(cur, 0o755);
  }
  let copiedBytes = 0;
  let files = 0;
  /** Parts being written now (dense files the kernel copies): their sizes count as progress. */
  const inflight = new Map();
  const report = () => {
    let n = copiedBytes;
    for (const [part, max] of inflight) n += Math.min(max, fs.lstatSync(part, { throwIfNoEntry: false })?.size ?? 0);
    say({ t: 'p', copiedBytes: n, files });
  };
  const timer = setInterval(report, 200);

  // 1: directories and symlinks, parents first
  const dirs = [];
  const queue = [];
  for (const [rel, s] of entries) {
    const from = path.join(base, rel);
    const to = path.join(dstDir, rel);
    if (s.isDirectory()) {
      ensureDir(to, 0o700);
      dirs.push([to, s]);
    } else if (s.isSymbolicLink()) {
      const link = fs.readlinkSync(from);
      const t = fs.lstatSync(to, { throwIfNoEntry: false });
      if (!(t && t.isSymbolicLink() && fs.readlinkSync(to) === link)) {
        if (t) fs.rmSync(to, { recursive: true, force: true });
        fs.symlinkSync(link, to);
      }
      try {
        fs.lchownSync(to, s.uid, s.gid);
        fs.lutimesSync(to, s.atimeMs / 1000, s.mtimeMs / 1000);
      } catch {
        /* best effort */
      }
    } else if (s.isFile()) queue.push([from, to, s]);
    // devices, fifos and sockets are not copied
  }

  // 2: files, a few at once (the kernel copies dense ones; sparse ones keep their holes)
  const copyOne = async ([from, to, s]) => {
    const t = fs.lstatSync(to, { throwIfNoEntry: false });
    if (t && t.isFile() && t.size === s.size && Math.abs(t.mtimeMs - s.mtimeMs) < 1) {
      copiedBytes += s.size;
      files++;
      return;
    }
    // Written in place: a file cut short by a crash or an abort differs in size or mtime (set
    // last) from its source, so the next run copies it again. Inside this sandbox a symlink
    // planted at the target can only lead back into the target disk; it is replaced all the same.
    if (t && !t.isFile()) fs.rmSync(to, { recursive: true, force: true });
    if (s.blocks * 512 >= s.size) {
      if (s.size < SMALL) fs.copyFileSync(from, to);
      else {
        inflight.set(to, s.size);
        try {
          await fs.promises.copyFile(from, to);
        } finally {
          inflight.delete(to);
        }
      }
      copiedBytes += s.size;
    } else {
      const fd = fs.openSync(from, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
      const out = fs.openSync(to, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, 0o600);
      try {
        const buf = Buffer.allocUnsafe(CHUNK);
        let pos = 0;
        for (;;) {
          const n = fs.readSync(fd, buf, 0, buf.length, pos);
          if (n === 0) break;
          if (!(n === CHUNK && buf.equals(ZERO))) {
            let w = 0;
            while (w < n) w += fs.writeSync(out, buf, w, n - w, pos + w);
          }
          pos += n;
          copiedBytes += n;
        }
        fs.ftruncateSync(out, pos);
      } finally {
        fs.closeSync(fd);
        fs.closeSync(out);
      }
    }
    fs.chownSync(to, s.uid, s.gid);
    fs.chmodSync(to, s.mode & 0o7777);
    fs.utimesSync(to, s.atimeMs / 1000, s.mtimeMs / 1000);
    files++;
  };
  let next = 0;
  const lane = async () => {
    while (next < queue.length) await copyOne(queue[next++]);
  };
  try {
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, lane));
  } finally {
    clearInterval(timer);
  }
  report();

  // directories last, deepest first: their modes and mtimes as the source's
  for (const [to, s] of dirs.reverse()) {
    try {
      fs.chownSync(to, s.uid, s.gid);
      fs.chmodSync(to, s.mode & 0o7777);
      fs.utimesSync(to, s.atimeMs / 1000, s.mtimeMs / 1000);
    } catch {
      /* best effort */
    }
  }
  say({ t: 'done', copiedBytes, totalBytes: Math.max(totalBytes, copiedBytes), files });
}

main().catch((err) => {
  say({ t: 'err', code: err?.code ?? 'EIO', message: String(err?.message ?? err) });
  process.exitCode = 1;
});
