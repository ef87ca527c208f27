import { setMaxListeners } from 'node:events';
import { sql } from 'drizzle-orm';
import { queryRows, type Db, type DbOrTx } from '../db/client.ts';
import { jobs } from '../db/schema/job.ts';
import type { Clock } from '../lib/clock.ts';

/**
 * What a handler gets besides its payload. `signal` aborts when the kind's timeout passes or the
 * queue stops: pass it to every outbound call (fetch's `signal`), so a target that never answers
 * costs one slot for `timeoutMs` and nothing more.
 */
export type JobContext = { signal: AbortSignal; attempt: number };
export type JobHandler = (payload: Record<string, unknown>, ctx: JobContext) => Promise<void>;
type Logger = { info: (o: object, m?: string) => void; error: (o: object, m?: string) => void };

/** How often a kind of job is tried, and how far apart (exponential back-off, capped). */
export type RetryPolicy = { maxAttempts: number; maxBackoffSeconds: number };
/**
 * Per kind: how many of its jobs run at once in this process, how long one attempt may take
 * (then it is abandoned, counted as failed and retried), and its retry policy.
 */
export type JobKindOptions = { concurrency?: number; timeoutMs?: number; retry?: RetryPolicy };

const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 6, maxBackoffSeconds: 600 };
const DEFAULT_KIND = { concurrency: 16, timeoutMs: 30_000 };
/** Jobs of all kinds at once in this process. */
export const DEFAULT_JOB_CONCURRENCY = 64;
/** A job still 'running' this long after its attempt's timeout belonged to a process that died: claimed again. */
const STALE_GRACE_SECONDS = 60;
/** An enqueue wakes the loop at once and once more shortly after (the enqueuing transaction may commit later). */
const WAKE_RECHECK_MS = 50;

/** Enqueues in this process wake the running queues at once instead of at the next poll. */
const enqueued = new EventTarget();

/** Adds a job in the caller's transaction, so it exists only if the work that asked for it commits. */
export async function enqueueJob(db: DbOrTx, kind: string, payload: Record<string, unknown>, runAt?: Date): Promise<void> {
  await db.insert(jobs).values({ kind, payload, ...(runAt ? { runAt } : {}) });
  enqueued.dispatchEvent(new Event('job'));
}

export class JobTimeoutError extends Error {
  constructor(kind: string, ms: number) {
    super(`${kind}: timed out after ${ms} ms`);
    this.name = 'JobTimeoutError';
  }
}

type Claimed = { id: number; kind: string; payload: Record<string, unknown>; attempts: number };

/**
 * A persisted job queue. Any number of processes claim due jobs in batches with FOR UPDATE SKIP
 * LOCKED, so a job runs once; each process runs up to `concurrency` jobs at once, and at most each
 * kind's own limit of one kind, so a kind whose targets hang can fill only its own slots. Every
 * attempt has a deadline (its kind's `timeoutMs`, aborting `ctx.signal`); a failure is retried with
 * exponential back-off, then marked failed. Only kinds this process has a handler for are claimed.
 */
