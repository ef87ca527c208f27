import { eq } from 'drizzle-orm';
import type { Tx } from '../../src/db/client.ts';
import { gpuTypes, images, machines } from '../../src/db/schema/compute.ts';
import { datacenters } from '../../src/db/schema/datahub.ts';
import type { MeterHooks, MeteredInstance } from '../../src/modules/metering/meter-hooks.ts';
import type { TestApp } from '../helpers/app.ts';

/**
 * Metering's half as the instance module sees it (MeterHooks), recording each call. `inTx` records
 * that a transaction was passed; the calls happen inside the status-changing transaction.
 */
export function createFakeMeter() {
  const calls: ({ op: 'started'; instance: MeteredInstance; at: Date } | { op: 'stopped'; id: string; at: Date } | { op: 'prepaidPaid'; bill: Parameters<MeterHooks['prepaidPaid']>[1] })[] = [];
  const meter: MeterHooks = {
    async started(tx: Tx, instance, at) {
      if (!tx) throw new Error('started without a transaction');
      calls.push({ op: 'started', instance, at });
    },
    async stopped(tx: Tx, id, at) {
      if (!tx) throw new Error('stopped without a transaction');
      calls.push({ op: 'stopped', id, at });
    },
    async prepaidPaid(tx: Tx, bill) {
      if (!tx) throw new Error('prepaidPaid without a transaction');
      calls.push({ op: 'prepaidPaid', bill });
    },
  };
  return Object.assign(meter, { calls });
}
export type FakeMeter = ReturnType<typeof createFakeMeter>;

let seq = 0;
/**
 * Inventory for order tests, written as the inventory module would: a GPU type, a machine in the
 * tenant's first datacenter and a ready image. Prices in units: ¥3.60/h per GPU, ¥80/day, ¥500/week,
 * ¥1,800/month, ¥18,000/year; data disk ¥0.01/GB/day beyond 50 GB, up to 200 GB.
 */
export async function createInventory(t: TestApp, opts: { host?: string; gpuTotal?: number; gpuUsed?: number; online?: boolean; imageStatus?: 'ready' | 'building' | 'failed'; imageTenantId?: number | null } = {}) {
  const tenant = await t.container.tenants.resolve(opts.host ?? 'localhost');
  const db = t.container.db;
  const [dc] = await db.select().from(datacenters).where(eq(datacenters.tenantId, tenant.id)).limit(1);
  if (!dc) throw new Error('no seeded datacenter');
  seq++;
  const tag = `${process.pid}-${seq}-${Math.random().toString(36).slice(2, 6)}`;
  const [gpu] = await db.insert(gpuTypes).values({ tenantId: tenant.id, name: `RTX 4090 ${tag}`, memoryGb: 24 }).returning();
  const [machine] = await db
    .insert(machines)
    .values({
      tenantId: tenant.id,
      datacenterId: dc.id,
      hostName: `node-${tag}`,
      gpuTypeId: gpu!.id,
      gpuTotal: opts.gpuTotal ?? 8,
      gpuUsed: opts.gpuUsed ?? 0,
      cpuPerGpu: 2,
      memoryGbPerGpu: 4,
      systemDiskGb: 30,
      dataDiskFreeGb: 50,
      dataDiskMaxGb: 200,
      dataDiskPricePerGbDay: 100,
      priceHour: 36_000,
      priceDay: 800_000,
      priceWeek: 5_000_000,
      priceMonth: 18_000_000,
      priceYear: 180_000_000,
      online: opts.online ?? true,
      demo: true,
    })
    .returning();
  const [image] = await db
    .insert(images)
    .values({
      tenantId: opts.imageTenantId === undefined ? null : opts.imageTenantId,
      slug: `test-${tag}`,
      name: `测试镜像 ${tag}`,
      os: 'Debian 12',
      contents: ['bash'],
      status: opts.imageStatus ?? 'ready',
      progress: 100,
      rootPath: (opts.imageStatus ?? 'ready') === 'ready' ? '/nonexistent/test-root' : null,
    })
    .returning();
  return { tenant, datacenter: dc, gpuType: gpu!, machine: machine!, image: image! };
}
