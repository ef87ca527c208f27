import { execFile } from 'node:child_process';
import fs from 'node:fs';

export type DetectedGpu = { index: number; name: string; memoryGb: number };

/**
 * Parses `nvidia-smi --query-gpu=name,memory.total --format=csv,noheader`: one line per GPU,
 * "NVIDIA GeForce RTX 4090, 24564 MiB". Lines that don't read so are skipped; memory is rounded
 * to whole GB (24564 MiB → 24).
 */
export function parseNvidiaSmi(output: string): DetectedGpu[] {
  const gpus: DetectedGpu[] = [];
  for (const raw of output.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line) continue;
    const m = /^(.+?),\s*(\d+(?:\.\d+)?)\s*(MiB|GiB|MB|GB)?$/i.exec(line);
    if (!m?.[1] || !m[2]) continue;
    const amount = Number(m[2]);
    const unit = (m[3] ?? 'MiB').toLowerCase();
    const gb = unit === 'gib' || unit === 'gb' ? amount : amount / 1024;
    gpus.push({ index: gpus.length, name: m[1].trim(), memoryGb: Math.max(1, Math.round(gb)) });
  }
  return gpus;
}

/** Device nodes an instance needs for these GPUs: /dev/nvidiaN each, and the control and UVM nodes. */
export function gpuDeviceNodes(gpus: DetectedGpu[], exists: (p: string) => boolean = fs.existsSync): string[] {
  const nodes = gpus.map((g) => `/dev/nvidia${g.index}`);
  for (const shared of ['/dev/nvidiactl', '/dev/nvidia-uvm', '/dev/nvidia-uvm-tools']) if (shared !== '/dev/nvidia-uvm-tools' || exists(shared)) nodes.push(shared);
  return nodes;
}

/** Asks `nvidia-smi` (5 s at most); no nvidia-smi, no driver or no GPU: an empty list. */
export function detectGpus(): Promise<DetectedGpu[]> {
  return new Promise((resolve) => {
    execFile('nvidia-smi', ['--query-gpu=name,memory.total', '--format=csv,noheader'], { timeout: 5_000 }, (err, stdout) => {
      resolve(err ? [] : parseNvidiaSmi(stdout));
    });
  });
}
