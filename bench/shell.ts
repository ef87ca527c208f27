/**
 * Web shell keystroke echo over loopback (BENCH_ONLY=shell): the real app on a loopback port, a
 * ticket from POST /api/v1/instance/shell_ticket, a WebSocket on /api/v1/ws/shell, then single
 * characters typed one at a time, each timed until its echo comes back as a binary frame.
 *
 * The terminal is the container's: a real instance on the `local` driver, paid for through the
 * order service (`localInstance`). BENCH_SHELL_FAKE=1 uses the test fake instead (bash on a host
 * pty), to measure the web shell path without the sandbox entry.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { and, eq, sql } from 'drizzle-orm';
import { loadConfig } from '../apps/server/src/config.ts';
import { createContainer, type Container, type ContainerOverrides } from '../apps/server/src/container.ts';
import { buildApp } from '../apps/server/src/app.ts';
import { seedDemo } from '../apps/server/src/db/seed.ts';
import { tenants } from '../apps/server/src/db/schema/tenant.ts';
import { users } from '../apps/server/src/db/schema/user.ts';
import { images, machines } from '../apps/server/src/db/schema/compute.ts';

export type ShellBenchInstance = { instanceId: string; label: string; cleanup?: () => Promise<void> | void };
/** Makes a running instance owned by the user (the lead wires the instance service's path here). */
export type ShellBenchPrepare = (container: Container, owner: { tenantId: number; userId: number }) => Promise<ShellBenchInstance>;

/**
 * The default: a real pay-as-you-go instance on the container's compute driver (`local`: a
 * bubblewrap sandbox, needs root), bought and paid through the order service like a user does.
 */
