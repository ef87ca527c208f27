import { and, count, desc, eq, gt, gte, lt, lte, sql, type SQL } from 'drizzle-orm';
import { queryRows, type DbOrTx } from '../../db/client.ts';
import { ledgerEntries, wallets, type LedgerKind } from '../../db/schema/wallet.ts';

export type LedgerRow = typeof ledgerEntries.$inferSelect;
export type LedgerFilter = { startTime?: Date; endTime?: Date; kind?: LedgerKind; direction?: 'income' | 'expense' };

/**
 * The link of the hash chain, as SQL over SQL expressions: hex SHA-256 of the previous entry's hash
 * ('' for the first) followed by the entry as a JSON array [kind, amount, ref, balance_after,
 * created_at in epoch microseconds]. Used by the posting statement, the check, and (copied) by the
 * backfill in migration 0003; all three must stay equal.
 */
function entryHash(prev: SQL, kind: SQL, amount: SQL, ref: SQL, balanceAfter: SQL, createdAt: SQL): SQL {
  return sql`encode(sha256(convert_to(${prev} || jsonb_build_array(${kind}, ${amount}, ${ref}, ${balanceAfter}, (extract(epoch from ${createdAt}) * 1000000)::bigint)::text, 'UTF8')), 'hex')`;
}

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
      const at = sql`${p.at.toISOString()}::timestamptz`;
      const rows = await queryRows<{ id: string; tenant_id: number; user_id: string; kind: LedgerKind; amount: string; balance_after: string; ref: string; memo: string; created_at: string | Date; hash: string }>(
        db,
        // In SET every column reads its old value: `last_hash` is the previous entry's hash and
        // `balance + amount` the new balance, so the chain link costs no extra round trip.
        sql`with w as (
              update ${wallets} set balance = balance + ${p.amount}, updated_at = ${at},
                last_hash = ${entryHash(sql`coalesce(last_hash, '')`, sql`${p.kind}::text`, sql`${p.amount}::bigint`, sql`${p.ref}::text`, sql`balance + ${p.amount}`, at)}
              where user_id = ${p.userId} and tenant_id = ${p.tenantId}
                and (${p.amount} > 0 or ${p.allowNegative} or balance - held + ${p.amount} >= 0)
              returning balance, last_hash)
            insert into ${ledgerEntries} (tenant_id, user_id, kind, amount, balance_after, ref, memo, created_at, hash)
            select ${p.tenantId}, ${p.userId}, ${p.kind}, ${p.amount}, w.balance, ${p.ref}, ${p.memo}, ${at}, w.last_hash from w
            returning id, tenant_id, user_id, kind, amount, balance_after, ref, memo, created_at, hash`,
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
        hash: r.hash,
      };
    },
    /**
     * Many postings of one kind at one instant, one per user (at most), in two statements whatever
     * their number: the wallets are locked in user order (so two bulk postings can't deadlock each
     * other), then one UPDATE … FROM moves every balance and chains every user's hash with the same
     * expression as postAtomically (each user's new entry links to that user's last_hash), and the
     * entries are appended from its RETURNING. Postings that may not stand (a debit that would
     * overdraw without allowNegative, a missing or foreign wallet) are left out; the rest are returned.
     * Meant to run inside the caller's transaction (ledger.service's postBulk).
     */
    async postBulk(p: { kind: LedgerKind; allowNegative: boolean; at: Date; postings: { tenantId: number; userId: number; amount: number; ref: string; memo: string }[] }): Promise<{ userId: number; balanceAfter: number }[]> {
      if (p.postings.length === 0) return [];
      const at = sql`${p.at.toISOString()}::timestamptz`;
      const input = sql`${JSON.stringify(p.postings.map((x) => ({ t: x.tenantId, u: x.userId, a: x.amount, r: x.ref, m: x.memo })))}::jsonb`;
      await db.execute(sql`select 1 from ${wallets} where user_id in (select (e->>'u')::bigint from jsonb_array_elements(${input}) e) order by user_id for update`);
      const rows = await queryRows<{ user_id: string; balance_after: string }>(
        db,
        sql`with p as (select * from jsonb_to_recordset(${input}) as x(t int, u bigint, a bigint, r text, m text)),
            w as (
              update ${wallets} set balance = balance + p.a, updated_at = ${at},
                last_hash = ${entryHash(sql`coalesce(last_hash, '')`, sql`${p.kind}::text`, sql`p.a`, sql`p.r`, sql`balance + p.a`, at)}
              from p
              where ${wallets}.user_id = p.u and ${wallets}.tenant_id = p.t
                and (p.a > 0 or ${p.allowNegative} or ${wallets}.balance - ${wallets}.held + p.a >= 0)
              returning ${wallets}.user_id, ${wallets}.balance, ${wallets}.last_hash, p.t, p.a, p.r, p.m)
            insert into ${ledgerEntries} (tenant_id, user_id, kind, amount, balance_after, ref, memo, created_at, hash)
            select w.t, w.user_id, ${p.kind}, w.a, w.balance, w.r, w.m, ${at}, w.last_hash from w
            returning user_id, balance_after`,
      );
      return rows.map((r) => ({ userId: Number(r.user_id), balanceAfter: Number(r.balance_after) }));
    },
    async walletOf(userId: number): Promise<{ balance: number; held: number; tenantId: number } | undefined> {
      const rows = await db.select({ balance: wallets.balance, held: wallets.held, tenantId: wallets.tenantId }).from(wallets).where(eq(wallets.userId, userId));
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
     * Users whose balance differs from the sum of their ledger; and per user the first entry that
     * breaks the chain: its hash isn't hash(previous entry's hash, its own fields) (an edited,
     * deleted or inserted row), or its balance_after isn't the running sum; or the wallet's
     * last_hash isn't the newest entry's (entries removed from the end). One tenant's, or everyone's.
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
      const chains = await queryRows<{ user_id: string; id: string; balance_after: string; running: string; hash_ok: boolean }>(
        db,
        sql`select distinct on (user_id) user_id, id, balance_after, running, hash_ok from (
              select user_id, id, balance_after, sum(amount) over (partition by user_id order by id) as running,
                hash = ${entryHash(sql`lag(hash, 1, '') over (partition by user_id order by id)`, sql`kind`, sql`amount`, sql`ref`, sql`balance_after`, sql`created_at`)} as hash_ok
              from ledger_entries where ${entryScope}) r
            where not hash_ok or balance_after <> running
            order by user_id, id`,
      );
      const tails = await queryRows<{ user_id: string; id: string | null }>(
        db,
        sql`select w.user_id, last.id from wallets w
            left join lateral (select id, hash from ledger_entries l where l.user_id = w.user_id order by id desc limit 1) last on true
            where ${walletScope} and w.last_hash is distinct from last.hash`,
      );
      return {
        balances: balances.map((r) => ({ userId: Number(r.user_id), balance: r.balance, ledger: r.ledger })),
        chains: chains.map((r) => ({ userId: Number(r.user_id), entryId: Number(r.id), hashOk: r.hash_ok, balanceAfter: r.balance_after, running: r.running })),
        tails: tails.map((r) => ({ userId: Number(r.user_id), lastEntryId: r.id === null ? null : Number(r.id) })),
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
