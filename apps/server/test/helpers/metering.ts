import crypto from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { InstanceStatus } from '@suanli/contract/instance';
import { images, instances, machines } from '../../src/db/schema/compute.ts';
import { bills, instanceMeters } from '../../src/db/schema/metering.ts';
import { wallets } from '../../src/db/schema/wallet.ts';
import type { Db } from '../../src/db/client.ts';
import type { TestApp } from './app.ts';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
export const newInstanceId = () => `i-${Array.from({ length: 10 }, () => ALPHABET[crypto.randomInt(ALPHABET.length)]).join('')}`;

/** A ready image row to point instances at (the image module's rows are the driver helper's). */
export async function ensureTestImage(db: Db): Promise<number> {
  await db.insert(images).values({ slug: 'test-meter-image', name: '测试镜像', status: 'ready', rootPath: '/nonexistent' }).onConflictDoNothing();
  const [img] = await db.select({ id: images.id }).from(images).where(eq(images.slug, 'test-meter-image'));
  if (!img) throw new Error('factory: no image');
  return img.id;
}

/** The first seeded machine of a tenant. */
export async function anyMachine(db: Db, tenantId: number): Promise<number> {
  const [m] = await db.select({ id: machines.id }).from(machines).where(eq(machines.tenantId, tenantId)).limit(1);
  if (!m) throw new Error('factory: no machine');
  return m.id;
}

export type InstanceFactoryInput = {
  tenantId: number;
  userId: number;
  chargeType?: 'payg' | 'prepaid';
  status?: InstanceStatus;
  hourly?: number;
  expiresAt?: Date | null;
  releaseAt?: Date | null;
  name?: string;
};

/**
 * An instance row inserted directly (the instance service is the orders helper's): what metering
 * reads of it is its id, owner, charge type, status, hourly price, expiry and release time.
 */
export async function insertInstance(t: TestApp, v: InstanceFactoryInput): Promise<{ id: string; tenantId: number; userId: number; chargeType: 'payg' | 'prepaid'; hourly: number }> {
  const db = t.container.db;
  const id = newInstanceId();
  const chargeType = v.chargeType ?? 'payg';
  const hourly = v.hourly ?? 36_000;
  await db.insert(instances).values({
    id,
    tenantId: v.tenantId,
    userId: v.userId,
    machineId: await anyMachine(db, v.tenantId),
    name: v.name ?? `实例-${id.slice(2, 6)}`,
    status: v.status ?? 'running',
    chargeType,
    period: chargeType === 'prepaid' ? 'month' : null,
    gpuCount: 1,
    cpuCores: 1,
    memoryGb: 1,
    systemDiskGb: 30,
    dataDiskGb: 50,
    imageId: await ensureTestImage(db),
    hourly: chargeType === 'payg' ? hourly : 0,
    passwordSealed: 'sealed',
    passwordHash: 'hash',
    expiresAt: v.expiresAt ?? null,
    releaseAt: v.releaseAt ?? null,
  });
  return { id, tenantId: v.tenantId, userId: v.userId, chargeType, hourly: chargeType === 'payg' ? hourly : 0 };
}

/** Credits a user's balance the real way (a ledger posting). */
export async function recharge(t: TestApp, user: { id: number; tenantId: number }, amount: number): Promise<void> {
  await t.container.ledger.post({ tenantId: user.tenantId, userId: user.id, kind: 'recharge', amount, ref: `test:${crypto.randomUUID()}` });
}

export async function balanceOf(db: Db, userId: number): Promise<number> {
  const [w] = await db.select({ balance: wallets.balance }).from(wallets).where(eq(wallets.userId, userId));
  return Number(w?.balance ?? NaN);
}

/** Sum of a user's payg_charge entries (negative), from the ledger itself. */
export async function paygCharged(db: Db, userId: number): Promise<number> {
  const rows = (await db.execute(sql`select coalesce(sum(amount), 0) as s from ledger_entries where user_id = ${userId} and kind = 'payg_charge'`)) as unknown as { rows: { s: string | number }[] };
  return -Number(rows.rows[0]?.s ?? 0) || 0;
}

export async function billsOf(db: Db, instanceId: string) {
  return db.select().from(bills).where(eq(bills.instanceId, instanceId)).orderBy(bills.periodStart);
}

export async function meterOf(db: Db, instanceId: string) {
  const [m] = await db.select().from(instanceMeters).where(and(eq(instanceMeters.instanceId, instanceId)));
  return m;
}

/** Marks the instance running and tells metering, in one transaction (as the instance service does). */
export async function startMeter(t: TestApp, inst: { id: string; tenantId: number; userId: number; chargeType: 'payg' | 'prepaid'; hourly: number }, at: Date): Promise<void> {
  await t.container.db.transaction(async (tx) => {
    await tx.update(instances).set({ status: 'running', startedAt: at }).where(eq(instances.id, inst.id));
    await t.container.metering.started(tx, inst, at);
  });
}

export async function stopMeter(t: TestApp, id: string, at: Date): Promise<void> {
  await t.container.db.transaction(async (tx) => {
    await tx.update(instances).set({ status: 'stopped', stoppedAt: at }).where(eq(instances.id, id));
    await t.container.metering.stopped(tx, id, at);
  });
}
