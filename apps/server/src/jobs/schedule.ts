import type { Leadership } from './leader.ts';

type Logger = { error: (o: object, m?: string) => void };

/**
 * A piece of scheduled work: reconciliation now; metering, expiry and release next. `run` should be
 * short (typically: enqueue a job, so the work itself gets the queue's retries and any replica can
 * take it) and safe to repeat, since a new leader starts with its own timers.
 */
export type ScheduledTask = { name: string; everyMs: number; run: () => Promise<unknown> };

/**
 * Every timer of the server, in one place, behind one leader (DESIGN §3 `jobs/schedule.ts`): each
 * tick asks the leadership first, so of replicas on one database exactly one runs the tasks.
 */
export function createScheduler(deps: { leadership: Leadership; tasks: ScheduledTask[]; log: Logger; tickMs?: number; now?: () => number }) {
  const tickMs = deps.tickMs ?? 1_000;
  const now = deps.now ?? Date.now;
  const lastRun = new Map<string, number>();

  /** One tick: returns the names of the tasks this process ran (none unless it leads). */
  async function tick(): Promise<string[]> {
    if (!(await deps.leadership.check())) {
      lastRun.clear(); // leading again later starts afresh
      return [];
    }
    const ran: string[] = [];
    for (const task of deps.tasks) {
      const last = lastRun.get(task.name);
      if (last !== undefined && now() - last < task.everyMs) continue;
      lastRun.set(task.name, now());
      ran.push(task.name);
      try {
        await task.run();
      } catch (err) {
        deps.log.error({ err, task: task.name }, 'scheduled task failed');
      }
    }
    return ran;
  }

  function start() {
    let stopped = false;
    let running: Promise<unknown> = Promise.resolve();
    const loop = () => {
      if (stopped) return;
      running = tick()
        .catch((err: unknown) => deps.log.error({ err }, 'scheduler tick failed'))
        .finally(() => {
          if (!stopped) timer = setTimeout(loop, tickMs);
        });
    };
    let timer: NodeJS.Timeout | undefined;
    loop();
    return {
      async stop() {
        stopped = true;
        clearTimeout(timer);
        await running;
        await deps.leadership.release();
      },
    };
  }

  return { tick, start };
}
export type Scheduler = ReturnType<typeof createScheduler>;
