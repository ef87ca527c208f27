import crypto from 'node:crypto';
import pg from 'pg';
import { openPglite, openPostgres, type Database } from '../../src/db/client.ts';

export type Engine = 'pglite' | 'postgres';

/** Engines a suite runs on: PGlite always, PostgreSQL too when TEST_DATABASE_URL is set. */
export const engines: Engine[] = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

/** A fresh, migrated database: in-memory PGlite, or a new database on the test PostgreSQL server. */
export async function openTestDatabase(engine: Engine): Promise<Database> {
  if (engine === 'pglite') return openPglite();
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) throw new Error('TEST_DATABASE_URL is not set');
  const name = `suanli_t_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await openPostgres(url.toString(), { max: 30 });
  return {
    ...database,
    async close() {
      await database.close();
      const a = new pg.Client({ connectionString: adminUrl });
      await a.connect();
      await a.query(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
}
