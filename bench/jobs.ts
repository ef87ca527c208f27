/**
 * Job queue throughput: jobs/s when every job waits on a slow target, and how much a crowd of
 * targets that never answer slows the others. PGlite always; PostgreSQL too (BENCH_DATABASE_URL,
 * else postgres://postgres@127.0.0.1:5432/test; a fresh database is created and dropped).
 */
import crypto from 'node:crypto';
import pg from 'pg';
import { sql } from 'drizzle-orm';
import { openPglite, openPostgres, type Database } from '../apps/server/src/db/client.ts';
import { createJobQueue, DEFAULT_JOB_CONCURRENCY } from '../apps/server/src/jobs/queue.ts';
import { systemClock } from '../apps/server/src/lib/clock.ts';

const quiet = { info: () => {}, error: () => {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function scenario(database: Database, label: string): Promise<string[]> {
  const { db } = database;
  const lines: string[] = [];
  const SLOW_MS = 100;
  const N = 2_000;
  let done = 0;
  const queue = createJobQueue({
    db,
    clock: systemClock,
    handlers: {
      // a target that takes SLOW_MS to answer (a gateway, a provisioning call)
      slow: async () => {
        await sleep(SLOW_MS);
        done++;
      },
      // a target that never answers: only the deadline ends it
      hang: (_p, ctx) => new Promise<void>((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted')))),
      quick: async () => void done++,
    },
    kinds: { slow: { concurrency: DEFAULT_JOB_CONCURRENCY }, hang: { concurrency: 32, timeoutMs: 60_000 }, quick: { concurrency: 32 } },
  });

  const drain = async (kind: string, n: number) => {
    done = 0;
    await db.execute(sql`insert into jobs (kind, payload) select ${kind}, jsonb_build_object('i', g) from generate_series(1, ${n}) g`);
    const started = performance.now();
    const loop = queue.start(quiet, 200);
    while (done < n) await sleep(5);
    const seconds = (performance.now() - started) / 1000;
    await loop.stop(0);
    return n / seconds;
  };

  const slow = await drain('slow', N);
  const ideal = (DEFAULT_JOB_CONCURRENCY * 1000) / SLOW_MS;
  lines.push(`[bench] job queue (${label}): ${N} jobs each waiting ${SLOW_MS} ms on its target, ${DEFAULT_JOB_CONCURRENCY} at once: ${slow.toFixed(0)} jobs/s (ideal ${ideal.toFixed(0)}; one at a time: ${(1000 / SLOW_MS).toFixed(0)})`);

  const alone = await drain('quick', N);
  lines.push(`[bench] job queue (${label}): ${N} quick jobs: ${alone.toFixed(0)} jobs/s`);
  await db.execute(sql`delete from jobs`);

  // the same quick jobs while 32 jobs hang on targets that never answer
  done = 0;
  await db.execute(sql`insert into jobs (kind, payload) select 'hang', '{}'::jsonb from generate_series(1, 32)`);
  await db.execute(sql`insert into jobs (kind, payload) select 'quick', jsonb_build_object('i', g) from generate_series(1, ${N}) g`);
  const started = performance.now();
  const loop = queue.start(quiet, 200);
  while (done < N) await sleep(5);
  const beside = N / ((performance.now() - started) / 1000);
  await loop.stop(0);
  lines.push(`[bench] job queue (${label}): ${N} quick jobs beside 32 that never answer: ${beside.toFixed(0)} jobs/s (${((beside / alone) * 100).toFixed(0)} % of alone)`);
  return lines;
}

export async function benchJobs(): Promise<string[]> {
  const lines: string[] = [];
  const lite = await openPglite();
  try {
    lines.push(...(await scenario(lite, 'PGlite')));
  } finally {
    await lite.close();
  }
  const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const name = `suanli_bench_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await openPostgres(url.toString(), { max: 20 });
  try {
    lines.push(...(await scenario(database, 'PostgreSQL')));
  } finally {
    await database.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
  return lines;
}
