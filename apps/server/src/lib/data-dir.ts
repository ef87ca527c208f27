import fs from 'node:fs';
import path from 'node:path';

/** Owner-only modes for everything in the data dir: the database, keys and uploaded files are nobody else's business. */
export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

/**
 * Trees of the data dir whose contents keep their own modes: root filesystems of images and the
 * disks of instances (an instance's /etc/passwd must stay 0644, its /tmp 1777). Their top
 * directories are still made 0700, so nobody else on the host can reach inside.
 */
export const OWN_MODE_TREES = ['images', 'instances'] as const;

/**
 * chmod `root` and everything below it to owner-only (directories 0700, files 0600). Symbolic
 * links are left alone (chmod would follow them out of the tree); entries that vanish meanwhile
 * are skipped; other filesystems mounted below (an instance's disks) and the `keepModesOf`
 * top-level trees are not entered. Iterative, so a deep tree can't overflow the stack.
 */
export function restrictToOwner(root: string, keepModesOf: readonly string[] = []): void {
  const rootDev = fs.lstatSync(root).dev;
  const kept = new Set(keepModesOf.map((name) => path.join(root, name)));
  const stack = [root];
  while (stack.length) {
    const p = stack.pop() as string;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    if (st.isSymbolicLink()) continue;
    if (st.dev !== rootDev) continue;
    const mode = st.isDirectory() ? DIR_MODE : FILE_MODE;
    if ((st.mode & 0o777) !== mode) fs.chmodSync(p, mode);
    if (kept.has(p)) continue;
    if (st.isDirectory()) for (const name of fs.readdirSync(p)) stack.push(path.join(p, name));
  }
}

/**
 * At start: files the process creates from now on are owner-only (umask 077), and what an earlier
 * version or another tool left in the data dir is made so. `create` makes the dir when it is
 * missing (the embedded database needs it); otherwise a missing dir is left missing (with PostgreSQL
 * and no DATA_DIR, keys stay in memory by design).
 */
export function secureDataDir(dir: string, opts: { create: boolean }): void {
  process.umask(0o077);
  if (opts.create) fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  if (fs.existsSync(dir)) restrictToOwner(dir, OWN_MODE_TREES);
}
