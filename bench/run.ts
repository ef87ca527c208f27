/**
 * `npm run bench`: prints each figure as a ratio or throughput with the machine named.
 * Record results in docs/benchmarks.md. Never part of `npm test`.
 */
import os from 'node:os';
import zlib from 'node:zlib';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { chromium } from 'playwright-core';
import { benchLedger } from './ledger.ts';
import { benchNotify } from './notify.ts';
import { benchJobs } from './jobs.ts';
import { benchSettlement } from './settlement.ts'; // issue #8 (meter): one metering tick over 10,000 instances
import { benchInstances } from './instances.ts'; // orders and instances (issue #8)
import { benchCompute } from './compute.ts'; // issue #8: local driver start time
import { benchShell } from './shell.ts'; // issue #8 (ssh): web shell keystroke echo
import { benchEmbedded } from './llm-embedded.ts'; // Issue #9 (upstream): embedded model TTFT and tokens/s
import { benchLlmGateway } from './llm-gateway.ts'; // Issue #9 (gateway): /v1 overhead and 64-stream throughput
import { benchInstanceOps } from './instance-ops.ts'; // Issue #10 (driver): data copy, clone and image save throughput

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const machine = `${os.cpus()[0]?.model ?? 'cpu'} ×${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);

type Target = { appPort: number; barePort: number; token: string; engine: string };

async function startTarget(env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'bench/target.ts')], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    // the console SMS adapter prints its own lines first; the target's JSON line is the one
    rl.on('line', (l) => l.startsWith('{') && resolve(l));
    child.once('exit', (c) => reject(new Error(`bench target exited with ${c}`)));
  });
  return { target: JSON.parse(line) as Target, stop: () => child.kill('SIGTERM') };
}

async function rps(url: string, headers: Record<string, string> = {}) {
  const result = await autocannon({ url, connections: 32, duration: DURATION, headers });
  if (result.non2xx > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers`);
  return result.requests.average;
}

async function userDetailRatio() {
  const { target, stop } = await startTarget();
  try {
    const headers = { host: 'localhost', authorization: `Bearer ${target.token}` };
    await rps(`http://127.0.0.1:${target.appPort}/api/v1/user/detail`, headers); // warm-up
    const detail = await rps(`http://127.0.0.1:${target.appPort}/api/v1/user/detail`, headers);
    const bare = await rps(`http://127.0.0.1:${target.barePort}/bare`);
    console.log(`[bench] GET /api/v1/user/detail (${target.engine}): ${detail.toFixed(0)} req/s; bare Fastify route: ${bare.toFixed(0)} req/s; ratio ${(detail / bare).toFixed(2)} (aim ≥ 0.5)`);
  } finally {
    stop();
  }
}

/** #21: gzipped JavaScript /login may load. */
const LOGIN_AIM_KB = 200;

async function loginBundleBytes() {
  const webDist = path.join(root, 'apps/web/dist');
  if (!fs.existsSync(path.join(webDist, 'index.html'))) throw new Error('build the web app first: npm run build');
  const { target, stop } = await startTarget({ WEB_DIST: webDist });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage();
    const scripts: { url: string; gzip: number }[] = [];
    page.on('response', async (res) => {
      if (res.request().resourceType() !== 'script') return;
      const body = await res.body().catch(() => Buffer.alloc(0));
      scripts.push({ url: res.url(), gzip: zlib.gzipSync(body, { level: 9 }).length });
    });
    await page.goto(`http://localhost:${target.appPort}/login`, { waitUntil: 'networkidle' });
    await page.waitForSelector('form');
    const total = scripts.reduce((s, x) => s + x.gzip, 0) / 1024;
    const verdict = total <= LOGIN_AIM_KB ? 'within the aim' : `${(total - LOGIN_AIM_KB).toFixed(1)} KB over the aim`;
    console.log(`[bench] JS loaded to render /login: ${scripts.length} files, ${total.toFixed(1)} KB gzipped (aim ≤ ${LOGIN_AIM_KB} KB: ${verdict})`);
    if (process.env.BENCH_VERBOSE) for (const s of scripts.sort((a, b) => b.gzip - a.gzip)) console.log(`[bench]   ${(s.gzip / 1024).toFixed(1).padStart(6)} KB ${s.url.split('/').pop()}`);
  } finally {
    await browser.close();
    stop();
  }
}

console.log(`[bench] machine: ${machine}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
// Issue #8 (meter): BENCH_ONLY=settlement, one metering tick over 10,000 running instances (PostgreSQL).
if (process.env.BENCH_ONLY === 'settlement') {
  for (const line of await benchSettlement()) console.log(line);
  process.exit(0);
}
// BENCH_ONLY=ledger / jobs: only that figure (each needs PostgreSQL, see ledger.ts).
if (process.env.BENCH_ONLY === 'ledger' || process.env.BENCH_ONLY === 'jobs') {
  for (const line of process.env.BENCH_ONLY === 'ledger' ? await benchLedger(DURATION) : await benchJobs()) console.log(line);
  process.exit(0);
}
// BENCH_ONLY=instances: pay → running and the instance list ratio (orders and instances, issue #8).
if (process.env.BENCH_ONLY === 'instances') {
  for (const line of await benchInstances(DURATION)) console.log(line);
  process.exit(0);
}
// BENCH_ONLY=compute: the local compute driver's create+start → first exec (needs root; issue #8).
if (process.env.BENCH_ONLY === 'compute') {
  for (const line of await benchCompute()) console.log(line);
  process.exit(0);
}
// issue #8 (ssh): BENCH_ONLY=shell, web shell keystroke echo p50/p99 over loopback.
if (process.env.BENCH_ONLY === 'shell') {
  for (const line of await benchShell()) console.log(line);
  process.exit(0);
}
// Issue #9 (upstream): BENCH_ONLY=llm-embedded, the embedded model's time to first token and tokens/s on this CPU.
if (process.env.BENCH_ONLY === 'llm-embedded') {
  for (const line of await benchEmbedded()) console.log(line);
  process.exit(0);
}
// Issue #9 (gateway): BENCH_ONLY=llm, the /v1 gateway's overhead over the fake upstream and its throughput.
if (process.env.BENCH_ONLY === 'llm') {
  for (const line of await benchLlmGateway(DURATION)) console.log(line);
  process.exit(0);
}
// Issue #10 (driver): BENCH_ONLY=instance-ops, data copy and clone vs cp, 1 GiB system disk → image (needs root).
if (process.env.BENCH_ONLY === 'instance-ops') {
  for (const line of await benchInstanceOps()) console.log(line);
  process.exit(0);
}
if (process.env.BENCH_ONLY !== 'login') await userDetailRatio();
await loginBundleBytes();
if (process.env.BENCH_ONLY === 'login') process.exit(0);
for (const line of await benchLedger(DURATION)) console.log(line);
for (const line of await benchNotify()) console.log(line);
for (const line of await benchJobs()) console.log(line);
for (const line of await benchSettlement()) console.log(line); // issue #8 (meter)
for (const line of await benchInstances(DURATION)) console.log(line); // orders and instances
for (const line of await benchCompute()) console.log(line);
for (const line of await benchShell()) console.log(line); // issue #8 (ssh)
for (const line of await benchLlmGateway(DURATION)) console.log(line); // Issue #9 (gateway)
for (const line of await benchInstanceOps()) console.log(line); // Issue #10 (driver)
