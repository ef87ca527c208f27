import { and, count, desc, eq, lte, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { gpuTypes, images, machines, orders } from '../../db/schema/compute.ts';
import { datacenters } from '../../db/schema/datahub.ts';
import type { OrderKind, OrderStatus } from '@suanli/contract/order';

export type OrderRow = typeof orders.$inferSelect;
export type MachineRow = typeof machines.$inferSelect;
export type ImageRow = typeof images.$inferSelect;
/** A machine with the names the order lines and the console show. */
export type MachineView = MachineRow & { gpuTypeName: string; datacenterName: string };
/** An order with the names its presenter shows. */
export type OrderView = OrderRow & { hostName: string; datacenterName: string; gpuTypeName: string; imageName: string };

const orderViewColumns = {
  order: orders,
  hostName: machines.hostName,
  datacenterName: datacenters.name,
  gpuTypeName: gpuTypes.name,
  imageName: images.name,
};
type Joined = { order: OrderRow; hostName: string; datacenterName: string; gpuTypeName: string; imageName: string };
const flatten = (r: Joined): OrderView => ({ ...r.order, hostName: r.hostName, datacenterName: r.datacenterName, gpuTypeName: r.gpuTypeName, imageName: r.imageName });

export function createOrderRepository(db: DbOrTx) {
  const viewQuery = () =>
    db
      .select(orderViewColumns)
      .from(orders)
      .innerJoin(machines, eq(machines.id, orders.machineId))
      .innerJoin(datacenters, eq(datacenters.id, machines.datacenterId))
      .innerJoin(gpuTypes, eq(gpuTypes.id, machines.gpuTypeId))
      .innerJoin(images, eq(images.id, orders.imageId));

  return {
    /** The tenant's machine with its GPU type and datacenter names; another tenant's finds nothing. */
    async findMachine(tenantId: number, id: number): Promise<MachineView | undefined> {
      const rows = await db
        .select({ m: machines, gpuTypeName: gpuTypes.name, datacenterName: datacenters.name })
        .from(machines)
        .innerJoin(gpuTypes, eq(gpuTypes.id, machines.gpuTypeId))
        .innerJoin(datacenters, eq(datacenters.id, machines.datacenterId))
        .where(and(eq(machines.id, id), eq(machines.tenantId, tenantId)))
        .limit(1);
      const r = rows[0];
      return r && { ...r.m, gpuTypeName: r.gpuTypeName, datacenterName: r.datacenterName };
    },
    async findImage(id: number): Promise<ImageRow | undefined> {
      const rows = await db.select().from(images).where(eq(images.id, id)).limit(1);
      return rows[0];
    },
    async insert(values: typeof orders.$inferInsert): Promise<OrderRow> {
      const [row] = await db.insert(orders).values(values).returning();
      if (!row) throw new Error('order insert returned nothing');
      return row;
    },
    async findView(id: string): Promise<OrderView | undefined> {
      const rows = await viewQuery().where(eq(orders.id, id)).limit(1);
      return rows[0] && flatten(rows[0]);
    },
    /** Locks the order row for paying or cancelling: concurrent payers of one order queue here. */
    async lock(id: string): Promise<OrderRow | undefined> {
      const rows = await db.select().from(orders).where(eq(orders.id, id)).limit(1).for('update');
      return rows[0];
    },
    async page(userId: number, filter: { status?: OrderStatus; kind?: OrderKind }, now: Date, page: number, pageSize: number): Promise<{ list: OrderView[]; total: number }> {
      // An unpaid order past its TTL reads as expired before the expiry task has marked it.
      const statusCond =
        filter.status === 'unpaid'
          ? and(eq(orders.status, 'unpaid'), sql`${orders.expiresAt} > ${now.toISOString()}::timestamptz`)
          : filter.status === 'expired'
            ? sql`(${orders.status} = 'expired' or (${orders.status} = 'unpaid' and ${orders.expiresAt} <= ${now.toISOString()}::timestamptz))`
            : filter.status
              ? eq(orders.status, filter.status)
              : undefined;
      const where = and(eq(orders.userId, userId), statusCond, filter.kind ? eq(orders.kind, filter.kind) : undefined);
      const [rows, totals] = await Promise.all([
        viewQuery()
          .where(where)
          .orderBy(desc(orders.createdAt), desc(orders.id))
          .limit(pageSize)
          .offset((page - 1) * pageSize),
        db.select({ n: count() }).from(orders).where(where),
      ]);
      return { list: rows.map(flatten), total: Number(totals[0]?.n ?? 0) };
    },
    /** Unpaid orders of a user still within their TTL. */
    async countOpen(userId: number, now: Date): Promise<number> {
      const rows = await db
        .select({ n: count() })
        .from(orders)
        .where(and(eq(orders.userId, userId), eq(orders.status, 'unpaid'), sql`${orders.expiresAt} > ${now.toISOString()}::timestamptz`));
      return Number(rows[0]?.n ?? 0);
    },
    async markPaid(id: string, instanceId: string, at: Date): Promise<void> {
      await db.update(orders).set({ status: 'paid', paidAt: at, instanceId }).where(eq(orders.id, id));
    },
    async close(id: string, status: 'cancelled' | 'expired', at: Date): Promise<void> {
      await db.update(orders).set({ status, closedAt: at }).where(and(eq(orders.id, id), eq(orders.status, 'unpaid')));
    },
    /** Marks every unpaid order past its TTL expired; returns how many. */
    async expireDue(now: Date): Promise<number> {
      const rows = await db
        .update(orders)
        .set({ status: 'expired', closedAt: orders.expiresAt })
        .where(and(eq(orders.status, 'unpaid'), lte(orders.expiresAt, now)))
        .returning({ id: orders.id });
      return rows.length;
    },
  };
}
export type OrderRepository = ReturnType<typeof createOrderRepository>;
