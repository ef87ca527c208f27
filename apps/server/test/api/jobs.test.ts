import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { openTestDatabase } from '../helpers/db.ts';
import { createTestClock } from '../helpers/clock.ts';
import { createJobQueue, enqueueJob } from '../../src/jobs/queue.ts';
import { jobs } from '../../src/db/schema/job.ts';
import type { Database } from '../../src/db/client.ts';

describe('the persisted job queue', () => {
  let database: Database;
  const clock = createTestClock();
  beforeAll(async () => {
    database = await openTestDatabase('pglite');
  });
  afterAll(() => database.close());

  it('retries a failing job with capped exponential back-off, then marks it failed', async () => {
    let calls = 0;
    const queue = createJobQueue({
      db: database.db,
      clock,
      handlers: {
        flaky: async () => {
          calls++;
          throw new Error('gateway down');
        },
      },
      kinds: { flaky: { retry: { maxAttempts: 4, maxBackoffSeconds: 5 } } },
    });
    await enqueueJob(database.db, 'flaky', { n: 1 }, clock());
    expect(await queue.runDue()).toBe(1);
    expect(await queue.runDue()).toBe(0); // not due again until its back-off passes
    clock.advance(2_000); // 2^1 s
    expect(await queue.runDue()).toBe(1);
    clock.advance(4_000); // 2^2 s
    expect(await queue.runDue()).toBe(1);
    clock.advance(5_000); // 2^3 s, capped at 5 s
    expect(await queue.runDue()).toBe(1);
    clock.advance(60_000);
    expect(await queue.runDue()).toBe(0); // 4 attempts: given up
    expect(calls).toBe(4);
    const [row] = await database.db.select().from(jobs).where(eq(jobs.kind, 'flaky'));
    expect(row).toMatchObject({ status: 'failed', attempts: 4, lastError: 'gateway down' });
  });

  it('runs a job once and records it done', async () => {
    const seen: unknown[] = [];
    const queue = createJobQueue({ db: database.db, clock, handlers: { ok: async (p) => void seen.push(p) } });
    await enqueueJob(database.db, 'ok', { id: 7 }, clock());
    expect(await queue.runDue()).toBe(1);
    expect(await queue.runDue()).toBe(0);
    expect(seen).toEqual([{ id: 7 }]);
  });
});