export function createJobQueue(deps: {
  db: Db;
  clock: Clock;
  handlers: Record<string, JobHandler>;
  kinds?: Record<string, JobKindOptions>;
  /** Jobs of all kinds at once in this process (DEFAULT_JOB_CONCURRENCY). */
  concurrency?: number;
  /** How often the started loop looks for due jobs when nothing woke it (ms). */
  pollMs?: number;
  /** Metrics (GET /metrics): each attempt's duration and outcome. */
  onAttempt?: (kind: string, seconds: number, outcome: 'done' | 'retry' | 'failed') => void;
}) {
  const { db, clock, handlers } = deps;
  const globalLimit = Math.max(1, deps.concurrency ?? DEFAULT_JOB_CONCURRENCY);
  const optionsOf = (kind: string) => {
    const o = deps.kinds?.[kind];
    return {
      concurrency: Math.max(1, o?.concurrency ?? DEFAULT_KIND.concurrency),
      timeoutMs: o?.timeoutMs ?? DEFAULT_KIND.timeoutMs,
      retry: o?.retry ?? DEFAULT_RETRY,
    };
  };
  const inflight = new Map<string, number>();
  let inflightTotal = 0;
  /** Aborts every running attempt when the queue is stopped and the grace period is over. */
  const stopping = new AbortController();
  setMaxListeners(0, stopping.signal); // one listener per running attempt, by design

  /** Claims as many due jobs as there are free slots, per kind and in all, in one statement. */
  async function claim(): Promise<Claimed[]> {
    const globalFree = globalLimit - inflightTotal;
    if (globalFree <= 0) return [];
    const limits = Object.keys(handlers)
      .map((kind) => {
        const o = optionsOf(kind);
        return { kind, free: Math.min(o.concurrency - (inflight.get(kind) ?? 0), globalFree), staleSecs: Math.ceil(o.timeoutMs / 1000) + STALE_GRACE_SECONDS };
      })
      .filter((k) => k.free > 0);
    if (limits.length === 0) return [];
    const now = clock().toISOString();
    const k = sql.join(
      limits.map((l) => sql`(${l.kind}::text, ${l.free}::int, ${l.staleSecs}::int)`),
      sql`, `,
    );
    const rows = await queryRows<{ id: string | number; kind: string; payload: Record<string, unknown>; attempts: number }>(
      db,
      sql`with k(kind, n, stale) as (values ${k}),
          picked as (
            select c.id from k cross join lateral (
              select j.id, j.run_at from ${jobs} j
              where j.kind = k.kind
                -- The clock has millisecond precision, PostgreSQL's now() (run_at's default) microseconds:
                -- a job enqueued in the same millisecond is due, not 0.5 ms in the future.
                and ((j.status = 'queued' and j.run_at < ${now}::timestamptz + interval '1 millisecond')
                  or (j.status = 'running' and j.locked_at < ${now}::timestamptz - make_interval(secs => k.stale)))
              order by j.run_at limit k.n
              for update skip locked) c
            order by c.run_at limit ${globalFree})
          update ${jobs} set status = 'running', locked_at = ${now}::timestamptz, attempts = ${jobs}.attempts + 1
          from picked where ${jobs}.id = picked.id
          returning ${jobs}.id, ${jobs}.kind, ${jobs}.payload, ${jobs}.attempts`,
    );
    return rows.map((r) => ({ id: Number(r.id), kind: r.kind, payload: r.payload, attempts: Number(r.attempts) }));
  }

  // Jobs finishing together are recorded done in one statement (one round trip for a burst).
  let finished: { id: number; attempts: number; resolve: () => void; reject: (err: unknown) => void }[] = [];
  function markDone(job: Claimed): Promise<void> {
    return new Promise((resolve, reject) => {
      finished.push({ id: job.id, attempts: job.attempts, resolve, reject });
      if (finished.length === 1) setImmediate(() => void flushDone());
    });
  }
  async function flushDone() {
    const batch = finished;
    finished = [];
    try {
      const rows = sql.join(
        batch.map((f) => sql`(${f.id}::bigint, ${f.attempts}::int)`),
        sql`, `,
      );
      // Guarded by the attempt: if one was presumed dead and claimed again, the newer attempt owns the row.
      await db.execute(sql`
        update ${jobs} set status = 'done', finished_at = now(), last_error = null
        from (values ${rows}) as f(id, attempts)
        where ${jobs}.id = f.id and ${jobs}.attempts = f.attempts and ${jobs}.status = 'running'`);
      for (const f of batch) f.resolve();
    } catch (err) {
      for (const f of batch) f.reject(err);
    }
  }

  async function runJob(job: Claimed, log?: Logger): Promise<void> {
    const { timeoutMs, retry } = optionsOf(job.kind);
    const attempt = new AbortController();
    const timer = setTimeout(() => attempt.abort(new JobTimeoutError(job.kind, timeoutMs)), timeoutMs);
    const onStop = () => attempt.abort(new Error(`${job.kind}: stopped with the server`));
    const began = performance.now();
    stopping.signal.addEventListener('abort', onStop, { once: true });
    try {
      const handler = handlers[job.kind];
      if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
      // A handler that ignores the signal is abandoned at the deadline all the same: its slot is freed.
      const aborted = new Promise<never>((_, reject) => attempt.signal.addEventListener('abort', () => reject(attempt.signal.reason as Error), { once: true }));
      await Promise.race([handler(job.payload, { signal: attempt.signal, attempt: job.attempts }), aborted]);
      await markDone(job);
      deps.onAttempt?.(job.kind, (performance.now() - began) / 1000, 'done');
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const final = job.attempts >= retry.maxAttempts;
      deps.onAttempt?.(job.kind, (performance.now() - began) / 1000, final ? 'failed' : 'retry');
      const backoffSecs = Math.min(2 ** job.attempts, retry.maxBackoffSeconds);
      log?.error({ jobId: job.id, kind: job.kind, err: message, final }, 'job failed');
      await db
        .execute(
          sql`update ${jobs} set status = ${final ? 'failed' : 'queued'}, last_error = ${message.slice(0, 2000)},
                run_at = ${clock().toISOString()}::timestamptz + make_interval(secs => ${backoffSecs}), locked_at = null
              where id = ${job.id} and status = 'running' and attempts = ${job.attempts}`,
        )
        .catch((e: unknown) => log?.error({ jobId: job.id, err: e }, 'recording a job failure failed'));
    } finally {
      clearTimeout(timer);
      stopping.signal.removeEventListener('abort', onStop);
    }
  }

  /** Starts a claimed job in a slot; the slot is freed (and `onFree` called) when it settles. */
  function launch(job: Claimed, log: Logger | undefined, onFree: () => void): Promise<void> {
    inflight.set(job.kind, (inflight.get(job.kind) ?? 0) + 1);
    inflightTotal++;
    return runJob(job, log).finally(() => {
      inflight.set(job.kind, (inflight.get(job.kind) ?? 1) - 1);
      inflightTotal--;
      onFree();
    });
  }

  /**
   * Runs every job due now (and any that become due while it runs), concurrently within the
   * limits; resolves when none is left; returns how many ran. Tests call it to make background work happen.
   */
  async function runDue(log?: Logger): Promise<number> {
    let ran = 0;
    let freed = 0;
    const active = new Set<Promise<void>>();
    for (;;) {
      const freedBefore = freed;
      const claimed = await claim();
      for (const job of claimed) {
        ran++;
        const p: Promise<void> = launch(job, log, () => {
          active.delete(p);
          freed++;
        });
        active.add(p);
      }
      if (claimed.length > 0 && inflightTotal < globalLimit) continue; // there may be more of other kinds
      if (active.size === 0) {
        // A claim sizes itself by the free slots before its round trip; slots freed during it (jobs
        // that finished meanwhile) weren't offered, so claim again before calling it done.
        if (freed !== freedBefore) continue;
        return ran;
      }
      await Promise.race(active);
    }
  }

  /**
   * The background loop: claims whenever a slot frees, a job is enqueued in this process, or every
   * `pollMs` (jobs enqueued by other processes, retries coming due); never while every slot is busy.
   */
  function start(log: Logger, pollMs = deps.pollMs ?? 500) {
    let stopped = false;
    let pumping: Promise<void> | undefined;
    let again = false;
    const active = new Set<Promise<void>>();

    const pump = async () => {
      if (stopped) return;
      if (pumping) {
        again = true;
        return;
      }
      let done = () => {};
      pumping = new Promise<void>((resolve) => (done = resolve));
      try {
        do {
          again = false;
          const claimed = await claim();
          for (const job of claimed) {
            const p: Promise<void> = launch(job, log, () => {
              active.delete(p);
              kick();
            });
            active.add(p);
          }
          // A full batch may have left more due jobs behind; an empty one means wait for a reason.
          if (claimed.length > 0 && inflightTotal < globalLimit) again = true;
        } while (again && !stopped);
      } catch (err) {
        log.error({ err }, 'job loop failed');
      } finally {
        pumping = undefined;
        done();
      }
    };
    let kicked = false;
    const kick = () => {
      if (kicked || stopped) return;
      kicked = true;
      setImmediate(() => {
        kicked = false;
        void pump();
      });
    };
    const onEnqueue = () => {
      kick();
      setTimeout(kick, WAKE_RECHECK_MS).unref();
    };
    enqueued.addEventListener('job', onEnqueue);
    const timer = setInterval(kick, pollMs);
    kick();

    return {
      /** Stops claiming; running attempts get `graceMs` to finish, then their signals abort. */
      async stop(graceMs = 5_000) {
        stopped = true;
        clearInterval(timer);
        enqueued.removeEventListener('job', onEnqueue);
        await pumping; // a claim in flight still launches what it claimed
        const all = Promise.allSettled([...active]);
        let graceTimer: NodeJS.Timeout | undefined;
        await Promise.race([all, new Promise((resolve) => (graceTimer = setTimeout(resolve, graceMs)))]);
        clearTimeout(graceTimer);
        stopping.abort();
        await all;
      },
    };
  }

  return { runDue, start };
}
export type JobQueue = ReturnType<typeof createJobQueue>;
