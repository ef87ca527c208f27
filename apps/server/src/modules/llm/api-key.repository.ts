import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { apiKeys } from '../../db/schema/llm.ts';

export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type ApiKeyInsert = typeof apiKeys.$inferInsert;
type Owner = { tenantId: number; userId: number };

/** A key of this owner that is not deleted (another user's or tenant's matches nothing: 404). */
const own = (owner: Owner, id: string) => and(eq(apiKeys.id, id), eq(apiKeys.tenantId, owner.tenantId), eq(apiKeys.userId, owner.userId), isNull(apiKeys.deletedAt));

/** The statements of the users' API keys (api-key.service.ts). */
export function createApiKeyRepository(db: Db) {
  return {
    /** The owner's keys (not deleted), newest first. */
    list(owner: Owner): Promise<ApiKeyRow[]> {
      return db
        .select()
        .from(apiKeys)
        .where(and(eq(apiKeys.tenantId, owner.tenantId), eq(apiKeys.userId, owner.userId), isNull(apiKeys.deletedAt)))
        .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
    },

    /**
     * Inserts the key unless the owner already keeps `max` (then undefined): the owner's creations
     * are taken in turn under an advisory lock, so the cap holds under concurrent calls.
     */
    insertCapped(v: ApiKeyInsert & Owner, max: number): Promise<ApiKeyRow | undefined> {
      return db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(hashtext('api_keys:user'), hashtext(${String(v.userId)}))`);
        const [count] = await tx
          .select({ n: sql<number>`count(*)::int` })
          .from(apiKeys)
          .where(and(eq(apiKeys.userId, v.userId), isNull(apiKeys.deletedAt)));
        if ((count?.n ?? 0) >= max) return undefined;
        const [inserted] = await tx.insert(apiKeys).values(v).returning();
        if (!inserted) throw new Error('api key insert returned nothing');
        return inserted;
      });
    },

    async update(owner: Owner, id: string, set: Partial<ApiKeyInsert>): Promise<ApiKeyRow | undefined> {
      const [row] = await db.update(apiKeys).set(set).where(own(owner, id)).returning();
      return row;
    },
  };
}
