import { and, asc, eq, inArray, isNull, ne, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { images, instances, orders } from '../../db/schema/compute.ts';

export type ImageRow = typeof images.$inferSelect;
export type ImagePatch = Partial<Pick<ImageRow, 'name' | 'description' | 'os' | 'contents' | 'status' | 'progress' | 'error' | 'rootPath' | 'sizeBytes' | 'published'>>;

export function createImageRepository(db: DbOrTx) {
  return {
    async bySlug(slug: string): Promise<ImageRow | undefined> {
      return (await db.select().from(images).where(eq(images.slug, slug)).limit(1))[0];
    },
    async byId(id: number): Promise<ImageRow | undefined> {
      return (await db.select().from(images).where(eq(images.id, id)).limit(1))[0];
    },
    /** Images a tenant can see: platform images (tenant_id null) and its own. */
    async visibleTo(tenantId: number, opts: { publishedOnly: boolean; statuses?: ImageRow['status'][] }): Promise<ImageRow[]> {
      // Private images (issue #10) are their owner's: never in the tenant-wide lists.
      const conds = [or(isNull(images.tenantId), eq(images.tenantId, tenantId)), ne(images.kind, 'private')];
      if (opts.publishedOnly) conds.push(eq(images.published, true));
      if (opts.statuses) conds.push(inArray(images.status, opts.statuses));
      return db
        .select()
        .from(images)
        .where(and(...conds))
        .orderBy(asc(images.id));
    },
    /** Inserts a row, or resets an existing one with the same slug back to building; returns it. */
    async upsertBuilding(values: { tenantId: number | null; slug: string; name: string; description: string; os: string }): Promise<ImageRow> {
      const rows = await db
        .insert(images)
        .values({ ...values, kind: values.tenantId === null ? 'platform' : 'tenant', status: 'building', progress: 0, error: null })
        .onConflictDoUpdate({ target: images.slug, set: { status: 'building', progress: 0, error: null } })
        .returning();
      return rows[0]!;
    },
    /** Marks a row building unless it already is (so two builds of one image never run at once). */
    async claimBuild(id: number): Promise<boolean> {
      const rows = await db
        .update(images)
        .set({ status: 'building', progress: 0, error: null })
        .where(and(eq(images.id, id), sql`${images.status} <> 'building'`))
        .returning({ id: images.id });
      return rows.length > 0;
    },
    async update(id: number, patch: ImagePatch): Promise<ImageRow | undefined> {
      return (await db.update(images).set(patch).where(eq(images.id, id)).returning())[0];
    },
    async inUse(id: number): Promise<boolean> {
      const [i] = await db.select({ n: sql<number>`count(*)::int` }).from(instances).where(eq(instances.imageId, id));
      const [o] = await db.select({ n: sql<number>`count(*)::int` }).from(orders).where(eq(orders.imageId, id));
      // An image other images lie over (issue #10 layers) is in use too.
      const [c] = await db.select({ n: sql<number>`count(*)::int` }).from(images).where(eq(images.parentImageId, id));
      return (i?.n ?? 0) + (o?.n ?? 0) + (c?.n ?? 0) > 0;
    },
    async remove(id: number): Promise<void> {
      await db.delete(images).where(eq(images.id, id));
    },
  };
}
export type ImageRepository = ReturnType<typeof createImageRepository>;
