import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { engines, openTestDatabase } from '../helpers/db.ts';
import { createJobQueue, enqueueJob } from '../../src/jobs/queue.ts';
import { queryRows, type Database } from '../../src/db/client.ts';
import { systemClock } from '../../src/lib/clock.ts';

const quiet = { info: () => {}, error: () => {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(engines)('job queue concurrency on %s', (engine) => {
  let database: Database;
  beforeAll(async () => {
    database = await openTestDatabase(engine);
  });
  afterAll(() => database.close());
  const clear = () => database.db.execute(sql`delete from jobs`);

  it('runs a kind at most its limit at once, and other kinds beside it', async () => {
    await clear();
    let running = 0;
    let peak = 0;
    let open = () => {};
    const gate = { promise: new Promise<void>((resolve) => (open = resolve)), resolve: () => open() };
    const queue = createJobQueue({
      db: database.db,
      clock: systemClock,
      handlers: {
        slow: async () => {
          running++;
          peak = Math.max(peak, running);
          await gate.promise;
          running--;
        },
        quick: async () => {},
      },
      kinds: { slow: { concurrency: 3 } },
    });
    for (let i = 0; i < 10; i++) await enqueueJob(database.db, 'slow', { i });
    for (let i = 0; i < 5; i++) await enqueueJob(database.db, 'quick', { i });
    const all = queue.runDue();
    // the quick ones finish while every slow slot is taken
    for (let i = 0; i < 200; i++) {
      const [r] = await queryRows<{ n: string }>(database.db, sql`select count(*) as n from jobs where kind = 'quick' and status = 'done'`);
      if (Number(r?.n) === 5) break;
      await sleep(10);
    }
    const [done] = await queryRows<{ n: string }>(database.db, sql`select count(*) as n from jobs where kind = 'quick' and status = 'done'`);
    expect(Number(done?.n)).toBe(5);
    expect(running).toBe(3);
    gate.resolve();
    expect(await all).toBe(15);
    expect(peak).toBe(3);
  });

  it('an enqueue in this process wakes the loop: the job doesn’t wait for the next poll', async () => {
    await clear();
    let ran = false;
    const queue = createJobQueue({ db: database.db, clock: systemClock, handlers: { ping: async () => void (ran = true) } });
    const loop = queue.start(quiet, 3_600_000); // an hour between polls
    try {
      await sleep(100); // the first look found nothing
      await database.db.transaction(async (tx) => enqueueJob(tx, 'ping', {}));
      for (let i = 0; i < 250 && !ran; i++) await sleep(20);
      expect(ran).toBe(true);
    } finally {
      await loop.stop();
    }
  });

  it('abandons an attempt at its kind’s timeout, even if the handler ignores the signal', async () => {
    await clear();
    let aborted = false;
    const queue = createJobQueue({
      db: database.db,
      clock: systemClock,
      handlers: {
        stuck: (_p, ctx) => {
          ctx.signal.addEventListener('abort', () => (aborted = true));
          return new Promise<void>(() => {});
        },
      },
      kinds: { stuck: { timeoutMs: 100 } },
    });
    await enqueueJob(database.db, 'stuck', {});
    expect(await queue.runDue()).toBe(1);
    expect(aborted).toBe(true);
    const [row] = await queryRows<{ status: string; last_error: string }>(database.db, sql`select status, last_error from jobs where kind = 'stuck'`);
    expect(row).toEqual({ status: 'queued', last_error: 'stuck: timed out after 100 ms' });
  });

  it('500 jobs claimed by two queues at once: each runs exactly once, within each queue’s global limit', async () => {
    await clear();
    const seen = new Map<number, number>();
    let running = 0;
    let peak = 0;
    const handler = async (p: Record<string, unknown>) => {
      running++;
      peak = Math.max(peak, running);
      await sleep(5);
      seen.set(Number(p.i), (seen.get(Number(p.i)) ?? 0) + 1);
      running--;
    };
    const a = createJobQueue({ db: database.db, clock: systemClock, handlers: { work: handler }, concurrency: 20, kinds: { work: { concurrency: 50 } } });
    const b = createJobQueue({ db: database.db, clock: systemClock, handlers: { work: handler }, concurrency: 20, kinds: { work: { concurrency: 50 } } });
    await database.db.execute(sql`insert into jobs (kind, payload) select 'work', jsonb_build_object('i', g) from generate_series(1, 500) g`);
    const la = a.start(quiet, 20);
    const lb = b.start(quiet, 20);
    for (let i = 0; i < 1500 && seen.size < 500; i++) await sleep(20);
    await la.stop();
    await lb.stop();
    expect(seen.size).toBe(500);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect(peak).toBeLessThanOrEqual(40);
    expect(peak).toBeGreaterThan(1);
  }, 60_000);
});
