import { and, count, desc, eq, gte, lte, sql, sum, type SQL } from 'drizzle-orm';
import { queryRows, type DbOrTx } from '../../db/client.ts';
import { bills, instanceMeters } from '../../db/schema/metering.ts';
import { instances } from '../../db/schema/compute.ts';
import type { ChargeType } from '@suanli/contract/order';

export type MeterRow = typeof instanceMeters.$inferSelect;
export type BillRow = typeof bills.$inferSelect & { instanceName: string };
export type BillFilter = { instanceId?: string; chargeType?: ChargeType; startTime?: Date; endTime?: Date };
/** One user's part of a settlement: the sum of their instances' charges (units, ≥ 0). */
export type SettledUser = { tenantId: number; userId: number; amount: number; instances: number; firstInstanceId: string };

/** owed(ms) = floor(ms × hourly / 3,600,000), the one rounding rule (docs/metering.md). */
export const owed = (ms: number, hourly: number): number => Number((BigInt(ms) * BigInt(hourly)) / 3_600_000n);
const owedSql = (ms: SQL, hourly: SQL) => sql`floor((${ms})::numeric * (${hourly}) / 3600000)`;
const ts = (d: Date) => sql`${d.toISOString()}::timestamptz`;
/** Milliseconds between two timestamptz expressions, never negative. */
const msBetween = (from: SQL, to: SQL) => sql`greatest(0, floor(extract(epoch from (${to}) - (${from})) * 1000))::bigint`;

