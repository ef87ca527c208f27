import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ComputeError, type ComputeDriver, type InstanceSpec, type InstanceUsage } from '../port.ts';
import { installCommand, missingHostPackages } from '../../../lib/host-deps.ts';
import { cgroupPids, cgroupUsage, missingControllers, procsFiles, removeCgroups, setupCgroups } from './cgroups.ts';
import { isMounted, processAlive, readPid, safeRead, safeWrite, sleep } from './fsutil.ts';
import { INSTANCE_CAPS, startExec, startTerminal } from './sessions.ts';
import { run, runCode } from './sh.ts';
import { createOps, growToFile } from './ops.ts';
import { ext4Info } from './disk-ops.ts';

type Log = { info: (o: object, m?: string) => void; warn: (o: object, m?: string) => void };

export type LocalDriverOptions = { dataDir: string; log?: Log };

/**
 * Beside an image's root filesystem (<image>/rootfs), an optional <image>/host-usr/{top,wh} says
 * "this image's /usr is the host's": the driver then mounts a second overlay on the instance's /usr
 * with lower = top : wh : /usr (wh holds a whiteout hiding the host's /usr/local, top an empty one).
 */
export const HOST_USR_DIR = 'host-usr';

/**
 * slirp4netns runs with this group id, so a firewall rule can tell its sockets from everyone's:
 * it NATs the instance's traffic from the host itself, and without the rule an instance would
 * reach every service bound to one of the host's own addresses (a server on 0.0.0.0).
 */
export const SLIRP_GID = 43210;
const FENCE_RULE = ['OUTPUT', '-m', 'owner', '--gid-owner', String(SLIRP_GID), '-m', 'addrtype', '--dst-type', 'LOCAL', '-j', 'REJECT'];
/** DNS the host resolves through may sit on a local address (127.0.0.53): slirp's 10.0.2.3 forwards there. */
const DNS_RULES = ['udp', 'tcp'].map((proto) => ['OUTPUT', '-m', 'owner', '--gid-owner', String(SLIRP_GID), '-m', 'addrtype', '--dst-type', 'LOCAL', '-p', proto, '--dport', '53', '-j', 'ACCEPT']);

/** Installs (once, idempotently) the rules that keep instances off every address of the host. */
export async function ensureHostFence(): Promise<void> {
  for (const cmd of ['iptables', 'ip6tables']) {
    const apply = async (rule: string[]) => {
      if ((await runCode(cmd, ['-w', '-C', ...rule])).code === 0) return;
      await run(cmd, ['-w', '-I', ...rule.slice(0, 1), '1', ...rule.slice(1)]);
    };
    try {
      await apply(FENCE_RULE);
      for (const r of DNS_RULES) await apply(r);
    } catch (err) {
      // IPv6 may be absent on the host; IPv4 must work.
      if (cmd === 'iptables') throw err;
    }
  }
}

const ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const SAFE_PATH = /^[A-Za-z0-9/_.+-]+$/;

