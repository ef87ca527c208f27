import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import { sql, type SQL } from 'drizzle-orm';
import pg from 'pg';
import * as schema from './schema/index.ts';
import { DIR_MODE, restrictToOwner } from '../lib/data-dir.ts';

export type Schema = typeof schema;
/** One type for both engines: repositories never know which one they talk to. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** A repository method accepts the database or a transaction it is part of. */
export type DbOrTx = Db | Tx;

export type Database = {
  db: Db;
  engine: 'pglite' | 'postgres';
  /**
   * PostgreSQL only: a dedicated connection out of the pool, for session state such as the
   * scheduler's advisory lock (jobs/leader.ts). Release it with `release(err)` to discard it.
   */
  session?: () => Promise<pg.PoolClient>;
  close(): Promise<void>;
};

export const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/** Any positive 63-bit number; migrations of concurrent replicas queue on it. */
const MIGRATION_LOCK = 726_551_001;

export async function openPostgres(url: string, opts: { max?: number } = {}): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 20 });
  // An idle connection dropped by the server (restart, failover, admin) must not crash the
  // process: the pool discards it and the next query opens a new one.
  pool.on('error', (err) => console.error(`[db] idle PostgreSQL connection lost: ${err.message}`));
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await migratePg(drizzlePg(client, { schema }), { migrationsFolder });
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    client.release();
  }
  return { db, engine: 'postgres', session: () => pool.connect(), close: () => pool.end() };
}

/**
 * PGlite in `dir` (or in memory without one). PGlite is one process's database: a lock file
 * beside it refuses a second opener instead of letting two processes corrupt it.
 */
export async function openPglite(dir?: string): Promise<Database> {
  let release = () => {};
  if (dir) {
    fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
    release = acquireLock(path.join(path.dirname(dir), `${path.basename(dir)}.lock`), dir);
  }
  try {
    const client = await PGlite.create(dir ? { dataDir: dir } : {});
    const db = drizzlePglite(client, { schema }) as unknown as Db;
    await migratePglite(drizzlePglite(client, { schema }), { migrationsFolder });
    // PGlite writes the files of a new cluster 0666 whatever the umask (PostgreSQL's own later files are 0600).
    if (dir) restrictToOwner(dir);
    return {
      db,
      engine: 'pglite',
      close: async () => {
        await client.close();
        release();
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}

function acquireLock(lockPath: string, dir: string): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(lockPath, 'wx');
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      return () => fs.rmSync(lockPath, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(fs.readFileSync(lockPath, 'utf8').trim());
      if (holder && isAlive(holder)) {
        throw new Error(
          `The embedded database in ${dir} is in use by process ${holder}. ` +
            'PGlite allows one process at a time: stop that process, or set DATABASE_URL to use PostgreSQL.',
          { cause: err },
        );
      }
      fs.rmSync(lockPath, { force: true }); // stale lock of a process that is gone
    }
  }
  throw new Error(`Could not lock ${lockPath}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function ping(db: Db): Promise<void> {
  await db.execute(sql`select 1`);
}

/** Raw SQL rows; both engines answer `{ rows }`. */
export async function queryRows<T>(db: DbOrTx, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}
