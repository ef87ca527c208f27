import { and, desc, eq, gt, ilike, inArray, isNull, ne, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { images, instances, orders } from '../../db/schema/compute.ts';
import { users } from '../../db/schema/user.ts';
import type { ImageRow } from './image.repository.ts';

/** LIKE pattern of a user's words, with % and _ taken literally. */
const likeOf = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Why an image can't be deleted now (issue #10), by kind; all empty when nothing uses it. */
export type ImageUse = { instances: string[]; unpaidOrders: number; childImages: number };

/**
 * Issue #10: private images (snapshots) — a user's own, the tenant's community, and what uses them.
 * A deleted image (deleted_at) is in no list and answers as missing.
 */
export function createUserImageRepository(db: DbOrTx) {
  const live = and(eq(images.kind, 'private'), isNull(images.deletedAt));
  const communityOf = (tenantId: number) => and(live, eq(images.tenantId, tenantId), eq(images.shared, true), eq(images.status, 'ready'));

  return {
    /** Locks an image FOR SHARE (a delete waits for the locking transaction); its deleted_at, or undefined when missing. */
    async lockShared(id: number): Promise<{ deletedAt: Date | null } | undefined> {
      return (await db.select({ deletedAt: images.deletedAt }).from(images).where(eq(images.id, id)).for('share'))[0];
    },
    async addUse(id: number): Promise<void> {
      await db.update(images).set({ useCount: sql`${images.useCount} + 1` }).where(eq(images.id, id));
    },
    /** A live private image owned by the user (of that tenant), optionally locked. */
    async own(owner: { tenantId: number; userId: number }, id: number, opts: { lock?: boolean } = {}): Promise<ImageRow | undefined> {
      const q = db
        .select()
        .from(images)
        .where(and(eq(images.id, id), live, eq(images.tenantId, owner.tenantId), eq(images.ownerUserId, owner.userId)))
        .limit(1);
      return (opts.lock ? await q.for('update') : await q)[0];
    },
    async byId(id: number): Promise<ImageRow | undefined> {
      return (await db.select().from(images).where(eq(images.id, id)).limit(1))[0];
    },
    async namesOf(ids: number[]): Promise<Map<number, string>> {
      if (ids.length === 0) return new Map();
      const rows = await db.select({ id: images.id, name: images.name }).from(images).where(inArray(images.id, ids));
      return new Map(rows.map((r) => [r.id, r.name]));
    },
    async countLive(userId: number): Promise<number> {
      const [r] = await db.select({ n: sql<number>`count(*)::int` }).from(images).where(and(live, eq(images.ownerUserId, userId)));
      return Number(r?.n ?? 0);
    },
    async pageOwn(owner: { tenantId: number; userId: number }, page: number, pageSize: number): Promise<{ rows: ImageRow[]; total: number }> {
      const where = and(live, eq(images.tenantId, owner.tenantId), eq(images.ownerUserId, owner.userId));
      const [c] = await db.select({ n: sql<number>`count(*)::int` }).from(images).where(where);
      const rows = await db
        .select()
        .from(images)
        .where(where)
        .orderBy(desc(images.createdAt), desc(images.id))
        .limit(pageSize)
        .offset((page - 1) * pageSize);
      return { rows, total: Number(c?.n ?? 0) };
    },
    /** The user's ready private images (the create page's picker). */
    async readyOwn(owner: { tenantId: number; userId: number }): Promise<ImageRow[]> {
      return db
        .select()
        .from(images)
        .where(and(live, eq(images.tenantId, owner.tenantId), eq(images.ownerUserId, owner.userId), eq(images.status, 'ready')))
        .orderBy(desc(images.createdAt), desc(images.id));
    },
    async fromInstance(owner: { tenantId: number; userId: number }, instanceId: string): Promise<ImageRow[]> {
      return db
        .select()
        .from(images)
        .where(and(live, eq(images.tenantId, owner.tenantId), eq(images.ownerUserId, owner.userId), eq(images.sourceInstanceId, instanceId)))
        .orderBy(desc(images.createdAt), desc(images.id));
    },
    async pageCommunity(tenantId: number, q: { page: number; pageSize: number; keyword?: string; sort: 'hot' | 'new' }): Promise<{ rows: ImageRow[]; total: number }> {
      const kw = q.keyword?.trim();
      const where = and(communityOf(tenantId), kw ? or(ilike(images.name, likeOf(kw)), ilike(images.description, likeOf(kw))) : undefined);
      const [c] = await db.select({ n: sql<number>`count(*)::int` }).from(images).where(where);
      const order = q.sort === 'new' ? [desc(images.sharedAt), desc(images.id)] : [desc(images.useCount), desc(images.sharedAt), desc(images.id)];
      const rows = await db
        .select()
        .from(images)
        .where(where)
        .orderBy(...order)
        .limit(q.pageSize)
        .offset((q.page - 1) * q.pageSize);
      return { rows, total: Number(c?.n ?? 0) };
    },
    async community(tenantId: number, id: number): Promise<ImageRow | undefined> {
      return (await db.select().from(images).where(and(eq(images.id, id), communityOf(tenantId))).limit(1))[0];
    },
    async authors(userIds: number[]): Promise<Map<number, { userName: string; phone: string }>> {
      if (userIds.length === 0) return new Map();
      const rows = await db.select({ id: users.id, userName: users.userName, phone: users.phone }).from(users).where(inArray(users.id, userIds));
      return new Map(rows.map((r) => [r.id, { userName: r.userName, phone: r.phone }]));
    },
    /**
     * What uses each image now: instances not released, unpaid orders not yet expired, live images
     * built over it. One query per kind for the whole page.
     */
    async uses(ids: number[], now: Date): Promise<Map<number, ImageUse>> {
      const out = new Map<number, ImageUse>(ids.map((id) => [id, { instances: [], unpaidOrders: 0, childImages: 0 }]));
      if (ids.length === 0) return out;
      const [insts, ords, kids] = await Promise.all([
        db
          .select({ imageId: instances.imageId, id: instances.id })
          .from(instances)
          .where(and(inArray(instances.imageId, ids), ne(instances.status, 'released'))),
        db
          .select({ imageId: orders.imageId, n: sql<number>`count(*)::int` })
          .from(orders)
          .where(and(inArray(orders.imageId, ids), eq(orders.status, 'unpaid'), gt(orders.expiresAt, now)))
          .groupBy(orders.imageId),
        db
          .select({ parent: images.parentImageId, n: sql<number>`count(*)::int` })
          .from(images)
          .where(and(inArray(images.parentImageId, ids), isNull(images.deletedAt)))
          .groupBy(images.parentImageId),
      ]);
      for (const r of insts) out.get(r.imageId)?.instances.push(r.id);
      for (const r of ords) out.get(r.imageId)!.unpaidOrders = Number(r.n);
      for (const r of kids) if (r.parent !== null) out.get(r.parent)!.childImages = Number(r.n);
      return out;
    },
    async insert(values: typeof images.$inferInsert): Promise<ImageRow> {
      return (await db.insert(images).values(values).returning())[0]!;
    },
    async update(id: number, patch: Partial<typeof images.$inferInsert>): Promise<ImageRow | undefined> {
      return (await db.update(images).set(patch).where(eq(images.id, id)).returning())[0];
    },
    /** Updates a row only while it is still building (a deleted or finished one is left alone). */
    async updateBuilding(id: number, patch: Partial<typeof images.$inferInsert>): Promise<ImageRow | undefined> {
      return (await db.update(images).set(patch).where(and(eq(images.id, id), eq(images.status, 'building'))).returning())[0];
    },
  };
}
export type UserImageRepository = ReturnType<typeof createUserImageRepository>;
