import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { sql } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { createTestClock } from '../helpers/clock.ts';
import { createUser } from '../helpers/factories.ts';
import { billsOf, insertInstance, meterOf, paygCharged, recharge, startMeter } from '../helpers/metering.ts';
import { createFakePlatform } from '../fakes/metering.ts';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), '../helpers/metering-settle-child.ts');
const S = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A settlement killed with SIGKILL in the middle (its meters and bills written, its ledger posting
 * not yet) loses and doubles nothing: PostgreSQL only (a second process on the same database).
 */
describe.runIf(process.env.TEST_DATABASE_URL)('metering: kill -9 mid-settlement on postgres', () => {
  let t: TestApp;
  const clock = createTestClock();
  beforeAll(async () => {
    t = await buildTestApp({ engine: 'postgres', clock, overrides: { platform: createFakePlatform() } });
  });
  afterAll(() => t.close());

  it('rolls back entirely; the next settlement charges exactly once and the ledger checks clean', async () => {
    const users = await Promise.all(Array.from({ length: 4 }, () => createUser(t)));
    const insts = [];
    for (const { user } of users) {
      await recharge(t, user, 10_000);
      for (let i = 0; i < 3; i++) insts.push(await insertInstance(t, { tenantId: user.tenantId, userId: user.id, hourly: 36_000 }));
    }
    const t0 = clock().getTime();
    for (const i of insts) await startMeter(t, i, new Date(t0));
    const now = new Date(t0 + 90 * S);

    const rows = (await t.container.db.execute(sql`select current_database() as name`)) as unknown as { rows: { name: string }[] };
    const url = new URL(process.env.TEST_DATABASE_URL as string);
    url.pathname = `/${rows.rows[0]?.name}`;
    url.searchParams.set('application_name', 'settle-child');

    // Hold one user's wallet, so the child stops inside its transaction at the ledger posting.
    const holder = new pg.Client({ connectionString: url.toString().replace('settle-child', 'lock-holder') });
    await holder.connect();
    await holder.query('begin');
    await holder.query('select 1 from wallets where user_id = $1 for update', [users[2]?.user.id]);
    // pg_stat_activity is read once per transaction: watch from a connection of its own.
    const watcher = new pg.Client({ connectionString: url.toString().replace('settle-child', 'watcher') });
    await watcher.connect();

    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], { env: { ...process.env, SETTLE_URL: url.toString(), SETTLE_NOW: now.toISOString() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once('exit', (code, signal) => {
        out += ` (exit ${code} ${signal})`;
        resolve(signal);
      }),
    );

    // Wait (the child may take a while to start on a loaded machine) until the child's transaction is blocked on the held wallet: its meters and bills are written (uncommitted).
    let blocked = false;
    for (let i = 0; i < 1800 && !blocked; i++) {
      const r = await watcher.query<{ n: string }>("select count(*) as n from pg_stat_activity where application_name = 'settle-child' and wait_event_type = 'Lock'");
      blocked = Number(r.rows[0]?.n) > 0;
      if (!blocked) await sleep(100);
    }
    const seen = await watcher.query("select datname, application_name, state, wait_event_type, wait_event, left(query, 60) as q from pg_stat_activity where backend_type = 'client backend'");
    expect(blocked, `child never reached the ledger posting: ${out} ${JSON.stringify(seen.rows)}`).toBe(true);
    const inTx = await watcher.query<{ n: string }>("select count(*) as n from pg_stat_activity where application_name = 'settle-child' and xact_start is not null and backend_xid is not null");
    expect(Number(inTx.rows[0]?.n)).toBe(1); // it has written rows in its transaction
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    expect(out).not.toContain('settled');

    await holder.query('commit');
    // The dead client's backend finds its socket closed and aborts its transaction.
    for (let i = 0; i < 300; i++) {
      const r = await watcher.query<{ n: string }>("select count(*) as n from pg_stat_activity where application_name = 'settle-child'");
      if (Number(r.rows[0]?.n) === 0) break;
      await sleep(100);
    }
    await holder.end();
    await watcher.end();

    for (const { user } of users) expect(await paygCharged(t.container.db, user.id)).toBe(0);
    for (const i of insts) {
      expect(await billsOf(t.container.db, i.id)).toEqual([]);
      expect((await meterOf(t.container.db, i.id))?.billedMs).toBe(0);
    }

    await t.container.metering.settle(now);
    await t.container.metering.settle(now); // and a retry changes nothing
    for (const { user } of users) expect(await paygCharged(t.container.db, user.id)).toBe(3 * 900);
    for (const i of insts) expect((await billsOf(t.container.db, i.id)).map((b) => b.amount)).toEqual([900]);
    expect(await t.container.ledger.check()).toEqual([]);
  }, 240_000);
});
