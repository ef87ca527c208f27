import fs from 'node:fs';
import path from 'node:path';
import { sleep } from './fsutil.ts';

/** cgroup v1 hierarchies the driver uses; `devices` and `cpuacct` are used when present. */
export const CGROUP_ROOT = '/sys/fs/cgroup';
const REQUIRED = ['memory', 'cpu', 'pids'] as const;
const OPTIONAL = ['cpuacct', 'devices'] as const;

/** Which required v1 controllers are missing (empty: all there): enabled in /proc/cgroups and mounted. */
export function missingControllers(): string[] {
  let table: string;
  try {
    table = fs.readFileSync('/proc/cgroups', 'utf8');
  } catch {
    return [...REQUIRED];
  }
  const enabled = new Set(
    table
      .split('\n')
      .map((l) => l.split('\t'))
      .filter((f) => f.length >= 4 && f[1] !== '0' && f[3] === '1')
      .map((f) => f[0]),
  );
  return REQUIRED.filter((c) => !enabled.has(c) || !fs.existsSync(path.join(CGROUP_ROOT, c, 'cgroup.procs')));
}

/** Distinct hierarchies (cpu and cpuacct may be one mount reached by two names). */
function hierarchies(): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const c of [...REQUIRED, ...OPTIONAL]) {
    const dir = path.join(CGROUP_ROOT, c);
    if (!fs.existsSync(path.join(dir, 'cgroup.procs'))) continue;
    const real = fs.realpathSync(dir);
    if (seen.has(real)) continue;
    seen.add(real);
    out.push(c);
  }
  return out;
}

export type CgroupLimits = { memoryBytes: number; cpuCores: number; pidsMax: number; devices: { major: number; minor: number }[] };

export function cgroupDir(ctrl: string, id: string) {
  return path.join(CGROUP_ROOT, ctrl, 'suanli', id);
}

/** The cgroup.procs files a process writes its pid into to join the instance (every hierarchy). */
export function procsFiles(id: string): string[] {
  return hierarchies().map((c) => path.join(cgroupDir(c, id), 'cgroup.procs'));
}

function write(file: string, value: string) {
  fs.writeFileSync(file, value);
}

/** Base devices every instance may open: null, zero, full, random, urandom, tty, console, ptmx, pts. */
const BASE_DEVICES = ['c 1:3 rwm', 'c 1:5 rwm', 'c 1:7 rwm', 'c 1:8 rwm', 'c 1:9 rwm', 'c 5:0 rwm', 'c 5:1 rwm', 'c 5:2 rwm', 'c 136:* rwm'];

/** Creates (or updates) the instance's cgroups with its limits. */
export function setupCgroups(id: string, limits: CgroupLimits) {
  for (const c of hierarchies()) fs.mkdirSync(cgroupDir(c, id), { recursive: true });
  const mem = cgroupDir('memory', id);
  const memBytes = String(Math.max(16 * 2 ** 20, Math.floor(limits.memoryBytes)));
  // memsw must stay >= limit: raise it first when growing, lower the limit first when shrinking.
  const memsw = path.join(mem, 'memory.memsw.limit_in_bytes');
  if (fs.existsSync(memsw)) {
    try {
      write(memsw, memBytes);
      write(path.join(mem, 'memory.limit_in_bytes'), memBytes);
    } catch {
      write(path.join(mem, 'memory.limit_in_bytes'), memBytes);
      write(memsw, memBytes);
    }
  } else {
    write(path.join(mem, 'memory.limit_in_bytes'), memBytes);
  }
  const cpu = cgroupDir('cpu', id);
  write(path.join(cpu, 'cpu.cfs_period_us'), '100000');
  write(path.join(cpu, 'cpu.cfs_quota_us'), String(Math.max(1000, Math.round(limits.cpuCores * 100000))));
  write(path.join(cgroupDir('pids', id), 'pids.max'), String(Math.max(8, Math.floor(limits.pidsMax))));
  if (hierarchies().includes('devices')) {
    const dev = cgroupDir('devices', id);
    write(path.join(dev, 'devices.deny'), 'a');
    for (const rule of BASE_DEVICES) write(path.join(dev, 'devices.allow'), rule);
    for (const d of limits.devices) write(path.join(dev, 'devices.allow'), `c ${d.major}:${d.minor} rwm`);
  }
}

function readNum(file: string): number {
  try {
    return Number(fs.readFileSync(file, 'utf8').trim()) || 0;
  } catch {
    return 0;
  }
}

export function cgroupUsage(id: string) {
  const acct = fs.existsSync(path.join(cgroupDir('cpuacct', id), 'cpuacct.usage')) ? path.join(cgroupDir('cpuacct', id), 'cpuacct.usage') : path.join(cgroupDir('cpu', id), 'cpuacct.usage');
  return {
    cpuSeconds: readNum(acct) / 1e9,
    memoryBytes: readNum(path.join(cgroupDir('memory', id), 'memory.usage_in_bytes')),
    memoryLimitBytes: readNum(path.join(cgroupDir('memory', id), 'memory.limit_in_bytes')),
    processes: readNum(path.join(cgroupDir('pids', id), 'pids.current')),
  };
}

/** Pids still in the instance's pids cgroup. */
export function cgroupPids(id: string): number[] {
  try {
    return fs
      .readFileSync(path.join(cgroupDir('pids', id), 'cgroup.procs'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** Removes the instance's cgroups (they must be empty: call after its processes are gone). */
export async function removeCgroups(id: string) {
  for (const c of hierarchies()) {
    const dir = cgroupDir(c, id);
    for (let i = 0; i < 50 && fs.existsSync(dir); i++) {
      try {
        fs.rmdirSync(dir);
      } catch {
        await sleep(100);
      }
    }
  }
}