export function createLocalDriver(opts: LocalDriverOptions): ComputeDriver {
  const log = opts.log;
  const base = path.resolve(opts.dataDir, 'instances');
  let fenced: Promise<void> | null = null;

  function paths(id: string) {
    if (!ID.test(id)) throw new ComputeError(`bad instance id ${JSON.stringify(id)}`);
    const dir = path.join(base, id);
    return {
      dir,
      upper: path.join(dir, 'upper'),
      work: path.join(dir, 'work'),
      usrUpper: path.join(dir, 'usr-upper'),
      usrWork: path.join(dir, 'usr-work'),
      root: path.join(dir, 'root'),
      dataImg: path.join(dir, 'data.img'),
      dataMnt: path.join(dir, 'data'),
      spec: path.join(dir, 'spec.json'),
      initPid: path.join(dir, 'init.pid'),
      slirpPid: path.join(dir, 'slirp.pid'),
      log: path.join(dir, 'sandbox.log'),
    };
  }
  type Paths = ReturnType<typeof paths>;

  /**
   * Whether bwrap finished building the sandbox: PID 1 forks the command (sleep) only after its
   * pivot_root. Before that PID 1 still sees the host's root, so nothing may join it yet.
   */
  function sandboxReady(pid: number): boolean {
    let children: string[];
    try {
      children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean);
    } catch {
      // kernels without CONFIG_PROC_CHILDREN: find the children by their parent pid
      children = fs.readdirSync('/proc').filter((d) => {
        if (!/^\d+$/.test(d)) return false;
        try {
          const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
          return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] === String(pid);
        } catch {
          return false;
        }
      });
    }
    return children.some((c) => {
      try {
        return fs.readFileSync(`/proc/${c}/comm`, 'utf8').trim() === 'sleep';
      } catch {
        return false;
      }
    });
  }

  /** The instance's init (PID 1 of its namespace) if alive, really ours (in our cgroup) and set up. */
  function initOf(id: string): number | null {
    const p = paths(id);
    const pid = readPid(p.initPid);
    if (!pid || !processAlive(pid)) return null;
    try {
      const cg = fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8');
      return (cg.includes(`/suanli/${id}\n`) || cg.endsWith(`/suanli/${id}`)) && sandboxReady(pid) ? pid : null;
    } catch {
      return null;
    }
  }

  function checkSpec(spec: InstanceSpec) {
    paths(spec.id);
    if (!path.isAbsolute(spec.image.rootPath) || !SAFE_PATH.test(spec.image.rootPath) || !fs.existsSync(spec.image.rootPath)) {
      throw new ComputeError(`image root ${spec.image.rootPath} is missing`);
    }
    if (!/^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(spec.hostname)) throw new ComputeError(`bad hostname ${spec.hostname}`);
    for (const l of spec.image.layers ?? []) {
      if (!path.isAbsolute(l) || !SAFE_PATH.test(l) || l.includes(':') || !fs.existsSync(path.join(l, 'root'))) throw new ComputeError(`image layer ${l} is missing`);
    }
    if (!(spec.dataDiskBytes >= 16 * 2 ** 20)) throw new ComputeError('data disk below 16 MiB');
    for (const d of spec.gpuDevices) if (!/^\/dev\/[A-Za-z0-9_/-]+$/.test(d) || !fs.existsSync(d)) throw new ComputeError(`GPU device ${d} is missing`);
  }

  async function umount(target: string) {
    for (let i = 0; i < 20 && isMounted(target); i++) {
      const r = await runCode('umount', [target]);
      if (r.code === 0) continue;
      if (i >= 10) await runCode('umount', ['-l', target]);
      else await sleep(100);
    }
    if (isMounted(target)) throw new ComputeError(`could not unmount ${target}`, true);
  }

  async function unmountAll(p: Paths) {
    await umount(path.join(p.root, 'root/data'));
    await umount(path.join(p.root, 'usr'));
    await umount(p.root);
    await umount(p.dataMnt);
  }

  async function mountDisks(spec: InstanceSpec, p: Paths) {
    for (const d of [p.upper, p.work, p.root, p.dataMnt]) fs.mkdirSync(d, { recursive: true, mode: 0o700 });
    fs.chmodSync(p.dir, 0o700);
    const layers = spec.image.layers ?? [];
    if (!isMounted(p.root)) {
      // Issue #10: a private image's layers (topmost first) over its base root.
      const lower = [...layers.map((l) => path.join(l, 'root')), spec.image.rootPath].join(':');
      await run('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${lower},upperdir=${p.upper},workdir=${p.work}`, p.root]);
      fs.chmodSync(p.root, 0o755);
    }
    const hostUsr = path.join(path.dirname(spec.image.rootPath), HOST_USR_DIR);
    if (fs.existsSync(path.join(hostUsr, 'top')) && !isMounted(path.join(p.root, 'usr'))) {
      fs.mkdirSync(p.usrUpper, { recursive: true });
      fs.mkdirSync(p.usrWork, { recursive: true });
      const usrLayers = layers.filter((l) => fs.existsSync(path.join(l, 'usr'))).map((l) => `${path.join(l, 'usr')}:`).join('');
      await run('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${usrLayers}${hostUsr}/top:${hostUsr}/wh:/usr,upperdir=${p.usrUpper},workdir=${p.usrWork}`, path.join(p.root, 'usr')]);
    }
    if (!isMounted(p.dataMnt)) await run('mount', ['-o', 'loop,nosuid,nodev', p.dataImg, p.dataMnt]);
  }

  /** Per-boot files inside the instance, written through its overlay without following its symlinks. */
  function writeInstanceFiles(spec: InstanceSpec, root: string) {
    safeWrite(root, 'etc/hostname', `${spec.hostname}\n`);
    safeWrite(root, 'etc/hosts', `127.0.0.1\tlocalhost\n127.0.1.1\t${spec.hostname}\n::1\tlocalhost ip6-localhost ip6-loopback\n`);
    safeWrite(root, 'etc/resolv.conf', 'nameserver 10.0.2.3\n');
    safeWrite(root, 'etc/motd', spec.banner.endsWith('\n') ? spec.banner : `${spec.banner}\n`);
    // Login shells print the banner when interactive (the web shell and ssh both start `bash -l`).
    safeWrite(root, 'etc/profile.d/00-suanli-motd.sh', 'case "$-" in *i*) [ -r /etc/motd ] && cat /etc/motd ;; esac\n');
    safeWrite(root, 'root/.ssh/authorized_keys', spec.authorizedKeys.map((k) => k.trim()).filter(Boolean).join('\n') + '\n', 0o600, 0o700);
    if (spec.rootPasswordCrypt && /^[^:\n]+$/.test(spec.rootPasswordCrypt)) {
      const shadow = safeRead(root, 'etc/shadow') ?? 'root:*:19000:0:99999:7:::\n';
      const lines = shadow.split('\n').filter((l) => l && !l.startsWith('root:'));
      safeWrite(root, 'etc/shadow', [`root:${spec.rootPasswordCrypt}:19000:0:99999:7:::`, ...lines].join('\n') + '\n', 0o640);
    }
  }

  function deviceNumbers(devs: string[]) {
    return devs.map((d) => {
      const st = fs.statSync(d);
      return { major: Math.floor(st.rdev / 256) & 0xfff, minor: (st.rdev & 0xff) | ((st.rdev >> 12) & 0xfff00) };
    });
  }

  async function killPidFile(file: string, mustContain: string) {
    const pid = readPid(file);
    if (pid && processAlive(pid)) {
      try {
        const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        if (cmdline.includes(mustContain)) process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    fs.rmSync(file, { force: true });
  }

  async function boot(spec: InstanceSpec, p: Paths): Promise<void> {
    const procs = procsFiles(spec.id);
    const bwrapArgs = [
      '--unshare-ipc',
      '--unshare-pid',
      '--unshare-net',
      '--unshare-uts',
      '--unshare-cgroup-try',
      '--hostname',
      spec.hostname,
      '--bind',
      p.root,
      '/',
      '--bind',
      p.dataMnt,
      '/root/data',
      '--proc',
      '/proc',
      // bwrap run by root leaves /proc/sys writable, and root inside could set host-wide sysctls
      // (kernel.core_pattern is an escape): cover it read-only (its values are then the host's).
      '--ro-bind',
      '/proc/sys',
      '/proc/sys',
      '--ro-bind-try',
      '/proc/sysrq-trigger',
      '/proc/sysrq-trigger',
      '--dev',
      '/dev',
      ...spec.gpuDevices.flatMap((d) => ['--dev-bind', d, d]),
      '--cap-drop',
      'ALL',
      ...INSTANCE_CAPS.flatMap((c) => ['--cap-add', `CAP_${c.toUpperCase()}`]),
      '--chdir',
      '/root',
      '--setenv',
      'PATH',
      '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--info-fd',
      '3',
      '--',
      '/bin/sleep',
      'infinity',
    ];
    const logFd = fs.openSync(p.log, 'a');
    // Joins the instance's cgroups, then becomes bwrap: the sandbox and all it forks are counted there.
    const child = spawn('/bin/sh', ['-c', 'for f in $SUANLI_CGROUP_PROCS; do echo $$ > "$f" || exit 125; done; exec bwrap "$@"', 'suanli-boot', ...bwrapArgs], {
      detached: true,
      stdio: ['ignore', logFd, logFd, 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', SUANLI_CGROUP_PROCS: procs.join(' ') },
    });
    fs.closeSync(logFd);
    const info = child.stdio[3] as NodeJS.ReadableStream;
    const initPid = await new Promise<number>((resolve, reject) => {
      let buf = '';
      const timer = setTimeout(() => reject(new ComputeError('bwrap did not report its child within 10 s', true)), 10_000);
      info.on('data', (d: Buffer) => (buf += d.toString()));
      // bwrap closes the info fd once written; reading to the end (never closing it early) keeps it from a SIGPIPE
      info.on('end', () => {
        const m = /"child-pid"\s*:\s*(\d+)/.exec(buf);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        const tail = fs.existsSync(p.log) ? fs.readFileSync(p.log, 'utf8').slice(-600) : '';
        reject(new ComputeError(`bwrap exited with ${code}: ${tail.trim()}`));
      });
    });
    child.unref();
    for (let i = 0; !sandboxReady(initPid); i++) {
      if (i > 400 || !processAlive(initPid)) {
        const diag = (() => {
          try {
            return `state ${/State:\s*(.*)/.exec(fs.readFileSync(`/proc/${initPid}/status`, 'utf8'))?.[1]} wchan ${fs.readFileSync(`/proc/${initPid}/wchan`, 'utf8')} children [${fs.readFileSync(`/proc/${initPid}/task/${initPid}/children`, 'utf8')}]`;
          } catch (e) {
            return String(e);
          }
        })();
        throw new ComputeError(`sandbox of ${spec.id} did not come up (${diag}): ${fs.readFileSync(p.log, 'utf8').slice(-600).trim()}`, true);
      }
      await sleep(25);
    }
    fs.writeFileSync(p.initPid, `${initPid}\n`);

    // User-mode NAT into the sandbox's network namespace; host loopback (10.0.2.2) disabled.
    const slirpLog = fs.openSync(p.log, 'a');
    const slirp = spawn('slirp4netns', ['--configure', '--mtu=65520', '--disable-host-loopback', '--ready-fd=3', String(initPid), 'tap0'], {
      detached: true,
      gid: SLIRP_GID,
      stdio: ['ignore', slirpLog, slirpLog, 'pipe'],
    });
    fs.closeSync(slirpLog);
    const ready = slirp.stdio[3] as NodeJS.ReadableStream;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new ComputeError('slirp4netns was not ready within 10 s', true)), 10_000);
      ready.once('data', () => {
        clearTimeout(timer);
        resolve();
      });
      slirp.once('exit', (code) => {
        clearTimeout(timer);
        reject(new ComputeError(`slirp4netns exited with ${code}`));
      });
    });
    slirp.unref();
    fs.writeFileSync(p.slirpPid, `${slirp.pid}\n`);
  }

  async function stopProcesses(id: string, p: Paths) {
    const init = initOf(id);
    if (init) {
      try {
        process.kill(init, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await killPidFile(p.slirpPid, 'slirp4netns');
    // Killing PID 1 of the namespace kills every process in it; wait until the cgroup is empty.
    for (let i = 0; i < 100; i++) {
      const left = cgroupPids(id).filter((pid) => processAlive(pid));
      if (!left.length && !(init && processAlive(init))) break;
      for (const pid of left) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      await sleep(50);
    }
    fs.rmSync(p.initPid, { force: true });
  }

  const driver: ComputeDriver = {
    name: 'local',

    async availability() {
      if (process.getuid?.() !== 0) {
        return { ok: false, reason: '本机实例需要服务以 root 身份运行（创建沙箱、挂载磁盘和 cgroup 都需要 root）', fix: 'sudo npm start' };
      }
      if (!SAFE_PATH.test(base)) {
        return { ok: false, reason: `数据目录 ${base} 含有 overlayfs 挂载参数不支持的字符（只允许字母、数字和 / _ . + -）`, fix: 'DATA_DIR=/var/lib/suanli npm start' };
      }
      const missing = missingHostPackages();
      if (!missing.length && (await runCode('iptables', ['-w', '-L', 'OUTPUT', '-n'])).code !== 0) {
        return { ok: false, reason: '主机防火墙（iptables）不可用，无法阻止实例访问主机自身的地址', fix: 'modprobe ip_tables; apt-get install -y iptables' };
      }
      if (missing.length) return { ok: false, reason: `主机缺少实例运行所需的软件包：${missing.join('、')}`, fix: installCommand(missing) };
      const fsTypes = fs.readFileSync('/proc/filesystems', 'utf8');
      if (!/\boverlay\b/.test(fsTypes)) {
        await runCode('modprobe', ['overlay']);
        if (!/\boverlay\b/.test(fs.readFileSync('/proc/filesystems', 'utf8'))) return { ok: false, reason: '内核不支持 overlayfs，无法创建实例系统盘', fix: 'modprobe overlay' };
      }
      const noCg = missingControllers();
      if (noCg.length) {
        return {
          ok: false,
          reason: `主机缺少 cgroup v1 控制器：${noCg.join('、')}（需要 memory、cpu、pids 以限制实例资源）`,
          fix: `mount -t cgroup -o ${noCg.join(',')} cgroup /sys/fs/cgroup/${noCg[0]}`,
        };
      }
      return { ok: true };
    },

    async create(spec) {
      checkSpec(spec);
      const p = paths(spec.id);
      for (const d of [p.dir, p.upper, p.work, p.root, p.dataMnt]) fs.mkdirSync(d, { recursive: true, mode: 0o700 });
      fs.chmodSync(p.dir, 0o700);
      if (!fs.existsSync(p.dataImg)) {
        const tmp = `${p.dataImg}.tmp`;
        fs.rmSync(tmp, { force: true });
        fs.closeSync(fs.openSync(tmp, 'w', 0o600));
        fs.truncateSync(tmp, spec.dataDiskBytes);
        await run('mkfs.ext4', ['-q', '-F', '-m', '0', '-L', 'data', '-E', 'nodiscard', tmp]);
        fs.renameSync(tmp, p.dataImg);
      }
      fs.writeFileSync(p.spec, JSON.stringify(spec));
    },

    async start(spec) {
      checkSpec(spec);
      const p = paths(spec.id);
      if (initOf(spec.id)) return;
      if (!fs.existsSync(p.dataImg)) await driver.create(spec);
      fs.writeFileSync(p.spec, JSON.stringify(spec));
      // Anything left by a crash mid-start (a slirp, stray processes) goes first.
      await stopProcesses(spec.id, p);
      // Issue #10: a data disk grown while it was mounted without online resize gets its new size now.
      if (!isMounted(p.dataMnt)) await growToFile(p.dataImg);
      await mountDisks(spec, p);
      writeInstanceFiles(spec, p.root);
      fenced ??= ensureHostFence().catch((err: unknown) => {
        fenced = null;
        throw err;
      });
      await fenced;
      setupCgroups(spec.id, { memoryBytes: spec.memoryBytes, cpuCores: spec.cpuCores, pidsMax: spec.pidsMax, devices: deviceNumbers(spec.gpuDevices) });
      try {
        await boot(spec, p);
      } catch (err) {
        await stopProcesses(spec.id, p).catch(() => {});
        throw err instanceof ComputeError ? err : new ComputeError(String(err));
      }
      log?.info({ instance: spec.id, init: readPid(p.initPid) }, 'compute: instance started');
    },

    async stop(id) {
      const p = paths(id);
      if (!fs.existsSync(p.dir)) return;
      await stopProcesses(id, p);
      await unmountAll(p);
    },

    async destroy(id) {
      const p = paths(id);
      if (fs.existsSync(p.dir)) {
        await stopProcesses(id, p);
        await unmountAll(p);
        fs.rmSync(p.dir, { recursive: true, force: true });
      }
      await removeCgroups(id);
    },

    async resetSystem(spec) {
      checkSpec(spec);
      const p = paths(spec.id);
      if (initOf(spec.id)) throw new ComputeError('instance is running: stop it before resetting its system disk');
      await umount(path.join(p.root, 'usr'));
      await umount(p.root);
      for (const d of [p.upper, p.work, p.usrUpper, p.usrWork]) fs.rmSync(d, { recursive: true, force: true });
      fs.mkdirSync(p.upper, { recursive: true, mode: 0o700 });
      fs.mkdirSync(p.work, { recursive: true, mode: 0o700 });
      fs.writeFileSync(p.spec, JSON.stringify(spec));
    },

    async status(id) {
      const p = paths(id);
      if (initOf(id)) return 'running';
      return fs.existsSync(p.dataImg) || fs.existsSync(p.spec) ? 'stopped' : 'missing';
    },

    async exec(id, execOpts) {
      const init = initOf(id);
      if (!init) throw new ComputeError(`instance ${id} is not running`);
      return startExec(init, procsFiles(id), execOpts);
    },

    async openTerminal(id, termOpts) {
      const init = initOf(id);
      if (!init) throw new ComputeError(`instance ${id} is not running`);
      return startTerminal(init, procsFiles(id), termOpts);
    },

    async usage(id) {
      const p = paths(id);
      const running = !!initOf(id);
      const cg = running ? cgroupUsage(id) : { cpuSeconds: 0, memoryBytes: 0, memoryLimitBytes: 0, processes: 0 };
      let dataDiskUsedBytes = 0;
      let dataDiskTotalBytes = fs.existsSync(p.dataImg) ? fs.statSync(p.dataImg).size : 0;
      if (isMounted(p.dataMnt)) {
        const s = fs.statfsSync(p.dataMnt);
        dataDiskTotalBytes = s.blocks * s.bsize;
        dataDiskUsedBytes = (s.blocks - s.bfree) * s.bsize;
      } else if (fs.existsSync(p.dataImg)) {
        // Issue #10: a stopped instance's disk, read from its superblock (never mounted for this).
        const e = await ext4Info(p.dataImg).catch(() => null);
        if (e) {
          dataDiskTotalBytes = e.blockCount * e.blockSize;
          dataDiskUsedBytes = (e.blockCount - e.freeBlocks) * e.blockSize;
        }
      }
      let systemLayerBytes = 0;
      const dirs = [p.upper, p.usrUpper].filter((d) => fs.existsSync(d));
      if (dirs.length) {
        const r = await runCode('du', ['-sbc', ...dirs]);
        const total = /(\d+)\s+total\s*$/.exec(r.stdout.trim());
        systemLayerBytes = total ? Number(total[1]) : 0;
      }
      const out: InstanceUsage = { ...cg, dataDiskUsedBytes, dataDiskTotalBytes, systemLayerBytes };
      return out;
    },

    async list() {
      if (!fs.existsSync(base)) return [];
      return fs.readdirSync(base).filter((id) => ID.test(id) && initOf(id) !== null);
    },

    // Issue #10: instance operations (ops.ts).
    ...createOps({ paths, initOf, checkSpec, umount, log }),
  };
  return driver;
}
