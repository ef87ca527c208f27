/**
 * One metering tick over 10,000 running pay-as-you-go instances of 2,500 users on PostgreSQL: the
 * set-based settlement (one statement for the meters and bills, one bulk ledger posting per
 * batch). BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test
 * (a fresh database is created and dropped).
 */
import crypto from 'node:crypto';
import pg from 'pg';
import { sql } from 'drizzle-orm';
import { openPostgres } from '../apps/server/src/db/client.ts';
import { seedDemo } from '../apps/server/src/db/seed.ts';
import { createLedgerService } from '../apps/server/src/modules/wallet/ledger.service.ts';
import { createMeteringService } from '../apps/server/src/modules/metering/metering.service.ts';

const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 10_000);
const USERS = Number(process.env.BENCH_USERS ?? 2_500);

export async function benchSettlement(): Promise<string[]> {
  const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const name = `suanli_bench_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await openPostgres(url.toString(), { max: 8 });
  const { db } = database;
  const lines: string[] = [];
  try {
    await seedDemo(db, () => {}, { gpus: [] });
    const t0 = new Date('2026-11-01T00:00:00Z');
    // Users, wallets with ¥100 (an opening recharge entry each, so the chain has a predecessor),
    // instances and running meters, all in bulk SQL.
    await db.execute(sql`
      with t as (select id from tenants where code = 'demo'),
      u as (
        insert into users (tenant_id, phone, user_name, password_hash, role)
        select t.id, '138' || lpad(g::text, 8, '0'), 'bench' || g, 'x', 'user' from t, generate_series(1, ${USERS}) g
        returning id, tenant_id)
      insert into wallets (user_id, tenant_id) select id, tenant_id from u`);
    const ledger = createLedgerService({ db, clock: () => t0 });
    const users = (await db.execute(sql`select w.user_id as id, w.tenant_id from wallets w join users u on u.id = w.user_id where u.role = 'user'`)) as unknown as { rows: { id: string; tenant_id: number }[] };
    await db.transaction((tx) =>
      ledger.postBulk(
        tx,
        'recharge',
        users.rows.map((u) => ({ tenantId: u.tenant_id, userId: Number(u.id), amount: 1_000_000, ref: 'bench:opening' })),
      ),
    );
    await db.execute(sql`insert into images (slug, name, status, root_path) values ('bench', 'bench', 'ready', '/nonexistent')`);
    await db.execute(sql`
      with u as (select u.id, u.tenant_id, row_number() over (order by u.id) - 1 as k from users u where u.role = 'user'),
      m as (select id from machines where tenant_id = (select id from tenants where code = 'demo') order by id limit 1),
      img as (select id from images where slug = 'bench'),
      i as (
        insert into instances (id, tenant_id, user_id, machine_id, name, status, charge_type, gpu_count, cpu_cores, memory_gb, system_disk_gb, data_disk_gb, image_id, hourly, password_sealed, password_hash)
        select 'i-' || lpad(to_hex(g), 10, '0'), u.tenant_id, u.id, m.id, 'bench' || g, 'running', 'payg', 1, 1, 1, 30, 50, img.id, 21800, 's', 'h'
        from generate_series(0, ${INSTANCES - 1}) g join u on u.k = g % ${USERS} cross join m cross join img
        returning id, tenant_id, user_id, hourly)
      insert into instance_meters (instance_id, tenant_id, user_id, hourly, running_since, settled_until)
      select id, tenant_id, user_id, hourly, ${t0.toISOString()}::timestamptz, ${t0.toISOString()}::timestamptz from i`);
    await db.execute(sql`analyze`);
    const refuse = async () => {
      throw new Error('bench: no platform actions expected');
    };
    let now = t0;
    const metering = createMeteringService({ db, clock: () => now, ledger: createLedgerService({ db, clock: () => now }), platform: { platformStop: refuse, platformRelease: refuse } });
    const timings: number[] = [];
    for (let k = 1; k <= 3; k++) {
      now = new Date(t0.getTime() + k * 60_000);
      const began = performance.now();
      const r = await metering.settle(now);
      timings.push(performance.now() - began);
      if (r.instances !== INSTANCES) throw new Error(`settled ${r.instances} instances, expected ${INSTANCES}`);
    }
    const best = Math.min(...timings);
    lines.push(
      `[bench] metering: one settlement tick over ${INSTANCES.toLocaleString('en')} running pay-as-you-go instances of ${USERS.toLocaleString('en')} users on PostgreSQL: ${timings.map((t) => `${t.toFixed(0)} ms`).join(', ')} (3 ticks; best ${best.toFixed(0)} ms; aim ≤ 1 s)`,
    );
    const mismatches = await ledger.check();
    lines.push(`[bench] ledger check after the ticks: ${mismatches.length === 0 ? 'ok' : `${mismatches.length} mismatches`}`);
  } finally {
    await database.close();
    if (process.env.BENCH_KEEP) console.log(`[bench] kept database ${name}`);
    else await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
  return lines;
}
