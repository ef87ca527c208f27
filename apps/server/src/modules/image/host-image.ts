import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { HOST_USR_DIR } from '../../adapters/compute/local.ts';

export const HOST_IMAGE_SLUG = 'host-base';

/**
 * Files of the host's /etc an instance may see: how programs in /usr find their libraries, the
 * alternatives symlinks /usr/bin points through, shell start-up files, public CA certificates, the
 * apt/dpkg configuration. Never the host's shadow, ssh keys, /etc/ssl/private or anything of the
 * server's own: those are written fresh below.
 */
const ETC_COPIES = [
  'alternatives',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'nsswitch.conf',
  'bash.bashrc',
  'inputrc',
  'shells',
  'login.defs',
  'debian_version',
  'terminfo',
  'mime.types',
  'ca-certificates.conf',
  'ssl/certs',
  'ssl/openssl.cnf',
  'localtime',
  'timezone',
  'apt/sources.list',
  'apt/sources.list.d',
  'apt/trusted.gpg.d',
  'apt/apt.conf.d',
  'apt/preferences.d',
  'dpkg',
  'python3',
  'python3.11',
  'pip.conf',
  'gai.conf',
  'host.conf',
  'protocols',
  'services',
  'networks',
  'magic',
  'vim',
  'skel',
  'lsb-release',
  'environment',
];

const PROFILE = `# /etc/profile (Suanli host-based image)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
if [ "\${PS1-}" ] && [ -n "\${BASH-}" ] && [ "$BASH" != /bin/sh ]; then
  [ -f /etc/bash.bashrc ] && . /etc/bash.bashrc
  PS1='\\u@\\h:\\w\\$ '
fi
if [ -d /etc/profile.d ]; then
  for i in /etc/profile.d/*.sh; do [ -r "$i" ] && . "$i"; done
  unset i
fi
`;

const BASHRC_ROOT = `# ~/.bashrc
[ -z "$PS1" ] && return
PS1='\\u@\\h:\\w\\$ '
alias ls='ls --color=auto'
alias ll='ls -l'
`;

function copyInto(src: string, dest: string) {
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  fs.cpSync(src, dest, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true, force: true });
}

function firstLine(cmd: string, args: string[]): string | null {
  try {
    const out = execFileSync(cmd, args, { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: '/usr/bin:/bin:/usr/sbin:/sbin' } });
    return out.split('\n')[0]?.trim() || null;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return (e.stdout || e.stderr || '').split('\n')[0]?.trim() || null;
  }
}

/** What the host's /usr honestly provides: "bash 5.2.15", "Python 3.11.2", "coreutils 9.1" … */
export function detectHostContents(): string[] {
  const out: string[] = [];
  const probes: [string, string[], RegExp, (m: RegExpExecArray) => string][] = [
    ['/usr/bin/bash', ['--version'], /version (\d+\.\d+\.\d+)/, (m) => `bash ${m[1]}`],
    ['/usr/bin/python3', ['--version'], /Python (\d+\.\d+\.\d+)/, (m) => `Python ${m[1]}`],
    ['/usr/bin/pip3', ['--version'], /pip (\d+\.\d+(\.\d+)?)/, (m) => `pip ${m[1]}`],
    ['/usr/bin/ls', ['--version'], /coreutils\)? (\d+\.\d+)/, (m) => `coreutils ${m[1]}`],
    ['/usr/bin/git', ['--version'], /git version (\d+\.\d+\.\d+)/, (m) => `git ${m[1]}`],
    ['/usr/bin/gcc', ['--version'], /\) (\d+\.\d+\.\d+)/, (m) => `gcc ${m[1]}`],
    ['/usr/bin/curl', ['--version'], /curl (\d+\.\d+\.\d+)/, (m) => `curl ${m[1]}`],
    ['/usr/bin/vim.basic', ['--version'], /Vi IMproved (\d+\.\d+)/, (m) => `vim ${m[1]}`],
    ['/usr/bin/ps', ['--version'], /procps-ng (\d+\.\d+\.\d+)/, (m) => `procps ${m[1]}`],
  ];
  for (const [bin, args, re, fmt] of probes) {
    if (!fs.existsSync(bin)) continue;
    const line = firstLine(bin, args);
    const m = line ? re.exec(line) : null;
    if (m) out.push(fmt(m));
  }
  return out;
}

export function hostOsName(): string {
  try {
    const text = fs.readFileSync('/etc/os-release', 'utf8');
    return /^PRETTY_NAME="?([^"\n]+)"?/m.exec(text)?.[1] ?? 'Linux';
  } catch {
    return 'Linux';
  }
}

/** System accounts of the host (uid < 1000 and nobody): the owners of files in /usr. */
function systemAccounts(file: string, idField: number): string[] {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => {
        const id = Number(l.split(':')[idField]);
        return l && Number.isInteger(id) && (id < 1000 || id === 65534);
      });
  } catch {
    return [];
  }
}

/**
 * Builds the host-based image at <dir>: <dir>/rootfs is a skeleton root (its own /etc, /root, /tmp,
 * /var, merged-/usr symlinks, an empty /usr mount point) and <dir>/host-usr marks that its /usr is
 * the host's, overlaid read-only per instance with the host's /usr/local hidden. Nothing else of the
 * host's / is copied or bound. Idempotent: builds into <dir>/rootfs.tmp, then renames.
 */
