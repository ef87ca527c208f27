import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/**
 * What the `local` compute driver needs from the host: each command and the Debian/Ubuntu package
 * that provides it. Checked (and installed when we can) once at start-up, never at request time.
 */
export const HOST_DEPS: { command: string; pkg: string; why: string }[] = [
  { command: 'bwrap', pkg: 'bubblewrap', why: 'the instance sandbox' },
  { command: 'slirp4netns', pkg: 'slirp4netns', why: "instances' user-mode network" },
  { command: 'mkfs.ext4', pkg: 'e2fsprogs', why: 'data disks' },
  { command: 'iptables', pkg: 'iptables', why: "keeps instances off the host's own addresses" },
  { command: 'nsenter', pkg: 'util-linux', why: 'shells and commands join an instance' },
  { command: 'setpriv', pkg: 'util-linux', why: 'capabilities dropped inside' },
  { command: 'losetup', pkg: 'mount', why: 'loop-mounted data disks' },
  { command: 'ip', pkg: 'iproute2', why: 'network tools inside host-based images' },
  { command: '/usr/lib/openssh/sftp-server', pkg: 'openssh-sftp-server', why: 'sftp inside host-based images' },
];

function hasCommand(cmd: string): boolean {
  if (cmd.startsWith('/')) return fs.existsSync(cmd);
  const dirs = (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/sbin', '/usr/bin', '/bin']);
  return dirs.some((d) => d && fs.existsSync(`${d}/${cmd}`));
}

/** Packages whose commands are missing on this host. */
export function missingHostPackages(): string[] {
  return [...new Set(HOST_DEPS.filter((d) => !hasCommand(d.command)).map((d) => d.pkg))];
}

export function installCommand(pkgs: string[]): string {
  return `sudo apt-get install -y --no-install-recommends ${pkgs.join(' ')}`;
}

type Log = { info: (o: object, m?: string) => void; warn: (o: object, m?: string) => void };

/**
 * Start-up: as root on Debian/Ubuntu (apt-get present), installs whatever is missing and says so;
 * otherwise logs the one command to run. Returns what is still missing afterwards (empty: all there).
 */
export async function ensureHostDeps(log: Log, opts: { install?: boolean } = {}): Promise<string[]> {
  const missing = missingHostPackages();
  if (!missing.length) return [];
  const canInstall = (opts.install ?? true) && process.getuid?.() === 0 && hasCommand('apt-get');
  if (!canInstall) {
    log.warn({ missing }, `compute: instances can't start until these packages are installed. Run: ${installCommand(missing)}`);
    return missing;
  }
  log.info({ packages: missing }, `compute: installing what the local driver needs: apt-get install ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    await exec('apt-get', ['update', '-qq'], { env, timeout: 300_000 });
    await exec('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { env, timeout: 600_000, maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    log.warn({ err: err instanceof Error ? err.message.slice(0, 2000) : String(err) }, `compute: installing ${missing.join(' ')} failed; run: ${installCommand(missing)}`);
  }
  const still = missingHostPackages();
  if (still.length) log.warn({ missing: still }, `compute: still missing; run: ${installCommand(still)}`);
  else log.info({ packages: missing }, 'compute: installed');
  return still;
}
