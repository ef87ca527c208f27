import { eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { tenantHosts, tenants, type TenantPaymentSettings } from '../../db/schema/tenant.ts';

export type TenantRow = typeof tenants.$inferSelect;
export type NewTenant = typeof tenants.$inferInsert;

export function createTenantRepository(db: DbOrTx) {
  return {
    async findByHost(host: string): Promise<TenantRow | undefined> {
      const rows = await db
        .select({ tenant: tenants })
        .from(tenantHosts)
        .innerJoin(tenants, eq(tenants.id, tenantHosts.tenantId))
        .where(eq(tenantHosts.host, host))
        .limit(1);
      return rows[0]?.tenant;
    },
    async findByCode(code: string): Promise<TenantRow | undefined> {
      const rows = await db.select().from(tenants).where(eq(tenants.code, code)).limit(1);
      return rows[0];
    },
    async findDefault(): Promise<TenantRow | undefined> {
      const rows = await db.select().from(tenants).where(eq(tenants.isDefault, true)).orderBy(tenants.id).limit(1);
      return rows[0];
    },
    async findById(id: number): Promise<TenantRow | undefined> {
      const rows = await db.select().from(tenants).where(eq(tenants.id, id)).limit(1);
      return rows[0];
    },
    async setPaymentSettings(code: string, settings: TenantPaymentSettings): Promise<boolean> {
      const rows = await db.update(tenants).set({ paymentSettings: settings }).where(eq(tenants.code, code)).returning({ id: tenants.id });
      return rows.length === 1;
    },
    async insert(tenant: NewTenant, hosts: string[]): Promise<TenantRow> {
      const [row] = await db.insert(tenants).values(tenant).returning();
      if (!row) throw new Error('tenant insert returned nothing');
      if (hosts.length) await db.insert(tenantHosts).values(hosts.map((host) => ({ host, tenantId: row.id })));
      return row;
    },
  };
}
export type TenantRepository = ReturnType<typeof createTenantRepository>;
