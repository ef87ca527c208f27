import fs from 'node:fs';
import path from 'node:path';

/** Mount points of this process's mount namespace (/proc/self/mountinfo, octal escapes decoded). */
export function mountPoints(): Set<string> {
  const text = fs.readFileSync('/proc/self/mountinfo', 'utf8');
  const out = new Set<string>();
  for (const line of text.split('\n')) {
    const mp = line.split(' ')[4];
    if (mp) out.add(mp.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))));
  }
  return out;
}

export function isMounted(p: string): boolean {
  return mountPoints().has(path.resolve(p));
}

/**
 * Makes `rel` (a relative path such as "etc/hostname") a real directory chain under `root` without
 * following symlinks: the instance controls its own layer, and a symlink planted there (say /etc ->
 * /) must never make the server write outside the instance. Anything in the way that is not a real
 * directory is removed.
 */
function realDirUnder(root: string, relDir: string): string {
  let cur = root;
  for (const part of relDir.split('/').filter(Boolean)) {
    if (part === '..' || part === '.') throw new Error(`bad path ${relDir}`);
    cur = path.join(cur, part);
    const st = fs.lstatSync(cur, { throwIfNoEntry: false });
    if (st && !st.isDirectory()) fs.rmSync(cur, { force: true, recursive: true });
    if (!st || !st.isDirectory()) fs.mkdirSync(cur, { mode: 0o755 });
  }
  return cur;
}

/** Writes a file under an instance's root, never through a symlink (see realDirUnder). */
export function safeWrite(root: string, rel: string, content: string, mode = 0o644, dirMode?: number): void {
  const dir = realDirUnder(root, path.dirname(rel));
  if (dirMode !== undefined) fs.chmodSync(dir, dirMode);
  const file = path.join(dir, path.basename(rel));
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (st && !st.isFile()) fs.rmSync(file, { force: true, recursive: true });
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, mode);
  try {
    fs.writeSync(fd, content);
    fs.fchmodSync(fd, mode);
    fs.fchownSync(fd, 0, 0);
  } finally {
    fs.closeSync(fd);
  }
}

/** Reads a regular file under an instance's root (never through a symlink); null if absent or not regular. */
export function safeRead(root: string, rel: string): string | null {
  let cur = root;
  const parts = rel.split('/').filter(Boolean);
  for (const [i, part] of parts.entries()) {
    cur = path.join(cur, part);
    const st = fs.lstatSync(cur, { throwIfNoEntry: false });
    if (!st) return null;
    if (i < parts.length - 1 ? !st.isDirectory() : !st.isFile()) return null;
  }
  return fs.readFileSync(cur, 'utf8');
}

export function readPid(file: string): number | null {
  try {
    const n = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isInteger(n) && n > 1 ? n : null;
  } catch {
    return null;
  }
}

/** A live (not zombie) process. */
export function processAlive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

export function sleep(ms: number) {
  return new Promise((r) => setTimeout(r, ms));
}
