/**
 * Issue #10 on the `local` compute driver (needs root; BENCH_ONLY=instance-ops):
 *  (a) data copy between two instances' data disks (ComputeDriver.copyData, both stopped: their
 *      disks are mounted for the copy) against a plain `cp -a` of the same files on the same disk;
 *  (b) clone (system layer + sparse data disk, ComputeDriver.cloneFrom) against `cp -a
 *      --sparse=always` of the same upper dir and data.img on the same host filesystem;
 *  (c) saving a 1 GiB system layer as an image layer (ComputeDriver.saveSystemLayer).
 * Each copy is timed up to a `sync` so the written bytes are on the disk in both cases.
 * BENCH_OPS_MB sets the data set of (a)/(b) (default 512 MB).
 */
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLocalDriver } from '../apps/server/src/adapters/compute/local.ts';
import type { ComputeDriver, InstanceSpec } from '../apps/server/src/adapters/compute/port.ts';
import { buildHostImage } from '../apps/server/src/modules/image/host-image.ts';

const MiB = 2 ** 20;
const AIM = 0.8;
const DATA_MB = Number(process.env.BENCH_OPS_MB ?? 512);

function specOf(rootPath: string, dataDiskBytes: number): InstanceSpec {
  const id = `bops${crypto.randomBytes(4).toString('hex')}`;
  return {
    id,
    hostname: id,
    image: { id: 1, rootPath },
    cpuCores: 2,
    memoryBytes: 2048 * MiB,
    pidsMax: 512,
    dataDiskBytes,
    systemDiskBytes: 30 * 1024 * MiB,
    gpuDevices: [],
    banner: 'bench',
    authorizedKeys: [],
  };
}

async function sh(driver: ComputeDriver, id: string, command: string) {
  const s = await driver.exec(id, { command });
  s.stdin.end();
  let err = '';
  s.stdout.resume();
  s.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = await s.exit;
  if (exit.code !== 0) throw new Error(`${command}: ${exit.code} ${err}`);
}

/** A data set like a user's: one big file, a few medium ones, many small ones (sizes in MB ≈ DATA_MB). */
function fillCommand(dir: string, mb: number) {
  const big = Math.floor(mb / 2);
  const mediumCount = 16;
  const medium = Math.max(1, Math.floor(mb / 4 / mediumCount));
  const smallCount = 1024;
  const smallKb = Math.max(1, Math.floor((mb / 4) * 1024 / smallCount));
  return [
    `mkdir -p ${dir}/small ${dir}/medium`,
    `head -c ${big}M /dev/urandom > ${dir}/big.bin`,
    `for i in $(seq 1 ${mediumCount}); do head -c ${medium}M /dev/urandom > ${dir}/medium/m$i.bin; done`,
    `head -c ${smallKb * smallCount}K /dev/urandom | split -b ${smallKb}K - ${dir}/small/f`,
  ].join(' && ');
}

const timed = async (fn: () => Promise<unknown> | unknown) => {
  execFileSync('sync');
  const t0 = performance.now();
  await fn();
  execFileSync('sync');
  return (performance.now() - t0) / 1000;
};
const mbps = (bytes: number, s: number) => bytes / 1e6 / s;
const verdict = (r: number) => (r >= AIM ? 'met' : 'NOT met');

