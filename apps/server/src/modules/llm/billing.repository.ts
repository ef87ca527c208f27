import { eq, lt, sql } from 'drizzle-orm';
import { queryRows, type DbOrTx } from '../../db/client.ts';
import { apiKeys, llmHolds, llmUsage } from '../../db/schema/llm.ts';
import { wallets } from '../../db/schema/wallet.ts';

export type HoldRow = typeof llmHolds.$inferSelect;
export type UsageInsert = typeof llmUsage.$inferInsert;

/**
 * The statements of llm billing (billing.service.ts). Every method takes the transaction it is part
 * of; locks are always taken key first, then wallet, by hold, settle and sweep alike, so two of them
 * can't deadlock each other.
 */
export function createBillingRepository(db: DbOrTx) {
  return {
    /** This transaction's commit doesn't wait for the WAL flush (holds only; never for money). */
    async relaxCommit(): Promise<void> {
      await db.execute(sql`set local synchronous_commit = off`);
    },

    /** Locks the key's row: holds of one key are decided one at a time (quota and window checks). */
    async lockKey(keyId: string): Promise<{ used: number; held: number; quota: number | null } | undefined> {
      const rows = await queryRows<{ used: string; held: string; quota: string | null }>(
        db,
        sql`select used, held, quota from ${apiKeys} where id = ${keyId} and deleted_at is null for update`,
      );
      const r = rows[0];
      return r ? { used: Number(r.used), held: Number(r.held), quota: r.quota === null ? null : Number(r.quota) } : undefined;
    },

    async lockWallet(userId: number, tenantId: number): Promise<{ balance: number; held: number } | undefined> {
      const rows = await queryRows<{ balance: string; held: string }>(
        db,
        sql`select balance, held from ${wallets} where user_id = ${userId} and tenant_id = ${tenantId} for update`,
      );
      const r = rows[0];
      return r ? { balance: Number(r.balance), held: Number(r.held) } : undefined;
    },

    /**
     * For each window start (exclusive): the tokens (prompt + completion) and money the key's
     * recorded calls used after it, plus what its open holds hold (counted in every window: they are
     * in flight now).
     */
    async windowUsage(keyId: string, since: Date[]): Promise<{ tokens: number; money: number }[]> {
      if (since.length === 0) return [];
      const earliest = new Date(Math.min(...since.map((d) => d.getTime())));
      const cols = since.map(
        (d, i) =>
          sql`coalesce(sum(prompt_tokens + completion_tokens) filter (where created_at > ${d.toISOString()}::timestamptz), 0) as ${sql.raw(`t${i}`)},
              coalesce(sum(cost) filter (where created_at > ${d.toISOString()}::timestamptz), 0) as ${sql.raw(`m${i}`)}`,
      );
      const [used] = await queryRows<Record<string, string>>(
        db,
        sql`select ${sql.join(cols, sql`, `)} from ${llmUsage} where key_id = ${keyId} and created_at > ${earliest.toISOString()}::timestamptz`,
      );
      const [open] = await queryRows<{ tokens: string; money: string }>(
        db,
        sql`select coalesce(sum(tokens), 0) as tokens, coalesce(sum(amount), 0) as money from ${llmHolds} where key_id = ${keyId}`,
      );
      return since.map((_, i) => ({
        tokens: Number(used?.[`t${i}`] ?? 0) + Number(open?.tokens ?? 0),
        money: Number(used?.[`m${i}`] ?? 0) + Number(open?.money ?? 0),
      }));
    },

    /**
     * The hold row, wallets.held and api_keys.held raised, in one statement. The caller has locked
     * the key's and the wallet's rows already (so the order the sub-statements run in takes no new lock).
     */
    async insertHold(v: { tenantId: number; userId: number; keyId: string | null; amount: number; tokens: number; at: Date }): Promise<string> {
      const rows = await queryRows<{ id: string }>(
        db,
        sql`with h as (
              insert into ${llmHolds} (tenant_id, user_id, key_id, amount, tokens, created_at)
              values (${v.tenantId}, ${v.userId}, ${v.keyId}::uuid, ${v.amount}, ${v.tokens}, ${v.at.toISOString()}::timestamptz)
              returning id),
            w as (update ${wallets} set held = held + ${v.amount}::bigint where user_id = ${v.userId} and ${v.amount}::bigint <> 0 returning 1),
            k as (update ${apiKeys} set held = held + ${v.amount}::bigint where id = ${v.keyId}::uuid and ${v.amount}::bigint <> 0 returning 1)
            select id from h`,
      );
      const id = rows[0]?.id;
      if (!id) throw new Error('llm billing: hold insert returned nothing');
      return id;
    },

    /** Deletes the hold; undefined when it was already settled or swept. Locks nothing else. */
    async takeHold(holdId: string): Promise<HoldRow | undefined> {
      const [row] = await db.delete(llmHolds).where(eq(llmHolds.id, holdId)).returning();
      return row;
    },

    /** Holds older than `before`, oldest first (the sweep takes them one transaction each). */
    async staleHolds(before: Date, limit: number): Promise<string[]> {
      const rows = await db.select({ id: llmHolds.id }).from(llmHolds).where(lt(llmHolds.createdAt, before)).orderBy(llmHolds.createdAt).limit(limit);
      return rows.map((r) => r.id);
    },

    /** The key's side of a settlement: used += cost, held −= the hold (and last use), or only the release. */
    async settleKey(keyId: string, v: { held: number; cost: number; at: Date | null }): Promise<void> {
      await db
        .update(apiKeys)
        .set({
          held: sql`greatest(${apiKeys.held} - ${v.held}, 0)`,
          used: sql`${apiKeys.used} + ${v.cost}`,
          ...(v.at ? { lastUsedAt: v.at } : {}),
        })
        .where(eq(apiKeys.id, keyId));
    },

    async releaseWallet(userId: number, amount: number): Promise<void> {
      if (amount === 0) return;
      await db
        .update(wallets)
        .set({ held: sql`greatest(${wallets.held} - ${amount}, 0)` })
        .where(eq(wallets.userId, userId));
    },

    async balanceOf(userId: number): Promise<number> {
      const [row] = await db.select({ balance: wallets.balance }).from(wallets).where(eq(wallets.userId, userId));
      return row?.balance ?? 0;
    },

    async insertUsage(v: UsageInsert): Promise<void> {
      await db.insert(llmUsage).values(v);
    },

  };
}
export type BillingRepository = ReturnType<typeof createBillingRepository>;
