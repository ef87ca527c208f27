import { and, asc, count, desc, eq, gt, lte, sql } from 'drizzle-orm';
import type { PaymentMethod } from '@suanli/contract/payment';
import { queryRows, type DbOrTx } from '../../db/client.ts';
import { paymentNotifications, payments } from '../../db/schema/wallet.ts';
import { tenantHosts, tenants } from '../../db/schema/tenant.ts';
import { users } from '../../db/schema/user.ts';
import { jobs } from '../../db/schema/job.ts';

export type PaymentRow = typeof payments.$inferSelect;
export type NewPayment = Pick<typeof payments.$inferInsert, 'tenantId' | 'userId' | 'method' | 'amount' | 'createdAt' | 'expiresAt'>;
export type NewPaymentNotification = typeof paymentNotifications.$inferInsert;
export type PaymentNotificationRow = typeof paymentNotifications.$inferSelect;
export type PaymentTenantRow = Pick<typeof tenants.$inferSelect, 'id' | 'code' | 'title' | 'paymentSettings'>;
export type FlaggedPaymentRow = PaymentRow & { userPhone: string };

const tenantColumns = { id: tenants.id, code: tenants.code, title: tenants.title, paymentSettings: tenants.paymentSettings };

export function createPaymentRepository(db: DbOrTx) {
  return {
    async insert(values: NewPayment): Promise<PaymentRow> {
      const [row] = await db.insert(payments).values(values).returning();
      if (!row) throw new Error('payment insert returned nothing');
      return row;
    },
    /**
     * Inserts the payment unless its user already has `cap` open ones (pending, not yet expired at
     * `values.createdAt`); undefined then. A per-user transaction lock makes count-then-insert
     * atomic: parallel creations queue here, so they can't overshoot the cap together.
     */
    async insertUnderCap(values: NewPayment & { createdAt: Date }, cap: number): Promise<PaymentRow | undefined> {
      return db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`payments-open:${values.userId}`}))`);
        const [open] = await tx
          .select({ n: count() })
          .from(payments)
          .where(and(eq(payments.userId, values.userId), eq(payments.status, 'pending'), gt(payments.expiresAt, values.createdAt)));
        if ((open?.n ?? 0) >= cap) return undefined;
        const [row] = await tx.insert(payments).values(values).returning();
        if (!row) throw new Error('payment insert returned nothing');
        return row;
      });
    },
    async findById(id: string): Promise<PaymentRow | undefined> {
      const rows = await db.select().from(payments).where(eq(payments.id, id)).limit(1);
      return rows[0];
    },
    /** Only the owner's: another user's or tenant's id finds nothing, like a missing one. */
    async findOwned(id: string, owner: { userId: number; tenantId: number }): Promise<PaymentRow | undefined> {
      const rows = await db
        .select()
        .from(payments)
        .where(and(eq(payments.id, id), eq(payments.userId, owner.userId), eq(payments.tenantId, owner.tenantId)))
        .limit(1);
      return rows[0];
    },
    /** Locks the payment for the rest of the transaction: notifications and reconciliation of one payment queue here. */
    async lockById(id: string): Promise<PaymentRow | undefined> {
      const rows = await db.select().from(payments).where(eq(payments.id, id)).for('update');
      return rows[0];
    },
    async setCheckout(id: string, checkout: { payUrl: string | null; qrCode: string | null }): Promise<PaymentRow> {
      const [row] = await db.update(payments).set(checkout).where(eq(payments.id, id)).returning();
      if (!row) throw new Error(`payment ${id} vanished`);
      return row;
    },
    async markPaid(id: string, paid: { paidAt: Date; gatewayTradeNo: string; flagged: boolean }): Promise<void> {
      await db
        .update(payments)
        .set({ status: 'paid', paidAt: paid.paidAt, gatewayTradeNo: paid.gatewayTradeNo || null, flagged: paid.flagged, closedAt: null })
        .where(eq(payments.id, id));
    },
    /** Closes a payment that is still pending; undefined when it no longer was. */
    async closePending(id: string, status: 'failed' | 'expired', at: Date): Promise<PaymentRow | undefined> {
      const rows = await db
        .update(payments)
        .set({ status, closedAt: at })
        .where(and(eq(payments.id, id), eq(payments.status, 'pending')))
        .returning();
      return rows[0];
    },
    /** Expires a payment that is pending and past its expiry; undefined when it wasn't both. */
    async expireIfDue(id: string, now: Date): Promise<PaymentRow | undefined> {
      const rows = await db
        .update(payments)
        .set({ status: 'expired', closedAt: now })
        .where(and(eq(payments.id, id), eq(payments.status, 'pending'), lte(payments.expiresAt, now)))
        .returning();
      return rows[0];
    },
    /** Pending payments created before `createdBefore`, oldest first. */
    async listPending(createdBefore: Date, limit: number): Promise<PaymentRow[]> {
      return db
        .select()
        .from(payments)
        .where(and(eq(payments.status, 'pending'), lte(payments.createdAt, createdBefore)))
        .orderBy(asc(payments.createdAt))
        .limit(limit);
    },
    async insertNotification(n: NewPaymentNotification): Promise<void> {
      await db.insert(paymentNotifications).values(n);
    },
    async listNotifications(paymentId: string): Promise<PaymentNotificationRow[]> {
      return db.select().from(paymentNotifications).where(eq(paymentNotifications.paymentId, paymentId)).orderBy(asc(paymentNotifications.id));
    },
    /**
     * Payments of the tenant flagged for the operator: paid after they had expired (or failed),
     * i.e. money that arrived late and was credited anyway. Newest first.
     */
    async pageFlagged(tenantId: number, page: number, pageSize: number): Promise<{ list: FlaggedPaymentRow[]; total: number }> {
      const where = and(eq(payments.tenantId, tenantId), eq(payments.flagged, true));
      const [list, totals] = await Promise.all([
        db
          .select({ payment: payments, userPhone: users.phone })
          .from(payments)
          .innerJoin(users, eq(users.id, payments.userId))
          .where(where)
          .orderBy(desc(payments.paidAt), desc(payments.id))
          .limit(pageSize)
          .offset((page - 1) * pageSize),
        db.select({ n: count() }).from(payments).where(where),
      ]);
      return { list: list.map((r) => ({ ...r.payment, userPhone: r.userPhone })), total: totals[0]?.n ?? 0 };
    },
    /** The host names the tenant is served on (tenant_hosts), in a stable order. */
    async hostsOf(tenantId: number): Promise<string[]> {
      const rows = await db.select({ host: tenantHosts.host }).from(tenantHosts).where(eq(tenantHosts.tenantId, tenantId)).orderBy(asc(tenantHosts.host));
      return rows.map((r) => r.host);
    },
    /** Every tenant with its payment settings (a start-up check; tenants are few). */
    async allTenants(): Promise<PaymentTenantRow[]> {
      return db.select(tenantColumns).from(tenants).orderBy(asc(tenants.id));
    },
    async findTenant(id: number): Promise<PaymentTenantRow | undefined> {
      const rows = await db.select(tenantColumns).from(tenants).where(eq(tenants.id, id)).limit(1);
      return rows[0];
    },
    /** Tenants with settings for `method` (enabled or not: their payments may still be notified). */
    async tenantsWithSettings(method: PaymentMethod): Promise<PaymentTenantRow[]> {
      return db
        .select(tenantColumns)
        .from(tenants)
        .where(sql`(${tenants.paymentSettings} -> ${method}::text) is not null`)
        .orderBy(asc(tenants.id));
    },
    /**
     * Adds a job of `kind` unless one is already queued or running: a periodic tick on every
     * replica then still yields one run at a time (two replicas racing may add two; harmless for
     * idempotent work, and the next tick adds none while they wait).
     */
    async enqueueUnlessWaiting(kind: string, runAt: Date): Promise<boolean> {
      const rows = await queryRows<{ id: number }>(
        db,
        sql`insert into ${jobs} (kind, payload, run_at)
            select ${kind}, '{}'::jsonb, ${runAt.toISOString()}::timestamptz
            where not exists (select 1 from ${jobs} where kind = ${kind} and status in ('queued', 'running'))
            returning id`,
      );
      return rows.length > 0;
    },
  };
}
export type PaymentRepository = ReturnType<typeof createPaymentRepository>;