const localInstance: ShellBenchPrepare = async (container, owner) => {
  const availability = await container.compute.availability();
  if (!availability.ok) throw new Error(`bench/shell.ts: compute driver unavailable: ${availability.reason}`);
  await container.images.ensureSeeded();
  await container.ledger.post({ ...owner, kind: 'recharge', amount: 1_000 * 10_000, ref: 'bench:shell' });
  const [machine] = await container.db
    .select()
    .from(machines)
    .where(and(eq(machines.tenantId, owner.tenantId), eq(machines.online, true), sql`${machines.gpuTotal} - ${machines.gpuUsed} >= 1`))
    .limit(1);
  const [image] = await container.db.select().from(images).where(eq(images.status, 'ready')).limit(1);
  if (!machine || !image) throw new Error('bench/shell.ts: no free machine or ready image');
  const order = await container.orders.createPayg(owner, { machineId: machine.id, gpuCount: 1, imageId: image.id, name: 'bench-shell' });
  const paid = await container.orders.pay(owner, order.id);
  const id = paid.instanceId!;
  const jobs = container.startJobs({ info: () => {}, error: () => {}, warn: () => {} });
  const started = Date.now();
  for (;;) {
    const inst = await container.instances.get(owner, id);
    if (inst.status === 'running') break;
    if (inst.status === 'failed' || Date.now() - started > 60_000) throw new Error(`bench/shell.ts: instance ${id} is ${inst.status}: ${inst.statusReason}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    instanceId: id,
    label: `${container.compute.name} driver sandbox`,
    cleanup: async () => {
      await container.compute.destroy(id).catch(() => {});
      await jobs.stop();
    },
  };
};

const KEYSTROKES = Number(process.env.BENCH_SHELL_KEYS ?? 500);
const AIM_P99_MS = 10;

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

export async function benchShell(opts: { prepare?: ShellBenchPrepare } = {}): Promise<string[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-bench-shell-'));
  let fakeClose: (() => void) | undefined;
  const overrides: ContainerOverrides = {};
  let prepare = opts.prepare;
  let note = '';
  if (!prepare && !process.env.BENCH_SHELL_FAKE) prepare = localInstance;
  if (!prepare) {
    // BENCH_SHELL_FAKE=1: the web shell path alone, over the test fake (bash on a host pty, no sandbox).
    const { createFakeSshAccess } = await import('../apps/server/test/fakes/ssh-access.ts');
    const fake = createFakeSshAccess();
    fakeClose = fake.close;
    overrides.instanceAccess = fake.access;
    note = ' [BENCH_SHELL_FAKE: test fake InstanceAccess, bash on a host pty, no sandbox]';
    prepare = async (_c, owner) => ({ instanceId: fake.add({ ...owner }).id, label: 'fake' });
  }

  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', CAPTCHA: 'off', RATE_LIMIT: 'off', ...(process.env.BENCH_DATABASE_URL ? { DATABASE_URL: process.env.BENCH_DATABASE_URL } : {}) });
  const container = await createContainer(config, overrides);
  await seedDemo(container.db, () => {});
  const app = await buildApp(container);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  let inst: ShellBenchInstance | undefined;
  let ws: WebSocket | undefined;
  try {
    const [tenant] = await container.db.select().from(tenants).where(eq(tenants.code, 'demo'));
    if (!tenant) throw new Error('no demo tenant');
    const phone = '13787654321';
    await container.accounts.sendCode(tenant.id, { phone, purpose: 'register' });
    const code = container.smsInbox?.().find((m) => m.phone === phone)?.code;
    if (!code) throw new Error('no code');
    const { token } = await container.accounts.register(tenant.id, { phone, code, password: 'Bench2026pw' }, { ip: '127.0.0.1', userAgent: 'bench' });
    const [user] = await container.db.select().from(users).where(and(eq(users.tenantId, tenant.id), eq(users.phone, phone)));
    if (!user) throw new Error('bench user missing');
    inst = await prepare(container, { tenantId: tenant.id, userId: user.id });

    // `localhost`: the demo tenant's host (fetch can't set Host itself).
    const res = await fetch(`http://localhost:${port}/api/v1/instance/shell_ticket`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ instanceId: inst.instanceId }),
    });
    const ticket = ((await res.json()) as { data?: { url: string }; msg?: string }).data;
    if (!ticket) throw new Error(`shell ticket refused: HTTP ${res.status}`);

    ws = new WebSocket(`ws://127.0.0.1:${port}${ticket.url}`, { headers: { host: `localhost:${port}`, origin: `http://localhost:${port}` } });
    const socket = ws;
    let output = '';
    let onOutput: (() => void) | undefined;
    let ready!: () => void;
    const isReady = new Promise<void>((r) => (ready = r));
    socket.on('message', (data, binary) => {
      if (!binary) {
        if ((JSON.parse(data.toString()) as { type: string }).type === 'ready') ready();
        return;
      }
      output += data.toString();
      onOutput?.();
    });
    await isReady;
    const send = (data: string) => socket.send(JSON.stringify({ type: 'input', data }));
    const waitFor = (pred: () => boolean, ms = 5_000) =>
      new Promise<void>((resolve, reject) => {
        if (pred()) return resolve();
        const timer = setTimeout(() => reject(new Error(`no echo within ${ms} ms`)), ms);
        onOutput = () => {
          if (pred()) {
            clearTimeout(timer);
            onOutput = undefined;
            resolve();
          }
        };
      });
    // Let the prompt settle.
    send('\r');
    await new Promise((r) => setTimeout(r, 500));

    const samples: number[] = [];
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    for (let i = 0; i < KEYSTROKES + 20; i++) {
      if (i % 40 === 39) {
        send('\x15'); // Ctrl-U: clear the line now and then
        await new Promise((r) => setTimeout(r, 20));
      }
      const ch = letters[i % letters.length]!;
      output = '';
      const t0 = performance.now();
      send(ch);
      await waitFor(() => output.includes(ch));
      if (i >= 20) samples.push(performance.now() - t0); // the first 20 warm up
    }
    send('\x15');
    samples.sort((a, b) => a - b);
    const p50 = quantile(samples, 0.5);
    const p99 = quantile(samples, 0.99);
    return [
      `[bench] web shell keystroke echo over loopback (${inst.label}, ${container.database.engine}, ${samples.length} keys): p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms (aim ≤ ${AIM_P99_MS} ms: ${p99 <= AIM_P99_MS ? 'within the aim' : 'over the aim'})${note}`,
    ];
  } finally {
    ws?.close();
    await inst?.cleanup?.();
    await app.close();
    await container.close();
    fakeClose?.();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