export function buildHostImage(dir: string): { rootPath: string; contents: string[]; os: string; sizeBytes: number } {
  const rootfs = path.join(dir, 'rootfs');
  const tmp = path.join(dir, 'rootfs.tmp');
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true, mode: 0o755 });
  for (const d of ['usr', 'etc', 'etc/profile.d', 'var/lib', 'var/log', 'var/cache', 'var/mail', 'var/spool', 'var/backups', 'home', 'proc', 'sys', 'dev', 'run', 'mnt', 'media', 'opt', 'srv', 'root/data', 'root/.ssh']) {
    fs.mkdirSync(path.join(tmp, d), { recursive: true, mode: 0o755 });
  }
  fs.mkdirSync(path.join(tmp, 'tmp'), { mode: 0o1777 });
  fs.chmodSync(path.join(tmp, 'tmp'), 0o1777);
  fs.mkdirSync(path.join(tmp, 'var/tmp'), { mode: 0o1777 });
  fs.chmodSync(path.join(tmp, 'var/tmp'), 0o1777);
  fs.chmodSync(path.join(tmp, 'root'), 0o700);
  fs.chmodSync(path.join(tmp, 'root/.ssh'), 0o700);
  for (const l of ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']) {
    if (fs.existsSync(`/usr/${l}`)) fs.symlinkSync(`usr/${l}`, path.join(tmp, l));
  }
  fs.symlinkSync('/run', path.join(tmp, 'var/run'));
  for (const rel of ETC_COPIES) if (fs.existsSync(`/etc/${rel}`)) copyInto(`/etc/${rel}`, path.join(tmp, 'etc', rel));
  if (fs.existsSync('/var/lib/dpkg')) copyInto('/var/lib/dpkg', path.join(tmp, 'var/lib/dpkg'));
  fs.symlinkSync('../usr/lib/os-release', path.join(tmp, 'etc/os-release'));

  const passwd = systemAccounts('/etc/passwd', 2);
  const group = systemAccounts('/etc/group', 2);
  const users = passwd.map((l) => l.split(':')[0]);
  fs.writeFileSync(path.join(tmp, 'etc/passwd'), passwd.map((l) => (l.startsWith('root:') ? 'root:x:0:0:root:/root:/bin/bash' : l)).join('\n') + '\n');
  fs.writeFileSync(path.join(tmp, 'etc/group'), group.join('\n') + '\n');
  fs.writeFileSync(path.join(tmp, 'etc/shadow'), users.map((u) => `${u}:*:19000:0:99999:7:::`).join('\n') + '\n', { mode: 0o640 });
  fs.writeFileSync(path.join(tmp, 'etc/gshadow'), group.map((l) => `${l.split(':')[0]}:*::`).join('\n') + '\n', { mode: 0o640 });
  fs.writeFileSync(path.join(tmp, 'etc/hostname'), 'localhost\n');
  fs.writeFileSync(path.join(tmp, 'etc/hosts'), '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n');
  fs.writeFileSync(path.join(tmp, 'etc/resolv.conf'), 'nameserver 10.0.2.3\n');
  fs.writeFileSync(path.join(tmp, 'etc/motd'), '');
  fs.writeFileSync(path.join(tmp, 'etc/profile'), PROFILE);
  fs.writeFileSync(path.join(tmp, 'etc/fstab'), '');
  fs.writeFileSync(path.join(tmp, 'etc/machine-id'), '');
  fs.writeFileSync(path.join(tmp, 'root/.bashrc'), BASHRC_ROOT);
  fs.writeFileSync(path.join(tmp, 'root/.profile'), '[ -f ~/.bashrc ] && . ~/.bashrc\n');

  // host-usr: top (an empty /usr/local) over wh (a whiteout hiding the host's /usr/local) over /usr.
  const usr = path.join(dir, `${HOST_USR_DIR}.tmp`);
  fs.rmSync(usr, { recursive: true, force: true });
  for (const d of ['bin', 'sbin', 'lib', 'include', 'share', 'src', 'etc', 'games']) fs.mkdirSync(path.join(usr, 'top/local', d), { recursive: true });
  fs.mkdirSync(path.join(usr, 'wh'), { recursive: true });
  // A whiteout is a 0:0 character device: making one needs root (CAP_MKNOD), as running instances does.
  execFileSync('mknod', [path.join(usr, 'wh/local'), 'c', '0', '0']);

  for (const [from, to] of [
    [tmp, rootfs],
    [usr, path.join(dir, HOST_USR_DIR)],
  ] as const) {
    fs.rmSync(to, { recursive: true, force: true });
    fs.renameSync(from, to);
  }
  // Its own files only: /usr is the host's, shared, not copied.
  const sizeBytes = Number(execFileSync('du', ['-sb', rootfs], { encoding: 'utf8' }).split('\t')[0]) || 0;
  return { rootPath: rootfs, contents: detectHostContents(), os: hostOsName(), sizeBytes };
}
