import { and, count, desc, eq, gt, gte, lt, lte, sql, type SQL } from 'drizzle-orm';
import { queryRows, type DbOrTx } from '../../db/client.ts';
import { ledgerEntries, wallets, type LedgerKind } from '../../db/schema/wallet.ts';

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
    /**
     * The whole posting as one statement: the balance row is updated (which locks it) only if the
     * result may stand, and the entry is appended with the new balance. One round trip, atomic on
     * its own. Returns undefined when the wallet is missing/foreign or the debit would overdraw;
     * a second posting of the same (user, kind, ref) fails on the unique index as a whole.
     */
    async postAtomically(p: { tenantId: number; userId: number; kind: LedgerKind; amount: number; ref: string; memo: string; allowNegative: boolean; at: Date }): Promise<LedgerRow | undefined> {
      const rows = await queryRows<{ id: string; tenant_id: number; user_id: string; kind: LedgerKind; amount: string; balance_after: string; ref: string; memo: string; created_at: string | Date }>(
        db,
        sql`with w as (
              update ${wallets} set balance = balance + ${p.amount}, updated_at = ${p.at.toISOString()}::timestamptz
              where user_id = ${p.userId} and tenant_id = ${p.tenantId}
                and (${p.amount} > 0 or ${p.allowNegative} or balance + ${p.amount} >= 0)
              returning balance)
            insert into ${ledgerEntries} (tenant_id, user_id, kind, amount, balance_after, ref, memo, created_at)
            select ${p.tenantId}, ${p.userId}, ${p.kind}, ${p.amount}, w.balance, ${p.ref}, ${p.memo}, ${p.at.toISOString()}::timestamptz from w
            returning id, tenant_id, user_id, kind, amount, balance_after, ref, memo, created_at`,
      );
      const r = rows[0];
      if (!r) return undefined;
      return {
        id: Number(r.id),
        tenantId: r.tenant_id,
        userId: Number(r.user_id),
        kind: r.kind,
        amount: Number(r.amount),
        balanceAfter: Number(r.balance_after),
        ref: r.ref,
        memo: r.memo,
        createdAt: new Date(r.created_at),
      };
    },
    async walletOf(userId: number): Promise<{ balance: number; tenantId: number } | undefined> {
      const rows = await db.select({ balance: wallets.balance, tenantId: wallets.tenantId }).from(wallets).where(eq(wallets.userId, userId));
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
    /**
     * Users whose balance differs from the sum of their ledger, and entries whose balance_after
     * isn't the running sum (a gap or an edit). One tenant's, or everyone's.
     */
    async findMismatches(tenantId?: number) {
      const walletScope = tenantId === undefined ? sql`true` : sql`w.tenant_id = ${tenantId}`;
      const entryScope = tenantId === undefined ? sql`true` : sql`tenant_id = ${tenantId}`;
      const balances = await queryRows<{ user_id: string; balance: string; ledger: string }>(
        db,
        sql`select w.user_id, w.balance, coalesce(sum(l.amount), 0) as ledger
            from wallets w left join ledger_entries l on l.user_id = w.user_id
            where ${walletScope}
            group by w.user_id, w.balance
            having w.balance <> coalesce(sum(l.amount), 0)`,
      );
      const chains = await queryRows<{ user_id: string; id: string; balance_after: string; running: string }>(
        db,
        sql`select user_id, id, balance_after, running from (
              select user_id, id, balance_after, sum(amount) over (partition by user_id order by id) as running
              from ledger_entries where ${entryScope}) r
            where balance_after <> running`,
      );
      return {
        balances: balances.map((r) => ({ userId: Number(r.user_id), balance: r.balance, ledger: r.ledger })),
        chains: chains.map((r) => ({ userId: Number(r.user_id), entryId: r.id, balanceAfter: r.balance_after, running: r.running })),
      };
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
