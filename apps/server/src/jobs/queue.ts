import { sql } from 'drizzle-orm';
import { queryRows, type Db, type DbOrTx } from '../db/client.ts';
import { jobs } from '../db/schema/job.ts';
import type { Clock } from '../lib/clock.ts';

export type JobHandler = (payload: Record<string, unknown>) => Promise<void>;
type Logger = { info: (o: object, m?: string) => void; error: (o: object, m?: string) => void };

/** How often a kind of job is tried, and how far apart (exponential back-off, capped). */
export type RetryPolicy = { maxAttempts: number; maxBackoffSeconds: number };
const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 6, maxBackoffSeconds: 600 };
const STALE_MS = 5 * 60_000;

/** Adds a job in the caller's transaction, so it exists only if the work that asked for it commits. */
export async function enqueueJob(db: DbOrTx, kind: string, payload: Record<string, unknown>, runAt?: Date): Promise<void> {
  await db.insert(jobs).values({ kind, payload, ...(runAt ? { runAt } : {}) });
}

/**
 * A persisted job queue: any number of processes claim due jobs with FOR UPDATE SKIP LOCKED, so a
 * job runs once; a failure is retried with exponential back-off, then marked failed.
 */
export function createJobQueue(deps: { db: Db; clock: Clock; handlers: Record<string, JobHandler>; retry?: Record<string, RetryPolicy> }) {
  const { db, clock } = deps;

  async function claim() {
    const now = clock().toISOString();
    const rows = await queryRows<{ id: number; kind: string; payload: Record<string, unknown>; attempts: number }>(db, sql`
      update ${jobs} set status = 'running', locked_at = ${now}::timestamptz, attempts = attempts + 1
      where id = (
        select id from ${jobs}
        where (status = 'queued' and run_at <= ${now}::timestamptz)
           or (status = 'running' and locked_at < ${now}::timestamptz - make_interval(secs => ${STALE_MS / 1000}))
        order by run_at limit 1 for update skip locked)
      returning id, kind, payload, attempts`);
    return rows[0];
  }

  /** Runs every job due now; returns how many ran. Tests call it to make background work happen. */
  async function runDue(log?: Logger): Promise<number> {
    let ran = 0;
    for (let job = await claim(); job; job = await claim()) {
      ran++;
      const handler = deps.handlers[job.kind];
      try {
        if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
        await handler(job.payload);
        await db.execute(sql`update ${jobs} set status = 'done', finished_at = now(), last_error = null where id = ${job.id}`);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        const policy = deps.retry?.[job.kind] ?? DEFAULT_RETRY;
        const final = job.attempts >= policy.maxAttempts;
        const backoffSecs = Math.min(2 ** job.attempts, policy.maxBackoffSeconds);
        log?.error({ jobId: job.id, kind: job.kind, err: message, final }, 'job failed');
        await db.execute(sql`
          update ${jobs} set status = ${final ? 'failed' : 'queued'}, last_error = ${message.slice(0, 2000)},
            run_at = ${clock().toISOString()}::timestamptz + make_interval(secs => ${backoffSecs}), locked_at = null
          where id = ${job.id}`);
      }
    }
    return ran;
  }

  function start(log: Logger, intervalMs = 500) {
    let stopped = false;
    let running: Promise<unknown> = Promise.resolve();
    const timer = setInterval(() => {
      if (stopped) return;
      running = running.then(() => runDue(log)).catch((err: unknown) => log.error({ err }, 'job loop failed'));
    }, intervalMs);
    return {
      async stop() {
        stopped = true;
        clearInterval(timer);
        await running;
      },
    };
  }

  return { runDue, start };
}
export type JobQueue = ReturnType<typeof createJobQueue>;
