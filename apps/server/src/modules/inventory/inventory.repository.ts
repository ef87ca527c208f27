import { and, asc, count, desc, eq, gte, lte, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { gpuTypes, machineTags, machines } from '../../db/schema/compute.ts';
import { datacenters } from '../../db/schema/datahub.ts';

export type MachineRow = typeof machines.$inferSelect;
export type GpuTypeRow = typeof gpuTypes.$inferSelect;
export type TagRow = typeof machineTags.$inferSelect;
export type DatacenterRow = typeof datacenters.$inferSelect;
export type MachineView = { machine: MachineRow; datacenterName: string; gpuType: GpuTypeRow };
export type MachineFilter = { datacenterId?: number; gpuTypeId?: number; minFreeGpus?: number; minPrice?: number; maxPrice?: number; tag?: string };

export function createInventoryRepository(db: DbOrTx) {
  const view = () =>
    db
      .select({ machine: machines, datacenterName: datacenters.name, gpuType: gpuTypes })
      .from(machines)
      .innerJoin(datacenters, eq(datacenters.id, machines.datacenterId))
      .innerJoin(gpuTypes, eq(gpuTypes.id, machines.gpuTypeId));
  const machineWhere = (tenantId: number, f: MachineFilter): SQL | undefined =>
    and(
      eq(machines.tenantId, tenantId),
      f.datacenterId !== undefined ? eq(machines.datacenterId, f.datacenterId) : undefined,
      f.gpuTypeId !== undefined ? eq(machines.gpuTypeId, f.gpuTypeId) : undefined,
      f.minFreeGpus !== undefined ? sql`${machines.gpuTotal} - ${machines.gpuUsed} >= ${f.minFreeGpus}` : undefined,
      f.minPrice !== undefined ? gte(machines.priceHour, f.minPrice) : undefined,
      f.maxPrice !== undefined ? lte(machines.priceHour, f.maxPrice) : undefined,
      f.tag ? sql`${machines.tags} @> array[${f.tag}]::text[]` : undefined,
    );

  return {
    async machinePage(tenantId: number, f: MachineFilter, page: number, pageSize: number): Promise<{ list: MachineView[]; total: number }> {
      const w = machineWhere(tenantId, f);
      const [list, totals] = await Promise.all([
        view()
          .where(w)
          // Rentable first (online with a free GPU), then by datacenter and price.
          .orderBy(desc(sql`${machines.online} and ${machines.gpuUsed} < ${machines.gpuTotal}`), asc(datacenters.sort), asc(machines.priceHour), asc(machines.id))
          .limit(pageSize)
          .offset((page - 1) * pageSize),
        db.select({ total: count() }).from(machines).where(w),
      ]);
      return { list, total: Number(totals[0]?.total ?? 0) };
    },
    async machineView(tenantId: number, id: number): Promise<MachineView | undefined> {
      const rows = await view()
        .where(and(eq(machines.tenantId, tenantId), eq(machines.id, id)))
        .limit(1);
      return rows[0];
    },
    async lockMachine(tenantId: number, id: number): Promise<MachineRow | undefined> {
      const rows = await db
        .select()
        .from(machines)
        .where(and(eq(machines.tenantId, tenantId), eq(machines.id, id)))
        .for('update');
      return rows[0];
    },
    async insertMachine(v: typeof machines.$inferInsert): Promise<MachineRow | undefined> {
      const [row] = await db.insert(machines).values(v).onConflictDoNothing().returning();
      return row;
    },
    async updateMachine(id: number, v: Partial<typeof machines.$inferInsert>): Promise<void> {
      await db.update(machines).set(v).where(eq(machines.id, id));
    },
    async findMachineByHost(tenantId: number, hostName: string): Promise<MachineRow | undefined> {
      const rows = await db
        .select()
        .from(machines)
        .where(and(eq(machines.tenantId, tenantId), eq(machines.hostName, hostName)))
        .limit(1);
      return rows[0];
    },

    async gpuTypes(tenantId: number): Promise<GpuTypeRow[]> {
      return db.select().from(gpuTypes).where(eq(gpuTypes.tenantId, tenantId)).orderBy(asc(gpuTypes.sort), asc(gpuTypes.id));
    },
    async findGpuType(tenantId: number, id: number): Promise<GpuTypeRow | undefined> {
      const rows = await db
        .select()
        .from(gpuTypes)
        .where(and(eq(gpuTypes.tenantId, tenantId), eq(gpuTypes.id, id)))
        .limit(1);
      return rows[0];
    },
    async insertGpuType(v: typeof gpuTypes.$inferInsert): Promise<GpuTypeRow | undefined> {
      const [row] = await db.insert(gpuTypes).values(v).onConflictDoNothing().returning();
      return row;
    },
    async updateGpuType(tenantId: number, id: number, v: Partial<typeof gpuTypes.$inferInsert>): Promise<GpuTypeRow | undefined> {
      const [row] = await db
        .update(gpuTypes)
        .set(v)
        .where(and(eq(gpuTypes.tenantId, tenantId), eq(gpuTypes.id, id)))
        .returning();
      return row;
    },

    async tags(tenantId: number): Promise<TagRow[]> {
      return db.select().from(machineTags).where(eq(machineTags.tenantId, tenantId)).orderBy(asc(machineTags.sort), asc(machineTags.id));
    },
    async findTag(tenantId: number, id: number): Promise<TagRow | undefined> {
      const rows = await db
        .select()
        .from(machineTags)
        .where(and(eq(machineTags.tenantId, tenantId), eq(machineTags.id, id)))
        .for('update');
      return rows[0];
    },
    async insertTag(v: typeof machineTags.$inferInsert): Promise<TagRow | undefined> {
      const [row] = await db.insert(machineTags).values(v).onConflictDoNothing().returning();
      return row;
    },
    async updateTag(id: number, v: Partial<typeof machineTags.$inferInsert>): Promise<TagRow | undefined> {
      const [row] = await db.update(machineTags).set(v).where(eq(machineTags.id, id)).returning();
      return row;
    },
    /** Machines carry tag names: a renamed tag is renamed on them too. */
    async renameTagOnMachines(tenantId: number, from: string, to: string): Promise<void> {
      await db
        .update(machines)
        .set({ tags: sql`array_replace(${machines.tags}, ${from}, ${to})` })
        .where(and(eq(machines.tenantId, tenantId), sql`${machines.tags} @> array[${from}]::text[]`));
    },

    async datacenters(tenantId: number): Promise<DatacenterRow[]> {
      return db.select().from(datacenters).where(eq(datacenters.tenantId, tenantId)).orderBy(asc(datacenters.sort), asc(datacenters.id));
    },
    async findDatacenter(tenantId: number, id: number): Promise<DatacenterRow | undefined> {
      const rows = await db
        .select()
        .from(datacenters)
        .where(and(eq(datacenters.tenantId, tenantId), eq(datacenters.id, id)))
        .limit(1);
      return rows[0];
    },
    async findDatacenterByName(tenantId: number, name: string): Promise<DatacenterRow | undefined> {
      const rows = await db
        .select()
        .from(datacenters)
        .where(and(eq(datacenters.tenantId, tenantId), eq(datacenters.name, name)))
        .limit(1);
      return rows[0];
    },
    async insertDatacenter(v: typeof datacenters.$inferInsert): Promise<DatacenterRow> {
      const [row] = await db.insert(datacenters).values(v).returning();
      if (!row) throw new Error('inventory: datacenter insert returned nothing');
      return row;
    },
    async updateDatacenter(tenantId: number, id: number, v: Partial<typeof datacenters.$inferInsert>): Promise<DatacenterRow | undefined> {
      const [row] = await db
        .update(datacenters)
        .set(v)
        .where(and(eq(datacenters.tenantId, tenantId), eq(datacenters.id, id)))
        .returning();
      return row;
    },
  };
}
export type InventoryRepository = ReturnType<typeof createInventoryRepository>;
