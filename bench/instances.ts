/**
 * Instances (issue #8): pay → running time through the container's compute driver, and
 * `GET /api/v1/instance/list` throughput against a bare Fastify route (aim ≥ 0.8, as for every
 * authenticated read).
 *
 * `benchInstances()` starts this same file as a child process with `--target` (the load generator
 * must not share the app's event loop): the real app with its job loop, a user with a balance,
 * a machine and a ready image, and 20 instances made by paying orders, timed one by one. The
 * child prints one JSON line; the parent then runs autocannon against both routes.
 *
 * The compute driver is the container's own: the `local` driver, as `npm start` runs it (needs root).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const INSTANCES = 20;
const PAY_AIM_MS = 3_000;
const RATIO_AIM = 0.8;

type TargetInfo = { appPort: number; barePort: number; token: string; engine: string; driver: string; payToRunningMs: number[] };

async function runTarget(): Promise<void> {
  const { eq } = await import('drizzle-orm');
  const Fastify = (await import('fastify')).default;
  const { loadConfig } = await import('../apps/server/src/config.ts');
  const { createContainer } = await import('../apps/server/src/container.ts');
  const { buildApp } = await import('../apps/server/src/app.ts');
  const { seedDemo } = await import('../apps/server/src/db/seed.ts');
  const { tenants } = await import('../apps/server/src/db/schema/tenant.ts');
  const { datacenters } = await import('../apps/server/src/db/schema/datahub.ts');
  const { gpuTypes, images, instances, machines } = await import('../apps/server/src/db/schema/compute.ts');

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-bench-inst-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', CAPTCHA: 'off', RATE_LIMIT: 'off', ...(process.env.BENCH_DATABASE_URL ? { DATABASE_URL: process.env.BENCH_DATABASE_URL } : {}) });
  const container = await createContainer(config);
  await seedDemo(container.db, () => {});
  const app = await buildApp(container);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const silent = { info: () => {}, error: () => {}, warn: () => {} };
  const jobs = container.startJobs(silent);

  const [tenant] = await container.db.select().from(tenants).where(eq(tenants.code, 'demo'));
  if (!tenant) throw new Error('no demo tenant');
  const phone = '13712345679';
  await container.accounts.sendCode(tenant.id, { phone, purpose: 'register' });
  const code = (container.smsInbox?.() ?? []).find((m) => m.phone === phone)?.code;
  if (!code) throw new Error('no code');
  const { token } = await container.accounts.register(tenant.id, { phone, code, password: 'Bench2026pw' }, { ip: '127.0.0.1', userAgent: 'bench' });
  const userId = (await container.accounts.authenticate(tenant.id, token)).user.id;
  await container.ledger.post({ tenantId: tenant.id, userId, kind: 'recharge', amount: 100_000 * 10_000, ref: 'bench:instances' });

  // A machine with room for every instance, and a ready image (the seeded one when the image module made one).
  const [dc] = await container.db.select().from(datacenters).where(eq(datacenters.tenantId, tenant.id)).limit(1);
  if (!dc) throw new Error('no datacenter');
  const [gpu] = await container.db.insert(gpuTypes).values({ tenantId: tenant.id, name: 'Bench GPU', memoryGb: 24 }).returning();
  const [machine] = await container.db
    .insert(machines)
    .values({ tenantId: tenant.id, datacenterId: dc.id, hostName: 'bench-node', gpuTypeId: gpu!.id, gpuTotal: 1000, cpuPerGpu: 1, memoryGbPerGpu: 1, dataDiskFreeGb: 1, dataDiskMaxGb: 10, priceHour: 36_000, priceDay: 800_000, priceWeek: 5_000_000, priceMonth: 18_000_000, priceYear: 180_000_000, demo: true })
    .returning();
  // The host-based image, as `npm start` seeds it: a real root filesystem for the driver.
  const availability = await container.compute.availability();
  if (!availability.ok) throw new Error(`compute driver ${container.compute.name} unavailable: ${availability.reason}`);
  await container.images.ensureSeeded();
  const [image] = await container.db.select().from(images).where(eq(images.status, 'ready')).limit(1);
  if (!image) throw new Error('no ready image after ensureSeeded()');

  const base = `http://localhost:${(app.server.address() as { port: number }).port}`; // Host picks the demo tenant
  const call = async (method: string, url: string, body?: object) => {
    const res = await fetch(`${base}${url}`, { method, headers: { host: 'localhost', authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
    const json = (await res.json()) as { code: number; msg: string; data: Record<string, unknown> };
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${json.msg}`);
    return json.data;
  };
  const payToRunningMs: number[] = [];
  for (let i = 0; i < INSTANCES; i++) {
    const order = await call('POST', '/api/v1/order/payg', { machineId: machine!.id, gpuCount: 1, imageId: image!.id, name: `bench-${i}` });
    const started = performance.now();
    const paid = await call('POST', '/api/v1/order/pay', { orderId: order.id });
    const id = String(paid.instanceId);
    for (;;) {
      const [row] = await container.db.select({ status: instances.status, reason: instances.statusReason }).from(instances).where(eq(instances.id, id));
      if (row?.status === 'running') break;
      if (row?.status === 'failed') throw new Error(`instance ${id} failed: ${row.reason}`);
      if (performance.now() - started > 60_000) throw new Error(`instance ${id} not running after 60 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
    payToRunningMs.push(performance.now() - started);
  }

  // The bare route answers the very body the list gives (its 20 instances), so the ratio is what
  // the product adds on top of Fastify — session, tenant, validation, query, presenting — and not the
  // cost of sending a bigger answer than user/detail's.
  const listBody = await (await fetch(`${base}/api/v1/instance/list`, { headers: { host: 'localhost', authorization: `Bearer ${token}` } })).json();
  const bare = Fastify({ logger: false });
  bare.get('/bare', async () => listBody);
  await bare.listen({ port: 0, host: '127.0.0.1' });
  const portOf = (s: { address(): unknown }) => (s.address() as { port: number }).port;
  const info: TargetInfo = { appPort: portOf(app.server), barePort: portOf(bare.server), token, engine: container.database.engine, driver: container.compute.name, payToRunningMs };
  console.log(JSON.stringify(info));

  process.on('SIGTERM', async () => {
    await bare.close();
    await app.close();
    await jobs.stop();
    // Release what the driver made, so a real driver leaves no sandboxes behind.
    for (const id of await container.compute.list()) await container.compute.destroy(id).catch(() => {});
    await container.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  });
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
};

export async function benchInstances(seconds: number): Promise<string[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'instances.ts'), '--target'], { cwd: root, env: process.env, stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.on('line', (l) => l.startsWith('{') && resolve(l));
    child.once('exit', (c) => reject(new Error(`instances bench target exited with ${c}`)));
  });
  const t = JSON.parse(line) as TargetInfo;
  const lines: string[] = [];
  try {
    const p50 = quantile(t.payToRunningMs, 0.5);
    const max = Math.max(...t.payToRunningMs);

    lines.push(
      `[bench] pay → running (${t.driver} driver, ${t.engine}, ${t.payToRunningMs.length} instances one by one): median ${p50.toFixed(0)} ms, max ${max.toFixed(0)} ms (aim ≤ ${PAY_AIM_MS} ms: ${max <= PAY_AIM_MS ? 'within the aim' : 'over the aim'})`,
    );
    const rps = async (url: string, headers: Record<string, string> = {}) => {
      const r = await autocannon({ url, connections: 32, duration: seconds, headers });
      if (r.non2xx > 0) throw new Error(`${url}: ${r.non2xx} non-2xx answers`);
      return r.requests.average;
    };
    const headers = { host: 'localhost', authorization: `Bearer ${t.token}` };
    const listUrl = `http://127.0.0.1:${t.appPort}/api/v1/instance/list?page=1&pageSize=${INSTANCES}`;
    await rps(listUrl, headers); // warm-up
    const list = await rps(listUrl, headers);
    const bare = await rps(`http://127.0.0.1:${t.barePort}/bare`);
    const ratio = list / bare;
    lines.push(
      `[bench] GET /api/v1/instance/list (${INSTANCES} instances, ${t.engine}): ${list.toFixed(0)} req/s; bare Fastify route with the same body: ${bare.toFixed(0)} req/s; ratio ${ratio.toFixed(2)} (aim ≥ ${RATIO_AIM}: ${ratio >= RATIO_AIM ? 'within the aim' : 'below the aim'})`,
    );
  } finally {
    child.kill('SIGTERM');
  }
  return lines;
}

if (process.argv.includes('--target')) await runTarget();
