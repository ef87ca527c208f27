/**
 * Ledger postings per second on PostgreSQL with 1, 16 and 64 concurrent users (each user posts
 * in turn; different users never wait on each other's balance row), with the hash chain; then, to
 * show what stands between the figure and its aim, the same 64 workers doing only `select 1`
 * through the same pool (the round-trip ceiling of this machine) and the posting statement
 * without the chain. Needs PostgreSQL:
 * BENCH_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test (a fresh database is created
 * and dropped).
 */
import crypto from 'node:crypto';
import pg from 'pg';
import { sql } from 'drizzle-orm';
import { openPostgres } from '../apps/server/src/db/client.ts';
import { createLedgerService } from '../apps/server/src/modules/wallet/ledger.service.ts';
import { createLedgerRepository } from '../apps/server/src/modules/wallet/ledger.repository.ts';
import { seedDemo } from '../apps/server/src/db/seed.ts';
import { tenants } from '../apps/server/src/db/schema/tenant.ts';
import { users } from '../apps/server/src/db/schema/user.ts';
import { wallets } from '../apps/server/src/db/schema/wallet.ts';
import { systemClock } from '../apps/server/src/lib/clock.ts';

export async function benchLedger(seconds: number): Promise<string[]> {
  const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const name = `suanli_bench_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await openPostgres(url.toString(), { max: 64 });
  const lines: string[] = [];
  try {
    await seedDemo(database.db, () => {});
    const [tenant] = await database.db.select({ id: tenants.id }).from(tenants).limit(1);
    if (!tenant) throw new Error('no tenant');
    const people = await database.db
      .insert(users)
      .values(Array.from({ length: 64 }, (_, i) => ({ tenantId: tenant.id, phone: `1370000${String(i).padStart(4, '0')}`, userName: `bench${i}`, passwordHash: 'x' })))
      .returning({ id: users.id });
    await database.db.insert(wallets).values(people.map((p) => ({ userId: p.id, tenantId: tenant.id })));
    const ledger = createLedgerService({ db: database.db, clock: systemClock });
    let seq = 0;
    const rate = async (concurrency: number, op: (userId: number) => Promise<unknown>) => {
      const deadline = Date.now() + seconds * 1000;
      let done = 0;
      await Promise.all(
        people.slice(0, concurrency).map(async (p) => {
          while (Date.now() < deadline) {
            await op(p.id);
            done++;
          }
        }),
      );
      return done / seconds;
    };
    for (const concurrency of [1, 16, 64]) {
      const perSecond = await rate(concurrency, (userId) => ledger.post({ tenantId: tenant.id, userId, kind: 'recharge', amount: 10_000, ref: `bench:${seq++}` }));
      lines.push(`[bench] ledger postings on PostgreSQL with the hash chain, ${concurrency} concurrent user(s): ${perSecond.toFixed(0)} postings/s${concurrency === 64 ? ' (aim 10,000)' : ''}`);
    }
    const roundTrips = await rate(64, () => database.db.execute(sql`select 1`));
    lines.push(`[bench]   what stands in the way: \`select 1\` by the same 64 workers through the same pool: ${roundTrips.toFixed(0)} round trips/s (no posting can beat this)`);
    const viaRepository = await rate(64, (userId) =>
      createLedgerRepository(database.db).postAtomically({ tenantId: tenant.id, userId, kind: 'recharge', amount: 10_000, ref: `bench:${seq++}`, memo: '', allowNegative: false, at: new Date() }),
    );
    lines.push(`[bench]   the chained statement alone (repository, no service around it), 64 users: ${viaRepository.toFixed(0)} postings/s`);
    const unchained = await rate(64, (userId) =>
      database.db.execute(sql`with w as (update wallets set balance = balance + 10000, updated_at = now() where user_id = ${userId} and tenant_id = ${tenant.id} returning balance)
        insert into ledger_entries (tenant_id, user_id, kind, amount, balance_after, ref, memo, created_at, hash)
        select ${tenant.id}, ${userId}, 'adjustment', 10000, w.balance, ${`bench:plain:${seq++}`}, '', now(), '' from w`),
    );
    lines.push(`[bench]   the same statement without computing the chain, 64 users: ${unchained.toFixed(0)} postings/s`);
    // those rows carry no hash: take them out again so the check below speaks about the chained postings
    await database.db.execute(sql`delete from ledger_entries where kind = 'adjustment' and ref like 'bench:plain:%'`);
    await database.db.execute(sql`update wallets w set balance = coalesce((select sum(amount) from ledger_entries l where l.user_id = w.user_id), 0)`);
    const mismatches = await ledger.check();
    lines.push(`[bench] ledger check after the run: ${mismatches.length === 0 ? 'ok' : `${mismatches.length} mismatches`}`);
  } catch (err) {
    console.error('[bench] ledger benchmark failed:', err);
    throw err;
  } finally {
    await database.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
  return lines;
}
