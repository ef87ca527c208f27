import { and, count, desc, eq, inArray, or, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../../db/client.ts';
import { dataCopies, instances } from '../../db/schema/compute.ts';
import { jobs } from '../../db/schema/job.ts';
import type { CopyProgress } from '../../adapters/compute/port.ts';

export type DataCopyRow = typeof dataCopies.$inferSelect;
export type DataCopyView = DataCopyRow & { sourceInstanceName: string; targetInstanceName: string };
export type CopyJobRow = { id: number; copyId: string; status: 'queued' | 'running' | 'done' | 'failed'; attempts: number; lockedAt: Date | null };

const src = alias(instances, 'copy_src');
const dst = alias(instances, 'copy_dst');
const ACTIVE = ['queued', 'running'] as const;

/** Issue #10: data_copies rows (data-copy.service.ts) and the jobs that run them. */
export function createDataCopyRepository(db: DbOrTx) {
  const viewQuery = () =>
    db
      .select({ copy: dataCopies, sourceInstanceName: src.name, targetInstanceName: dst.name })
      .from(dataCopies)
      .innerJoin(src, eq(src.id, dataCopies.sourceInstanceId))
      .innerJoin(dst, eq(dst.id, dataCopies.targetInstanceId));
  const flatten = (r: { copy: DataCopyRow; sourceInstanceName: string; targetInstanceName: string }): DataCopyView => ({ ...r.copy, sourceInstanceName: r.sourceInstanceName, targetInstanceName: r.targetInstanceName });

  return {
    async insert(values: typeof dataCopies.$inferInsert): Promise<void> {
      await db.insert(dataCopies).values(values);
    },
    async find(id: string): Promise<DataCopyRow | undefined> {
      return (await db.select().from(dataCopies).where(eq(dataCopies.id, id)).limit(1))[0];
    },
    async lock(id: string): Promise<DataCopyRow | undefined> {
      return (await db.select().from(dataCopies).where(eq(dataCopies.id, id)).limit(1).for('update'))[0];
    },
    async findView(id: string): Promise<DataCopyView | undefined> {
      const rows = await viewQuery().where(eq(dataCopies.id, id)).limit(1);
      return rows[0] && flatten(rows[0]);
    },
    /** A user's copies, newest first; only those touching `instanceId` when given. */
    async listViews(userId: number, instanceId: string | undefined, limit: number): Promise<DataCopyView[]> {
      const rows = await viewQuery()
        .where(and(eq(dataCopies.userId, userId), instanceId ? or(eq(dataCopies.sourceInstanceId, instanceId), eq(dataCopies.targetInstanceId, instanceId)) : undefined))
        .orderBy(desc(dataCopies.createdAt), desc(dataCopies.id))
        .limit(limit);
      return rows.map(flatten);
    },
    async countActive(userId: number): Promise<number> {
      const rows = await db
        .select({ n: count() })
        .from(dataCopies)
        .where(and(eq(dataCopies.userId, userId), inArray(dataCopies.status, ACTIVE)));
      return Number(rows[0]?.n ?? 0);
    },
    /** Copies queued or running from or to an instance. */
    async countActiveFor(instanceId: string): Promise<number> {
      const rows = await db
        .select({ n: count() })
        .from(dataCopies)
        .where(and(or(eq(dataCopies.sourceInstanceId, instanceId), eq(dataCopies.targetInstanceId, instanceId)), inArray(dataCopies.status, ACTIVE)));
      return Number(rows[0]?.n ?? 0);
    },
    /** A clone being provisioned from the instance now (its disks are being read whole). */
    async cloningFrom(instanceId: string): Promise<string | undefined> {
      const rows = await db
        .select({ id: instances.id })
        .from(instances)
        .where(and(eq(instances.cloneSourceId, instanceId), eq(instances.status, 'creating')))
        .limit(1);
      return rows[0]?.id;
    },
    /** queued|running → running (an attempt begins, also a retried one); false when it is no longer active. */
    async begin(id: string, now: Date): Promise<boolean> {
      const rows = await db
        .update(dataCopies)
        .set({ status: 'running', startedAt: sql`coalesce(${dataCopies.startedAt}, ${now.toISOString()}::timestamptz)`, updatedAt: now, error: '' })
        .where(and(eq(dataCopies.id, id), inArray(dataCopies.status, ACTIVE)))
        .returning({ id: dataCopies.id });
      return rows.length === 1;
    },
    /** Progress (or a bare heartbeat) of a running copy; false when it is no longer running (terminated). */
    async progress(id: string, p: CopyProgress | undefined, now: Date): Promise<boolean> {
      const rows = await db
        .update(dataCopies)
        .set({ ...(p ? { copiedBytes: Math.round(p.copiedBytes), totalBytes: Math.round(p.totalBytes), files: p.files } : {}), updatedAt: now })
        .where(and(eq(dataCopies.id, id), eq(dataCopies.status, 'running')))
        .returning({ id: dataCopies.id });
      return rows.length === 1;
    },
    /** running → succeeded | failed (or an active one → failed); false when it had ended already. */
    async finish(id: string, status: 'succeeded' | 'failed', p: CopyProgress | undefined, error: string, now: Date): Promise<boolean> {
      const rows = await db
        .update(dataCopies)
        .set({ status, error, finishedAt: now, updatedAt: now, ...(p ? { copiedBytes: Math.round(p.copiedBytes), totalBytes: Math.round(p.totalBytes), files: p.files } : {}) })
        .where(and(eq(dataCopies.id, id), inArray(dataCopies.status, ACTIVE)))
        .returning({ id: dataCopies.id });
      return rows.length === 1;
    },
    async terminate(id: string, now: Date): Promise<void> {
      await db.update(dataCopies).set({ status: 'terminated', finishedAt: now, updatedAt: now }).where(eq(dataCopies.id, id));
    },
    async active(): Promise<DataCopyRow[]> {
      return db.select().from(dataCopies).where(inArray(dataCopies.status, ACTIVE));
    },
    /** Every job (any status) of these copies. */
    async jobsOf(kind: string, copyIds: string[]): Promise<CopyJobRow[]> {
      if (copyIds.length === 0) return [];
      const copyId = sql<string>`${jobs.payload} ->> 'copyId'`;
      const rows = await db
        .select({ id: jobs.id, copyId, status: jobs.status, attempts: jobs.attempts, lockedAt: jobs.lockedAt })
        .from(jobs)
        .where(and(eq(jobs.kind, kind), inArray(copyId, copyIds)));
      return rows.map((r) => ({ ...r, id: Number(r.id) }));
    },
    /** A job a dead process held: queued again now (only if nobody claimed it since). */
    async requeueJob(job: CopyJobRow, now: Date): Promise<boolean> {
      const rows = await db
        .update(jobs)
        .set({ status: 'queued', runAt: now, lockedAt: null })
        .where(and(eq(jobs.id, job.id), eq(jobs.status, 'running'), eq(jobs.attempts, job.attempts)))
        .returning({ id: jobs.id });
      return rows.length === 1;
    },
    async failJob(job: CopyJobRow, message: string): Promise<void> {
      await db
        .update(jobs)
        .set({ status: 'failed', lastError: message, lockedAt: null, finishedAt: sql`now()` })
        .where(and(eq(jobs.id, job.id), eq(jobs.status, 'running'), eq(jobs.attempts, job.attempts)));
    },
  };
}
