import { and, count, desc, eq, gt, gte, lt, lte, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { ledgerEntries, type LedgerKind } from '../../db/schema/wallet.ts';
import { wallets } from '../../db/schema/user.ts';

export type LedgerRow = typeof ledgerEntries.$inferSelect;
export type LedgerFilter = { startTime?: Date; endTime?: Date; kind?: LedgerKind; direction?: 'income' | 'expense' };

export function createLedgerRepository(db: DbOrTx) {
  const where = (userId: number, f: LedgerFilter): SQL | undefined =>
    and(
      eq(ledgerEntries.userId, userId),
      f.startTime ? gte(ledgerEntries.createdAt, f.startTime) : undefined,
      f.endTime ? lte(ledgerEntries.createdAt, f.endTime) : undefined,
      f.kind ? eq(ledgerEntries.kind, f.kind) : undefined,
      f.direction === 'income' ? gt(ledgerEntries.amount, 0) : f.direction === 'expense' ? lt(ledgerEntries.amount, 0) : undefined,
    );

  return {
    /** Locks the balance row for the rest of the transaction: every balance change goes through here first. */
    async lockWallet(userId: number): Promise<{ balance: number; tenantId: number } | undefined> {
      const rows = await db.select({ balance: wallets.balance, tenantId: wallets.tenantId }).from(wallets).where(eq(wallets.userId, userId)).for('update');
      return rows[0];
    },
    async findByRef(userId: number, kind: LedgerKind, ref: string): Promise<LedgerRow | undefined> {
      const rows = await db
        .select()
        .from(ledgerEntries)
        .where(and(eq(ledgerEntries.userId, userId), eq(ledgerEntries.kind, kind), eq(ledgerEntries.ref, ref)))
        .limit(1);
      return rows[0];
    },
    async append(entry: typeof ledgerEntries.$inferInsert): Promise<LedgerRow> {
      const [row] = await db.insert(ledgerEntries).values(entry).returning();
      if (!row) throw new Error('ledger insert returned nothing');
      return row;
    },
    async setBalance(userId: number, balance: number, at: Date): Promise<void> {
      await db.update(wallets).set({ balance, updatedAt: at }).where(eq(wallets.userId, userId));
    },
    async page(userId: number, f: LedgerFilter, page: number, pageSize: number) {
      const w = where(userId, f);
      const [list, totals] = await Promise.all([
        db
          .select()
          .from(ledgerEntries)
          .where(w)
          .orderBy(desc(ledgerEntries.createdAt), desc(ledgerEntries.id))
          .limit(pageSize)
          .offset((page - 1) * pageSize),
        db
          .select({
            total: count(),
            income: sql<string>`coalesce(sum(case when ${ledgerEntries.amount} > 0 then ${ledgerEntries.amount} else 0 end), 0)`,
            expense: sql<string>`coalesce(sum(case when ${ledgerEntries.amount} < 0 then ${ledgerEntries.amount} else 0 end), 0)`,
          })
          .from(ledgerEntries)
          .where(w),
      ]);
      const t = totals[0];
      return { list, total: Number(t?.total ?? 0), income: Number(t?.income ?? 0), expense: Number(t?.expense ?? 0) };
    },
  };
}
export type LedgerRepository = ReturnType<typeof createLedgerRepository>;