export async function benchInstanceOps(): Promise<string[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-bench-ops-'));
  const driver = createLocalDriver({ dataDir });
  const made: string[] = [];
  const lines: string[] = [];
  try {
    const avail = await driver.availability();
    if (!avail.ok) return [`[bench] instance-ops: skipped — ${avail.reason}`];
    const { rootPath } = buildHostImage(path.join(dataDir, 'images/host-base'));
    const diskBytes = Math.max(2048, DATA_MB * 4) * MiB;
    const src = specOf(rootPath, diskBytes);
    const dst = specOf(rootPath, diskBytes);
    for (const s of [src, dst]) {
      made.push(s.id);
      await driver.create(s);
    }
    await driver.start(src);
    await sh(driver, src.id, fillCommand('/root/data/set', DATA_MB));
    // (b)'s system layer: a quarter of the data set written over the image
    await sh(driver, src.id, `mkdir -p /opt/layer && head -c ${Math.floor(DATA_MB / 4)}M /dev/urandom > /opt/layer/blob.bin && cp -a /usr/share/doc /opt/layer/doc`);
    await driver.stop(src.id);
    const srcDir = path.join(dataDir, 'instances', src.id);

    // (a) data copy vs cp -a on the same disk
    const copyRuns: number[] = [];
    const cpRuns: number[] = [];
    const cpCrossRuns: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 2; i++) {
      const target = `run${i}`;
      copyRuns.push(
        await timed(async () => {
          bytes = (await driver.copyData({ sourceId: src.id, targetId: dst.id, sourcePath: 'set', targetPath: target })).totalBytes;
        }),
      );
      const mnt = path.join(srcDir, 'data');
      const dstMnt = path.join(dataDir, 'instances', dst.id, 'data');
      execFileSync('mount', ['-o', 'loop,nosuid,nodev', path.join(srcDir, 'data.img'), mnt]);
      execFileSync('mount', ['-o', 'loop,nosuid,nodev', path.join(dataDir, 'instances', dst.id, 'data.img'), dstMnt]);
      try {
        cpRuns.push(await timed(() => execFileSync('cp', ['-a', path.join(mnt, 'set'), path.join(mnt, `cp-${target}`)])));
        fs.rmSync(path.join(mnt, `cp-${target}`), { recursive: true, force: true });
        cpCrossRuns.push(await timed(() => execFileSync('cp', ['-a', path.join(mnt, 'set'), path.join(dstMnt, `cp-${target}`)])));
        fs.rmSync(path.join(dstMnt, `cp-${target}`), { recursive: true, force: true });
      } finally {
        execFileSync('umount', [mnt]);
        execFileSync('umount', [dstMnt]);
      }
    }
    const copyS = Math.min(...copyRuns);
    const cpS = Math.min(...cpRuns);
    const cpCrossS = Math.min(...cpCrossRuns);
    const r1 = cpS / copyS;
    lines.push(
      `[bench] data copy between two instances' data disks (${(bytes / 1e6).toFixed(0)} MB: 1 big, 16 medium, 1,024 small files; both stopped, their disks mounted for the copy, best of 2): ${mbps(bytes, copyS).toFixed(0)} MB/s; cp -a on the same disk: ${mbps(bytes, cpS).toFixed(0)} MB/s; ratio ${r1.toFixed(2)} (aim ≥ ${AIM}×: ${verdict(r1)}); cp -a from one disk to the other (both already mounted): ${mbps(bytes, cpCrossS).toFixed(0)} MB/s, ratio ${(cpCrossS / copyS).toFixed(2)}`,
    );

    // (b) clone vs cp -a --sparse=always of the same upper dir and data.img
    const cloneBytes =
      Number(execFileSync('du', ['-sb', path.join(srcDir, 'upper')], { encoding: 'utf8' }).split('\t')[0]) + fs.statSync(path.join(srcDir, 'data.img')).blocks * 512;
    const cloneRuns: number[] = [];
    const cpCloneRuns: number[] = [];
    for (let i = 0; i < 2; i++) {
      const c = specOf(rootPath, diskBytes);
      made.push(c.id);
      cloneRuns.push(await timed(() => driver.cloneFrom(src.id, c)));
      await driver.destroy(c.id);
      const dir = path.join(dataDir, `cp-clone-${i}`);
      fs.mkdirSync(dir);
      cpCloneRuns.push(await timed(() => execFileSync('cp', ['-a', '--sparse=always', path.join(srcDir, 'upper'), path.join(srcDir, 'data.img'), dir])));
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const cloneS = Math.min(...cloneRuns);
    const cpCloneS = Math.min(...cpCloneRuns);
    const r2 = cpCloneS / cloneS;
    lines.push(
      `[bench] clone (system layer + sparse data disk, ${(cloneBytes / 1e6).toFixed(0)} MB allocated, best of 2): ${mbps(cloneBytes, cloneS).toFixed(0)} MB/s; cp -a --sparse=always of the same files on the same disk: ${mbps(cloneBytes, cpCloneS).toFixed(0)} MB/s; ratio ${r2.toFixed(2)} (aim ≥ ${AIM}×: ${verdict(r2)})`,
    );

    // (c) a 1 GiB system layer saved as an image layer
    const sys = specOf(rootPath, 256 * MiB);
    made.push(sys.id);
    await driver.create(sys);
    await driver.start(sys);
    await sh(driver, sys.id, 'mkdir -p /opt/model && for i in $(seq 1 16); do head -c 64M /dev/urandom > /opt/model/part$i.bin; done && cp -a /usr/share/doc /opt/model/doc');
    await driver.stop(sys.id);
    let layerBytes = 0;
    const saveS = await timed(async () => {
      layerBytes = (await driver.saveSystemLayer(sys.id, path.join(dataDir, 'images/layers/bench'))).sizeBytes;
    });
    lines.push(`[bench] save a system disk as an image (${(layerBytes / 1e6).toFixed(0)} MB system layer: 16 × 64 MiB + /usr/share/doc): ${saveS.toFixed(2)} s (${mbps(layerBytes, saveS).toFixed(0)} MB/s)`);
    return lines;
  } finally {
    for (const id of made) await driver.destroy(id).catch(() => {});
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
