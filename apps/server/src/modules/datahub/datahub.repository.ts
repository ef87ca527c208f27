import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { createInventoryRepository } from '../inventory/inventory.repository.ts';
import { datahubs, type datacenters } from '../../db/schema/datahub.ts';

export type DatacenterRow = typeof datacenters.$inferSelect;
export type DatahubRow = typeof datahubs.$inferSelect;

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } };
  return e?.code === '23505' || e?.cause?.code === '23505';
}

export function createDatahubRepository(db: DbOrTx) {
  const inventory = createInventoryRepository(db);
  return {
    // Datacenters belong to the inventory (operators manage them there); datahubs hang off them.
    listDatacenters: (tenantId: number): Promise<DatacenterRow[]> => inventory.datacenters(tenantId),
    /** The tenant's datacenter; another tenant's id finds nothing, like a missing one. */
    findDatacenter: (tenantId: number, id: number): Promise<DatacenterRow | undefined> => inventory.findDatacenter(tenantId, id),
    async findForUser(userId: number, datacenterId: number): Promise<DatahubRow | undefined> {
      const rows = await db
        .select()
        .from(datahubs)
        .where(and(eq(datahubs.userId, userId), eq(datahubs.datacenterId, datacenterId)))
        .limit(1);
      return rows[0];
    },
    /**
     * Inserts the activating row; undefined when the user already has one in that datacenter.
     * ON CONFLICT makes a concurrent second insert wait for the first and then do nothing, so the
     * transaction stays usable; the catch covers an engine that reports the violation instead.
     */
    async insert(values: { tenantId: number; userId: number; datacenterId: number; name: string }): Promise<DatahubRow | undefined> {
      try {
        const [row] = await db
          .insert(datahubs)
          .values({ ...values, status: 0 })
          .onConflictDoNothing({ target: [datahubs.userId, datahubs.datacenterId] })
          .returning();
        return row;
      } catch (err) {
        if (isUniqueViolation(err)) return undefined;
        throw err;
      }
    },
    /** Locks the row for the activation job (DESIGN §3 rule 7). */
    async lockById(id: number): Promise<DatahubRow | undefined> {
      const rows = await db.select().from(datahubs).where(eq(datahubs.id, id)).limit(1).for('update');
      return rows[0];
    },
    async markActivated(id: number, storagePath: string, at: Date): Promise<void> {
      await db
        .update(datahubs)
        .set({ status: 1, storagePath, activatedAt: at })
        .where(and(eq(datahubs.id, id), eq(datahubs.status, 0)));
    },
  };
}
export type DatahubRepository = ReturnType<typeof createDatahubRepository>;