export function createMeteringRepository(db: DbOrTx) {
  const billWhere = (userId: number, f: BillFilter): SQL | undefined =>
    and(
      eq(bills.userId, userId),
      f.instanceId ? eq(bills.instanceId, f.instanceId) : undefined,
      f.chargeType ? eq(bills.chargeType, f.chargeType) : undefined,
      f.startTime ? gte(bills.periodEnd, f.startTime) : undefined,
      f.endTime ? lte(bills.periodStart, f.endTime) : undefined,
    );

  return {
    async lockMeter(instanceId: string): Promise<MeterRow | undefined> {
      const rows = await db.select().from(instanceMeters).where(eq(instanceMeters.instanceId, instanceId)).for('update');
      return rows[0];
    },
    async insertMeter(v: { instanceId: string; tenantId: number; userId: number; hourly: number; at: Date }): Promise<void> {
      await db.insert(instanceMeters).values({ instanceId: v.instanceId, tenantId: v.tenantId, userId: v.userId, hourly: v.hourly, runningSince: v.at, settledUntil: v.at, updatedAt: v.at });
    },
    async updateMeter(instanceId: string, v: Partial<Omit<MeterRow, 'instanceId' | 'tenantId' | 'userId'>>): Promise<void> {
      await db.update(instanceMeters).set(v).where(eq(instanceMeters.instanceId, instanceId));
    },
    async insertBill(v: { tenantId: number; userId: number; instanceId: string; chargeType: ChargeType; orderId: string | null; periodStart: Date; periodEnd: Date; seconds: number; amount: number; at: Date }): Promise<void> {
      await db.insert(bills).values({ ...v, createdAt: v.at });
    },

    /**
     * The settlement of every due meter at `now` as ONE statement (docs/metering.md): the due meters
     * are locked (FOR UPDATE SKIP LOCKED: a second scheduler skips what the first holds, and a row
     * updated meanwhile is read in its newest version); each gets owed(new total) − owed(billed) and a
     * bill row for [settled_until, now] (or up to its stop); the meters move to the new totals; per user
     * the sum comes back for the ledger posting, which the caller makes in the same transaction.
     */
    async settleDue(now: Date, limit: number): Promise<SettledUser[]> {
      const at = ts(now);
      const rows = await queryRows<{ tenant_id: number; user_id: string | number; amount: string | number; n: string | number; first: string }>(
        db,
        sql`with due as (
              select instance_id, tenant_id, user_id, hourly, running_since, last_stopped_at, settled_until, accrued_ms, billed_ms
              from ${instanceMeters}
              where (running_since is not null or accrued_ms > billed_ms) and settled_until < ${at}
              order by settled_until
              limit ${limit}
              for update skip locked),
            calc as (
              select d.*,
                d.accrued_ms + case when d.running_since is not null then ${msBetween(sql`greatest(d.running_since, d.settled_until)`, at)} else 0 end as new_ms,
                case when d.running_since is not null then ${at} else greatest(d.settled_until, coalesce(d.last_stopped_at, ${at})) end as period_end
              from due d),
            amt as (
              select c.*, (${owedSql(sql`c.new_ms`, sql`c.hourly`)} - ${owedSql(sql`c.billed_ms`, sql`c.hourly`)})::bigint as amount from calc c),
            upd as (
              update ${instanceMeters} m set accrued_ms = a.new_ms, billed_ms = a.new_ms, settled_until = a.period_end,
                charged_total = m.charged_total + a.amount, updated_at = ${at}
              from amt a where m.instance_id = a.instance_id),
            b as (
              insert into ${bills} (tenant_id, user_id, instance_id, charge_type, period_start, period_end, seconds, amount, created_at)
              select a.tenant_id, a.user_id, a.instance_id, 'payg', a.settled_until, a.period_end, (a.new_ms / 1000 - a.billed_ms / 1000)::int, a.amount, ${at}
              from amt a where a.new_ms > a.billed_ms and a.period_end > a.settled_until)
            select tenant_id, user_id, sum(amount) as amount, count(*) as n, min(instance_id) as first from amt group by tenant_id, user_id`,
      );
      return rows.map((r) => ({ tenantId: Number(r.tenant_id), userId: Number(r.user_id), amount: Number(r.amount), instances: Number(r.n), firstInstanceId: r.first }));
    },

    /** Running pay-as-you-go instances of users whose balance is below zero (arrears). */
    async runningPaygInArrears(limit: number): Promise<string[]> {
      const rows = await queryRows<{ id: string }>(
        db,
        sql`select i.id from ${instances} i join wallets w on w.user_id = i.user_id
            where i.status = 'running' and i.charge_type = 'payg' and w.balance < 0 order by i.id limit ${limit}`,
      );
      return rows.map((r) => r.id);
    },
    /** Running prepaid instances past their expiry. */
    async expiredPrepaid(now: Date, limit: number): Promise<string[]> {
      const rows = await queryRows<{ id: string }>(
        db,
        sql`select id from ${instances} where charge_type = 'prepaid' and status = 'running' and expires_at <= ${ts(now)} order by expires_at limit ${limit}`,
      );
      return rows.map((r) => r.id);
    },
    /** Stopped (or failed) instances whose release time has come. */
    async dueForRelease(now: Date, limit: number): Promise<{ id: string; chargeType: ChargeType }[]> {
      const rows = await queryRows<{ id: string; charge_type: ChargeType }>(
        db,
        sql`select id, charge_type from ${instances} where status in ('stopped', 'failed') and release_at <= ${ts(now)} order by release_at limit ${limit}`,
      );
      return rows.map((r) => ({ id: r.id, chargeType: r.charge_type }));
    },
    /** Start of the oldest unsettled stretch of a running meter (GET /metrics settlement lag), or null. */
    async oldestRunningSettledUntil(): Promise<Date | null> {
      const rows = await queryRows<{ t: string | Date | null }>(db, sql`select min(settled_until) as t from ${instanceMeters} where running_since is not null`);
      const t = rows[0]?.t;
      return t ? new Date(t) : null;
    },

    async billPage(userId: number, f: BillFilter, page: number, pageSize: number): Promise<{ list: BillRow[]; total: number; totalAmount: number }> {
      const w = billWhere(userId, f);
      const [list, totals] = await Promise.all([
        db
          .select({
            id: bills.id,
            tenantId: bills.tenantId,
            userId: bills.userId,
            instanceId: bills.instanceId,
            chargeType: bills.chargeType,
            orderId: bills.orderId,
            periodStart: bills.periodStart,
            periodEnd: bills.periodEnd,
            seconds: bills.seconds,
            amount: bills.amount,
            createdAt: bills.createdAt,
            refundedAmount: bills.refundedAmount,
            refundedAt: bills.refundedAt,
            instanceName: instances.name,
          })
          .from(bills)
          .innerJoin(instances, eq(instances.id, bills.instanceId))
          .where(w)
          .orderBy(desc(bills.periodStart), desc(bills.id))
          .limit(pageSize)
          .offset((page - 1) * pageSize),
        db.select({ total: count(), amount: sum(bills.amount) }).from(bills).where(w),
      ]);
      return { list, total: Number(totals[0]?.total ?? 0), totalAmount: Number(totals[0]?.amount ?? 0) };
    },

    /** Bills summed per day (Asia/Shanghai, UTC+8 all year: no daylight saving) and instance, newest day first. */
    async dailyPage(userId: number, f: BillFilter, page: number, pageSize: number) {
      const w = billWhere(userId, f);
      const day = sql<string>`to_char((${bills.periodStart} at time zone 'UTC') + interval '8 hours', 'YYYY-MM-DD')`;
      const grouped = db
        .select({
          day: day.as('day'),
          instanceId: bills.instanceId,
          chargeType: bills.chargeType,
          seconds: sql<string>`sum(${bills.seconds})`.as('seconds'),
          amount: sql<string>`sum(${bills.amount})`.as('amount'),
        })
        .from(bills)
        .where(w)
        .groupBy(day, bills.instanceId, bills.chargeType)
        .as('g');
      const [list, totals] = await Promise.all([
        db
          .select({ day: grouped.day, instanceId: grouped.instanceId, chargeType: grouped.chargeType, seconds: grouped.seconds, amount: grouped.amount, instanceName: instances.name })
          .from(grouped)
          .innerJoin(instances, eq(instances.id, grouped.instanceId))
          .orderBy(desc(grouped.day), grouped.instanceId, grouped.chargeType)
          .limit(pageSize)
          .offset((page - 1) * pageSize),
        db.select({ total: count(), amount: sql<string>`coalesce(sum(${grouped.amount}), 0)` }).from(grouped),
      ]);
      return {
        list: list.map((r) => ({ day: r.day, instanceId: r.instanceId, instanceName: r.instanceName, chargeType: r.chargeType, seconds: Number(r.seconds), amount: Number(r.amount) })),
        total: Number(totals[0]?.total ?? 0),
        totalAmount: Number(totals[0]?.amount ?? 0),
      };
    },
  };
}
export type MeteringRepository = ReturnType<typeof createMeteringRepository>;
