import type pg from 'pg';

type Logger = { info: (o: object, m?: string) => void; warn: (o: object, m?: string) => void };

/**
 * Who runs the scheduled ticks. `check()` is asked before every tick: true while this process
 * leads (taking the lead when it is free), false otherwise.
 */
export type Leadership = {
  check(): Promise<boolean>;
  /** Gives the lead up (on shutdown), so another replica takes over at its next tick. */
  release(): Promise<void>;
};

/** PGlite is one process's database: that process is the leader. */
export function singleProcessLeadership(): Leadership {
  return { check: async () => true, release: async () => {} };
}

/** Any positive 63-bit number, distinct from the migration lock (db/client.ts). */
export const SCHEDULER_LOCK = 726_551_002;

/**
 * Leadership as a PostgreSQL session-level advisory lock (pg_try_advisory_lock) on a dedicated
 * connection held for as long as this process leads. The lock lives and dies with that session:
 * a replica that stops releases it, one that crashes or loses its connection loses it when
 * PostgreSQL ends the session, and a follower takes it at its next check. While leading, each
 * check also proves the session is still alive (a round trip on it): a leader that can't reach
 * its session stops leading at once instead of running ticks beside a new leader.
 */
export function advisoryLockLeadership(deps: { session: () => Promise<pg.PoolClient>; key?: number; log?: Logger }): Leadership {
  const key = deps.key ?? SCHEDULER_LOCK;
  let client: pg.PoolClient | undefined;
  let leading = false;
  let broken = false;

  const drop = (err?: unknown) => {
    if (leading) deps.log?.warn({ err }, 'scheduler: lost the leader lock');
    leading = false;
    const c = client;
    client = undefined;
    broken = false;
    // Destroyed rather than returned to the pool: the session (and any lock on it) must end.
    c?.release(err instanceof Error ? err : new Error('leader session dropped'));
  };

  return {
    async check() {
      try {
        if (broken) drop(new Error('leader session failed'));
        if (!client) {
          client = await deps.session();
          client.on('error', () => {
            broken = true;
          });
        }
        if (leading) {
          await client.query('select 1');
          return true;
        }
        const res = await client.query<{ ok: boolean }>('select pg_try_advisory_lock($1) as ok', [key]);
        leading = res.rows[0]?.ok === true;
        if (leading) deps.log?.info({ key }, 'scheduler: this replica leads the scheduled work');
        return leading;
      } catch (err) {
        drop(err);
        return false;
      }
    },
    async release() {
      const c = client;
      if (!c) return;
      try {
        if (leading) await c.query('select pg_advisory_unlock($1)', [key]);
        leading = false;
        client = undefined;
        c.release();
      } catch (err) {
        drop(err);
      }
    },
  };
}
