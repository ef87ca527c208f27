import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import type { ComputeDriver, InstanceSpec, TerminalSession } from '../../src/adapters/compute/port.ts';
import { buildHostImage } from '../../src/modules/image/host-image.ts';

function hasCommand(cmd: string) {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Why the real-driver tests can't run here (null: they can). */
export const skipReason: string | null =
  process.getuid?.() !== 0
    ? 'the local compute driver needs root (mounts, cgroups, namespaces)'
    : !hasCommand('bwrap')
      ? 'bubblewrap (bwrap) is not installed: apt-get install bubblewrap'
      : !hasCommand('slirp4netns')
        ? 'slirp4netns is not installed: apt-get install slirp4netns'
        : !fs.existsSync('/sys/fs/cgroup/memory/memory.limit_in_bytes')
          ? 'cgroup v1 memory controller is not mounted'
          : null;

export const MiB = 2 ** 20;

/** A fresh data dir with the host-based image built in it (ext4 under /var/tmp, like a real data dir). */
export function makeDataDir(): { dataDir: string; rootPath: string; cleanup: () => void } {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-compute-'));
  const built = buildHostImage(path.join(dataDir, 'images', 'host-base'));
  return { dataDir, rootPath: built.rootPath, cleanup: () => fs.rmSync(dataDir, { recursive: true, force: true }) };
}

export function specOf(rootPath: string, over: Partial<InstanceSpec> = {}): InstanceSpec {
  const id = over.id ?? `t${crypto.randomBytes(5).toString('hex')}`;
  return {
    id,
    hostname: over.hostname ?? `box-${id}`,
    image: { id: 1, rootPath },
    cpuCores: 1,
    memoryBytes: 256 * MiB,
    pidsMax: 256,
    dataDiskBytes: 64 * MiB,
    systemDiskBytes: 1024 * MiB,
    gpuDevices: [],
    banner: '演示机器：无物理 GPU',
    authorizedKeys: [],
    ...over,
  };
}

/** Runs a command string in the instance and collects its output. */
export async function sh(driver: ComputeDriver, id: string, command: string) {
  const s = await driver.exec(id, { command });
  s.stdin.end();
  let stdout = '';
  let stderr = '';
  s.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  s.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = await s.exit;
  return { stdout, stderr, code: exit.code, signal: exit.signal };
}

/** Collects a terminal's output and waits for a pattern in it. */
export function screen(t: TerminalSession) {
  let text = '';
  t.output.on('data', (d: Buffer) => (text += d.toString()));
  return {
    text: () => text,
    async waitFor(re: RegExp, ms = 15_000): Promise<RegExpExecArray> {
      const until = Date.now() + ms;
      for (;;) {
        const m = re.exec(text);
        if (m) return m;
        if (Date.now() > until) throw new Error(`terminal never showed ${re}; got:\n${text.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}
