import { and, asc, count, desc, eq, gte, ilike, inArray, isNull, lte, ne, or, sql, sum } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { dataCopies, gpuTypes, images, instances, machines, orders } from '../../db/schema/compute.ts';
import { datacenters } from '../../db/schema/datahub.ts';
import { sshKeys } from '../../db/schema/ssh-key.ts';
import { wallets } from '../../db/schema/wallet.ts';
import { jobs } from '../../db/schema/job.ts';
import type { ChargeType } from '@suanli/contract/order';
import type { InstanceStatus } from '@suanli/contract/instance';

export type InstanceRow = typeof instances.$inferSelect;
export type InstanceView = InstanceRow & { hostName: string; datacenterName: string; gpuTypeName: string; demo: boolean; imageName: string };
export type InstanceFilter = { status?: InstanceStatus; chargeType?: ChargeType; keyword?: string; includeReleased: boolean };

const viewColumns = {
  inst: instances,
  hostName: machines.hostName,
  datacenterName: datacenters.name,
  gpuTypeName: gpuTypes.name,
  demo: machines.demo,
  imageName: images.name,
};
type Joined = { inst: InstanceRow; hostName: string; datacenterName: string; gpuTypeName: string; demo: boolean; imageName: string };
const flatten = (r: Joined): InstanceView => ({ ...r.inst, hostName: r.hostName, datacenterName: r.datacenterName, gpuTypeName: r.gpuTypeName, demo: r.demo, imageName: r.imageName });

