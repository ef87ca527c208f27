import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { migrationsFolder, openPostgres, type Database, type Db } from '../../src/db/client.ts';
import * as schema from '../../src/db/schema/index.ts';

export type Engine = 'pglite' | 'postgres';

/*
 * Engine policy (docs/testing.md). PGlite, the default deployment engine, runs every suite.
 * PostgreSQL (when TEST_DATABASE_URL is set, as in CI) also runs every suite that uses `engines`:
 * anything that moves or reads money, races, takes locks, or leans on SQL the two engines might
 * answer differently. Today that is every dual-engine suite — api/{account, bill, captcha,
 * datahub, idempotency, instance, inventory, jobs-concurrency, ledger, metering, metrics, order,
 * order-concurrency, payment, payment-notify, question, ssh-key}, security/{accounts, core,
 * gateways, http, payments}, ssh/web-shell — each has a race, a money path or a dialect-sensitive
 * check. `generalEngines` (PGlite only) is for a new suite that has none of these; when in doubt,
 * use `engines`.
 */

/** Engines a suite runs on: PGlite always, PostgreSQL too when TEST_DATABASE_URL is set. */
export const engines: Engine[] = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

/** Engines of a suite that moves no money and uses nothing engine-specific: PGlite only (see above). */
export const generalEngines: Engine[] = ['pglite'];

/** A fresh, migrated database: in-memory PGlite, or a new database on the test PostgreSQL server. */
export async function openTestDatabase(engine: Engine): Promise<Database> {
  return engine === 'pglite' ? openTemplatedPglite() : openTemplatedPostgres();
}

/*
 * Speed: every test database is a copy of one migrated template instead of a new cluster that runs
 * the migrations. A PGlite cluster costs ~5 s of CPU to initdb and migrate, a copy of its data
 * directory ~1.3 s; a PostgreSQL `create database … template` is a file copy. The template is
 * named after a hash of the migrations, so a changed migration makes a new one.
 */

const migrationsHash = (() => {
  let hash: string | undefined;
  return () => {
    if (hash) return hash;
    const h = crypto.createHash('sha256');
    const walk = (dir: string) => {
      for (const name of fs.readdirSync(dir).sort()) {
        const file = path.join(dir, name);
        if (fs.statSync(file).isDirectory()) walk(file);
        else h.update(name).update(fs.readFileSync(file));
      }
    };
    walk(migrationsFolder);
    // A PGlite release may change its data directory's format.
    h.update(fs.readFileSync(path.join(path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')), '../package.json')));
    return (hash = h.digest('hex').slice(0, 16));
  };
})();

const TEMPLATE_DIR = path.join(os.tmpdir(), 'suanli-test-templates');

let pgliteTemplate: Promise<string> | undefined;
/** The migrated PGlite data directory as a tarball file, made once per machine (kept in the temp dir). */
export function pgliteTemplateFile(): Promise<string> {
  return (pgliteTemplate ??= (async () => {
    const file = path.join(TEMPLATE_DIR, `pglite-${migrationsHash()}.tar`);
    if (!fs.existsSync(file)) {
      const client = await PGlite.create({});
      await migratePglite(drizzlePglite(client, { schema }), { migrationsFolder });
      const dump = await client.dumpDataDir('none');
      await client.close();
      fs.mkdirSync(TEMPLATE_DIR, { recursive: true });
      // Written aside and renamed: workers that build it at once never read half a file.
      const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
      fs.writeFileSync(tmp, Buffer.from(await dump.arrayBuffer()));
      fs.renameSync(tmp, file);
    }
    return file;
  })());
}

let pgliteTemplateBytes: Promise<Blob> | undefined;
export function pgliteTemplateBlob(): Promise<Blob> {
  return (pgliteTemplateBytes ??= pgliteTemplateFile().then((file) => new Blob([fs.readFileSync(file)])));
}

async function openTemplatedPglite(): Promise<Database> {
  const client = await PGlite.create({ loadDataDir: await pgliteTemplateBlob() });
  // The same as openPglite(): the template already holds every migration.
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  return { db, engine: 'pglite', close: () => client.close() };
}

/**
 * Test connections commit without waiting for the WAL flush (synchronous_commit=off): that only
 * matters if the server crashes; transactions, locks and isolation behave exactly the same.
 */
const withTestOptions = (url: URL) => {
  url.searchParams.set('options', '-c synchronous_commit=off');
  return url;
};

/** Databases of this run start with this prefix; the global teardown drops any left behind. */
export const runPrefix = () => `suanli_t_${(process.env.SUANLI_TEST_RUN ??= crypto.randomBytes(3).toString('hex'))}_`;

async function adminQuery(sql: string): Promise<pg.QueryResult> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) throw new Error('TEST_DATABASE_URL is not set');
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    return await admin.query(sql);
  } finally {
    await admin.end();
  }
}

const databaseUrl = (name: string) => {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return url;
};

let postgresTemplate: Promise<string> | undefined;
/** The migrated template database on the test server, made once per server and migration set. */
export function postgresTemplateName(): Promise<string> {
  return (postgresTemplate ??= (async () => {
    const name = `suanli_tpl_${migrationsHash()}`;
    const exists = async () => (await adminQuery(`select 1 from pg_database where datname = '${name}'`)).rowCount === 1;
    if (await exists()) return name;
    // Built under another name and renamed, so a half-migrated template is never copied.
    const building = `${name}_${crypto.randomBytes(4).toString('hex')}`;
    await adminQuery(`create database ${building}`);
    const database = await openPostgres(databaseUrl(building).toString(), { max: 2 });
    await database.close();
    try {
      await adminQuery(`alter database ${building} rename to ${name}`);
    } catch (err) {
      await adminQuery(`drop database if exists ${building} with (force)`);
      if (!(await exists())) throw err; // else another worker made it first
    }
    return name;
  })());
}

async function openTemplatedPostgres(): Promise<Database> {
  const template = await postgresTemplateName();
  const name = `${runPrefix()}${crypto.randomBytes(6).toString('hex')}`;
  // Another worker copying the template at this very moment holds a connection to it only briefly.
  for (let attempt = 0; ; attempt++) {
    try {
      await adminQuery(`create database ${name} template ${template}`);
      break;
    } catch (err) {
      if (attempt >= 20 || !/being accessed by other users/.test((err as Error).message)) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  // openPostgres's own migration step finds every migration applied and returns at once.
  const database = await openPostgres(withTestOptions(databaseUrl(name)).toString(), { max: 30 });
  return {
    ...database,
    async close() {
      await database.close();
      await adminQuery(`drop database if exists ${name} with (force)`);
    },
  };
}

/** Drops the databases a run left behind (a worker that died before `close`). */
export async function dropRunDatabases(prefix: string): Promise<void> {
  const { rows } = await adminQuery(`select datname from pg_database where datname like '${prefix.replace(/_/g, '\\_')}%'`);
  for (const { datname } of rows as { datname: string }[]) await adminQuery(`drop database if exists ${datname} with (force)`);
}
