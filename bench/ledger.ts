/**
 * Ledger postings per second on PostgreSQL with 1, 16 and 64 concurrent users (each user posts
 * in turn; different users never wait on each other's balance row). Needs PostgreSQL:
 * BENCH_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test (a fresh database is created
 * and dropped).
 */
import crypto from 'node:crypto';
import pg from 'pg';
import { openPostgres } from '../apps/server/src/db/client.ts';
import { createLedgerService } from '../apps/server/src/modules/wallet/ledger.service.ts';
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
    for (const concurrency of [1, 16, 64]) {
      const deadline = Date.now() + seconds * 1000;
      let done = 0;
      await Promise.all(
        people.slice(0, concurrency).map(async (p) => {
          while (Date.now() < deadline) {
            await ledger.post({ tenantId: tenant.id, userId: p.id, kind: 'recharge', amount: 10_000, ref: `bench:${seq++}` });
            done++;
          }
        }),
      );
      lines.push(`[bench] ledger postings on PostgreSQL, ${concurrency} concurrent user(s): ${(done / seconds).toFixed(0)} postings/s`);
    }
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