/** LIKE pattern of a user's words, with % and _ taken literally. */
const likeOf = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function createInstanceRepository(db: DbOrTx) {
  const viewQuery = () =>
    db
      .select(viewColumns)
      .from(instances)
      .innerJoin(machines, eq(machines.id, instances.machineId))
      .innerJoin(datacenters, eq(datacenters.id, machines.datacenterId))
      .innerJoin(gpuTypes, eq(gpuTypes.id, machines.gpuTypeId))
      .innerJoin(images, eq(images.id, instances.imageId));

  return {
    /**
     * Issue #10: what holds an instance's disks from outside it now — a clone being provisioned
     * from it, a data copy queued or running from or to it, an image being saved from it (ids).
     */
    async diskHolders(instanceId: string): Promise<{ cloneId?: string; copyId?: string; imageId?: number }> {
      const [clone, copy, image] = await Promise.all([
        db.select({ id: instances.id }).from(instances).where(and(eq(instances.cloneSourceId, instanceId), eq(instances.status, 'creating'))).limit(1),
        db
          .select({ id: dataCopies.id })
          .from(dataCopies)
          .where(and(or(eq(dataCopies.sourceInstanceId, instanceId), eq(dataCopies.targetInstanceId, instanceId)), inArray(dataCopies.status, ['queued', 'running'])))
          .limit(1),
        db
          .select({ id: images.id })
          .from(images)
          .where(and(eq(images.sourceInstanceId, instanceId), eq(images.status, 'building'), isNull(images.deletedAt)))
          .limit(1),
      ]);
      return { cloneId: clone[0]?.id, copyId: copy[0]?.id, imageId: image[0]?.id };
    },
    async insert(values: typeof instances.$inferInsert): Promise<InstanceRow> {
      const [row] = await db.insert(instances).values(values).returning();
      if (!row) throw new Error('instance insert returned nothing');
      return row;
    },
    async find(id: string): Promise<InstanceRow | undefined> {
      const rows = await db.select().from(instances).where(eq(instances.id, id)).limit(1);
      return rows[0];
    },
    async findView(id: string): Promise<InstanceView | undefined> {
      const rows = await viewQuery().where(eq(instances.id, id)).limit(1);
      return rows[0] && flatten(rows[0]);
    },
    /** Locks the instance row: every status change happens under it. */
    async lock(id: string): Promise<InstanceRow | undefined> {
      const rows = await db.select().from(instances).where(eq(instances.id, id)).limit(1).for('update');
      return rows[0];
    },
    async update(id: string, values: Partial<typeof instances.$inferInsert>): Promise<void> {
      await db.update(instances).set(values).where(eq(instances.id, id));
    },
    async page(userId: number, f: InstanceFilter, page: number, pageSize: number): Promise<{ list: InstanceView[]; total: number }> {
      const where = and(
        eq(instances.userId, userId),
        f.status ? eq(instances.status, f.status) : f.includeReleased ? undefined : ne(instances.status, 'released'),
        f.chargeType ? eq(instances.chargeType, f.chargeType) : undefined,
        f.keyword ? or(ilike(instances.name, likeOf(f.keyword)), ilike(instances.id, likeOf(f.keyword))) : undefined,
      );
      // One round trip: the page and, beside each row, the total (a window count). Only a page past
      // the end needs a second query for the total.
      const rows = await db
        .select({ ...viewColumns, total: sql<string>`count(*) over ()` })
        .from(instances)
        .innerJoin(machines, eq(machines.id, instances.machineId))
        .innerJoin(datacenters, eq(datacenters.id, machines.datacenterId))
        .innerJoin(gpuTypes, eq(gpuTypes.id, machines.gpuTypeId))
        .innerJoin(images, eq(images.id, instances.imageId))
        .where(where)
        .orderBy(desc(instances.createdAt), desc(instances.id))
        .limit(pageSize)
        .offset((page - 1) * pageSize);
      const total = rows[0] ? Number(rows[0].total) : page > 1 ? Number((await db.select({ n: count() }).from(instances).where(where))[0]?.n ?? 0) : 0;
      return { list: rows.map(flatten), total };
    },
    async countByStatus(userId: number): Promise<Map<InstanceStatus, number>> {
      const rows = await db.select({ status: instances.status, n: count() }).from(instances).where(eq(instances.userId, userId)).groupBy(instances.status);
      return new Map(rows.map((r) => [r.status, Number(r.n)]));
    },
    async expiringCount(userId: number, now: Date, until: Date): Promise<number> {
      const rows = await db
        .select({ n: count() })
        .from(instances)
        .where(and(eq(instances.userId, userId), eq(instances.chargeType, 'prepaid'), ne(instances.status, 'released'), gte(instances.expiresAt, now), lte(instances.expiresAt, until)));
      return Number(rows[0]?.n ?? 0);
    },
    async storage(userId: number): Promise<{ dataDiskGb: number; systemDiskGb: number; instances: number }> {
      const rows = await db
        .select({ data: sum(instances.dataDiskGb), system: sum(instances.systemDiskGb), n: count() })
        .from(instances)
        .where(and(eq(instances.userId, userId), inArray(instances.status, ['creating', 'starting', 'running', 'stopping', 'stopped', 'releasing'])));
      const r = rows[0];
      return { dataDiskGb: Number(r?.data ?? 0), systemDiskGb: Number(r?.system ?? 0), instances: Number(r?.n ?? 0) };
    },
    /**
     * Takes `n` GPUs of an online machine in one conditional statement: of concurrent takers for
     * the last GPUs, only those the count still allows get a row back.
     */
    async reserveGpus(machineId: number, n: number): Promise<boolean> {
      const rows = await db
        .update(machines)
        .set({ gpuUsed: sql`${machines.gpuUsed} + ${n}` })
        .where(and(eq(machines.id, machineId), eq(machines.online, true), sql`${machines.gpuTotal} - ${machines.gpuUsed} >= ${n}`))
        .returning({ id: machines.id });
      return rows.length === 1;
    },
    async freeGpus(machineId: number, n: number): Promise<void> {
      await db
        .update(machines)
        .set({ gpuUsed: sql`greatest(${machines.gpuUsed} - ${n}, 0)` })
        .where(eq(machines.id, machineId));
    },
    async machine(id: number) {
      const rows = await db.select().from(machines).where(eq(machines.id, id)).limit(1);
      return rows[0];
    },
    async image(id: number) {
      const rows = await db.select().from(images).where(eq(images.id, id)).limit(1);
      return rows[0];
    },
    /** What an order took from the balance (0 for pay-as-you-go). */
    async orderAmount(orderId: string): Promise<number> {
      const rows = await db.select({ amount: orders.amount, status: orders.status }).from(orders).where(eq(orders.id, orderId)).limit(1);
      return rows[0]?.status === 'paid' ? Number(rows[0].amount) : 0;
    },
    async balanceOf(userId: number): Promise<number> {
      const rows = await db.select({ balance: wallets.balance }).from(wallets).where(eq(wallets.userId, userId)).limit(1);
      return Number(rows[0]?.balance ?? 0);
    },
    async publicKeysOf(userId: number): Promise<string[]> {
      const rows = await db.select({ key: sshKeys.publicKey }).from(sshKeys).where(eq(sshKeys.userId, userId)).orderBy(asc(sshKeys.id));
      return rows.map((r) => r.key);
    },
    /**
     * Issue #10 (user_left_migrate): a user's instances whose disks still exist — stopped, running,
     * or failed after having run (a failed provisioning has none) — with their machine's state.
     */
    async withDisks(userId: number) {
      return db
        .select({
          id: instances.id,
          tenantId: instances.tenantId,
          name: instances.name,
          status: instances.status,
          machineId: instances.machineId,
          hostName: machines.hostName,
          machineOnline: machines.online,
          dataDiskGb: instances.dataDiskGb,
          createdAt: instances.createdAt,
        })
        .from(instances)
        .innerJoin(machines, eq(machines.id, instances.machineId))
        .where(
          and(
            eq(instances.userId, userId),
            or(inArray(instances.status, ['stopped', 'running']), and(eq(instances.status, 'failed'), sql`${instances.startedAt} is not null`)),
          ),
        )
        .orderBy(desc(instances.createdAt), desc(instances.id));
    },
    /** Issue #10 (disk usage): a user's instances not released, newest first. */
    async notReleased(userId: number): Promise<InstanceRow[]> {
      return db
        .select()
        .from(instances)
        .where(and(eq(instances.userId, userId), ne(instances.status, 'released')))
        .orderBy(desc(instances.createdAt), desc(instances.id));
    },
    /** Instances in a state a job should move on from, or that should be running (start-up recovery). */
    async unsettled(): Promise<InstanceRow[]> {
      return db
        .select()
        .from(instances)
        .where(inArray(instances.status, ['creating', 'starting', 'running', 'stopping', 'releasing']));
    },
    /** Instance ids with an instance job still queued or running (start-up recovery leaves those to the queue). */
    async withPendingJobs(): Promise<Set<string>> {
      const rows = await db
        .select({ id: sql<string>`${jobs.payload} ->> 'instanceId'` })
        .from(jobs)
        .where(and(inArray(jobs.status, ['queued', 'running']), sql`${jobs.kind} like 'instance.%'`));
      return new Set(rows.map((r) => r.id));
    },
  };
}
export type InstanceRepository = ReturnType<typeof createInstanceRepository>;
