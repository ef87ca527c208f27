import crypto from 'node:crypto';
import { dropRunDatabases, pgliteTemplateFile, postgresTemplateName, runPrefix } from './db.ts';

/**
 * Once per `vitest run`, before the workers start: the migrated PGlite and PostgreSQL templates
 * that every test database is copied from (helpers/db.ts), and a run id that names this run's
 * PostgreSQL databases so the teardown can drop any a dead worker left behind.
 */
export default async function setup() {
  process.env.SUANLI_TEST_RUN ??= crypto.randomBytes(3).toString('hex');
  const prefix = runPrefix();
  await Promise.all([pgliteTemplateFile(), process.env.TEST_DATABASE_URL ? postgresTemplateName() : undefined]);
  return async () => {
    if (process.env.TEST_DATABASE_URL) await dropRunDatabases(prefix);
  };
}
