import type { FastifyInstance, InjectOptions } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { createContainer, type Container } from '../../src/container.ts';
import { buildApp } from '../../src/app.ts';
import { seedDemo } from '../../src/db/seed.ts';
import type { Clock } from '../../src/lib/clock.ts';
import { createFakeSms } from '../fakes/sms.ts';
import { openTestDatabase, type Engine } from './db.ts';

export type TestApp = {
  app: FastifyInstance;
  container: Container;
  sms: ReturnType<typeof createFakeSms>;
  /**
   * app.inject with Host set (default `localhost`, the seeded demo tenant). `encrypted` sends the
   * body as the web client does for flagged calls (SPEC §5) and decrypts the answer.
   */
  request(opts: InjectOptions & { host?: string; token?: string; encrypted?: boolean }): ReturnType<FastifyInstance['inject']>;
  close(): Promise<void>;
};

export async function buildTestApp(opts: { engine?: Engine; captcha?: boolean; clock?: Clock; env?: Record<string, string> } = {}): Promise<TestApp> {
  const config = loadConfig({ CAPTCHA: opts.captcha ? 'on' : 'off', DATA_DIR: '/nonexistent-test-data', LOG_LEVEL: 'silent', ...opts.env });
  const database = await openTestDatabase(opts.engine ?? 'pglite');
  const sms = createFakeSms();
  const container = await createContainer(config, { database, sms, clock: opts.clock });
  await seedDemo(container.db, () => {});
  const app = await buildApp(container);
  return {
    app,
    container,
    sms,
    request({ host = 'localhost', token, headers, encrypted: _encrypted, ...rest }) {
      return app.inject({ ...rest, headers: { host, ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });
    },
    async close() {
      await app.close();
      await container.close();
    },
  };
}
