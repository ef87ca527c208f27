import { and, asc, desc, eq, gt, inArray, isNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { orders } from '../../db/schema/compute.ts';
import { bills } from '../../db/schema/metering.ts';
import { jobs } from '../../db/schema/job.ts';
import { RESIZE_DISK_JOB } from './instance-change.jobs.ts';

export type PrepaidBillRow = { id: number; amount: number; periodStart: Date; periodEnd: Date };

/** Issue #10 (billing changes): the rows the change service reads besides instances and orders. */
export function createInstanceChangeRepository(db: DbOrTx) {
  return {
    /** Prepaid bills of an instance not refunded yet whose period ends after `now`, locked (the refund marks them). */
    async lockRefundableBills(instanceId: string, now: Date): Promise<PrepaidBillRow[]> {
      const rows = await db
        .select({ id: bills.id, amount: bills.amount, periodStart: bills.periodStart, periodEnd: bills.periodEnd })
        .from(bills)
        .where(and(eq(bills.instanceId, instanceId), eq(bills.chargeType, 'prepaid'), isNull(bills.refundedAt), gt(bills.periodEnd, now)))
        .orderBy(asc(bills.id))
        .for('update');
      return rows.map((r) => ({ ...r, amount: Number(r.amount) }));
    },
    async markRefunded(id: number, amount: number, at: Date): Promise<void> {
      await db.update(bills).set({ refundedAmount: amount, refundedAt: at }).where(eq(bills.id, id));
    },
    /**
     * A bill start free for this instance at or after `at` (bills are unique per instance and
     * period start; two changes in one millisecond move the second by a millisecond).
     */
    async freeBillStart(instanceId: string, at: Date): Promise<Date> {
      const taken = await db
        .select({ s: bills.periodStart })
        .from(bills)
        .where(and(eq(bills.instanceId, instanceId), sql`${bills.periodStart} >= ${at.toISOString()}::timestamptz`, sql`${bills.periodStart} < ${new Date(at.getTime() + 1000).toISOString()}::timestamptz`));
      const set = new Set(taken.map((r) => r.s.getTime()));
      let t = at.getTime();
      while (set.has(t)) t++;
      return new Date(t);
    },
    /** A resize of this instance's data disk still queued or running. */
    async resizePending(instanceId: string): Promise<boolean> {
      const rows = await db
        .select({ id: jobs.id })
        .from(jobs)
        .where(and(eq(jobs.kind, RESIZE_DISK_JOB), inArray(jobs.status, ['queued', 'running']), sql`${jobs.payload} ->> 'instanceId' = ${instanceId}`))
        .limit(1);
      return rows.length > 0;
    },
    /** The latest paid data-disk order of an instance (what a resize job applies). */
    async lastDiskOrder(instanceId: string) {
      const rows = await db
        .select()
        .from(orders)
        .where(and(eq(orders.instanceId, instanceId), eq(orders.kind, 'data_disk'), eq(orders.status, 'paid')))
        .orderBy(desc(orders.paidAt), desc(orders.id))
        .limit(1);
      return rows[0];
    },
  };
}
