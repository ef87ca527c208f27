import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import type { ImageRecipe } from '@suanli/contract/machine';

const execFileP = promisify(execFile);

/**
 * Debian-based images the operator builds with mmdebstrap: a minbase Debian 12 plus what a
 * rented machine needs (a shell, Python, the sftp server so scp/sftp work, network tools).
 */
const BASE_PACKAGES = ['bash', 'ca-certificates', 'procps', 'iproute2', 'iputils-ping', 'curl', 'less', 'vim-tiny', 'openssh-sftp-server', 'python3', 'python3-pip', 'python3-venv'];

export type Recipe = { name: string; description: string; suite: string; packages: string[] };

export const RECIPES: Record<ImageRecipe, Recipe> = {
  'debian12-python': {
    name: 'Debian 12 + Python 3.11',
    description: 'Debian 12 (bookworm) 最小系统，含 Python 3.11、pip、venv、curl、vim、procps、iproute2',
    suite: 'bookworm',
    packages: BASE_PACKAGES,
  },
  'pytorch-cpu': {
    name: 'PyTorch 1.13 CPU (Debian 12)',
    description: 'Debian 12 + Python 3.11 + PyTorch 1.13（Debian 的 python3-torch，仅 CPU 版，不含 CUDA）、NumPy',
    suite: 'bookworm',
    packages: [...BASE_PACKAGES, 'python3-torch', 'python3-numpy'],
  },
};

/** mmdebstrap's "I: …" stage lines mapped to progress (0–90; the rest is our own finishing). */
const STAGES: [RegExp, number][] = [
  [/running apt-get update/i, 10],
  [/downloading packages/i, 25],
  [/extracting archives/i, 45],
  [/installing (essential )?packages/i, 60],
  [/installing remaining packages/i, 70],
  [/cleaning package lists/i, 85],
  [/success in/i, 90],
];

export function progressOfLine(line: string, current: number): number {
  for (const [re, p] of STAGES) if (re.test(line) && p > current) return p;
  return current;
}

export type BuildOptions = {
  recipe: ImageRecipe;
  /** $DATA_DIR/images/<slug>: the root filesystem goes to <dir>/rootfs. */
  dir: string;
  onProgress: (progress: number) => Promise<void> | void;
  signal?: AbortSignal;
  /** The mmdebstrap executable (tests pass a stand-in with the same command line). */
  command?: string;
  mirror?: string;
};

async function version(rootfs: string, pkg: string): Promise<string | null> {
  try {
    const { stdout } = await execFileP('dpkg-query', ['--admindir', path.join(rootfs, 'var/lib/dpkg'), '-W', '-f', '${Version}', pkg], { timeout: 10_000 });
    return stdout.trim() || null;
  } catch {
    return null;
  }
}

/** Upstream part of a Debian version: "1.13.1+dfsg-4" -> "1.13.1", "3.11.2-1+b1" -> "3.11.2". */
const upstream = (v: string) => v.replace(/^\d+:/, '').replace(/[-+~].*$/, '');

/** What a built root filesystem honestly contains, read from its own dpkg database. */
export async function detectContents(rootfs: string): Promise<string[]> {
  const out: string[] = [];
  const probes: [string, string][] = [
    ['bash', 'bash'],
    ['python3.11', 'Python'],
    ['python3-pip', 'pip'],
    ['coreutils', 'coreutils'],
    ['python3-torch', 'PyTorch'],
    ['python3-numpy', 'NumPy'],
    ['curl', 'curl'],
    ['openssh-sftp-server', 'sftp-server'],
  ];
  for (const [pkg, label] of probes) {
    const v = await version(rootfs, pkg);
    if (v) out.push(pkg === 'python3-torch' ? `${label} ${upstream(v)} (CPU)` : `${label} ${upstream(v)}`);
  }
  return out;
}

export function osOf(rootfs: string): string {
  try {
    const text = fs.readFileSync(path.join(rootfs, 'usr/lib/os-release'), 'utf8');
    return /^PRETTY_NAME="?([^"\n]+)"?/m.exec(text)?.[1] ?? 'Debian';
  } catch {
    return 'Debian';
  }
}

/**
 * Builds a recipe into <dir>/rootfs with mmdebstrap (into <dir>/rootfs.build first, renamed when
 * complete), reporting progress from its stage lines. Throws with mmdebstrap's last lines on failure.
 */
export async function buildDebianImage(opts: BuildOptions): Promise<{ rootPath: string; contents: string[]; os: string; sizeBytes: number }> {
  const recipe = RECIPES[opts.recipe];
  const build = path.join(opts.dir, 'rootfs.build');
  const rootfs = path.join(opts.dir, 'rootfs');
  fs.mkdirSync(opts.dir, { recursive: true, mode: 0o755 });
  fs.rmSync(build, { recursive: true, force: true });
  const mirror = opts.mirror ?? process.env.DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
  const args = ['--variant=minbase', '--mode=root', '--format=directory', `--include=${recipe.packages.join(',')}`, recipe.suite, build, mirror];
  let progress = 0;
  await opts.onProgress(1);
  const tail: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const child = spawn(opts.command ?? 'mmdebstrap', args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    const onAbort = () => child.kill('SIGTERM');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const onLine = (line: string) => {
      tail.push(line);
      if (tail.length > 20) tail.shift();
      const next = progressOfLine(line, progress);
      if (next !== progress) {
        progress = next;
        void Promise.resolve(opts.onProgress(progress)).catch(() => {});
      }
    };
    createInterface({ input: child.stdout }).on('line', onLine);
    createInterface({ input: child.stderr }).on('line', onLine);
    child.on('error', (err) => reject(new Error(`mmdebstrap could not start: ${err.message}`)));
    child.on('close', (code, signal) => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (code === 0) resolve();
      else reject(new Error(`mmdebstrap failed (${signal ?? `exit ${code}`}): ${tail.slice(-5).join(' | ')}`));
    });
  });
  // Instance-facing defaults; the driver writes hostname, hosts, resolv.conf and motd per boot.
  fs.mkdirSync(path.join(build, 'root/data'), { recursive: true });
  fs.writeFileSync(path.join(build, 'etc/motd'), '');
  await opts.onProgress(95);
  const contents = await detectContents(build);
  const os = osOf(build);
  fs.rmSync(rootfs, { recursive: true, force: true });
  fs.renameSync(build, rootfs);
  const { stdout } = await execFileP('du', ['-sb', rootfs]);
  return { rootPath: rootfs, contents, os, sizeBytes: Number(stdout.split('\t')[0]) || 0 };
}
