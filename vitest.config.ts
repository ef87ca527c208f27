import os from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

/*
 * Workers: vitest's default in a run is one less than the CPU count, which on CI's 2-core machine
 * is a single worker. API tests spend much of their time waiting on PostgreSQL, so one worker per
 * core keeps both cores busy (docs/testing.md has the measurements).
 */
const workers = Math.max(2, os.availableParallelism());

const server = {
  environment: 'node',
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: 'forks',
  // Migrates the PGlite and PostgreSQL templates once; every test database is a copy (test/helpers/db.ts).
  globalSetup: ['apps/server/test/helpers/global-setup.ts'],
} as const;

/** Server test files that mock modules or stub globals (vi.mock, vi.stubGlobal): each in a fresh process. */
const ISOLATED = [
  'apps/server/test/security/accounts.test.ts',
  'apps/server/test/api/payment.test.ts',
  'apps/server/test/api/payment-notify.test.ts',
  'apps/server/test/security/payments.test.ts',
];

export default defineConfig({
  test: {
    maxWorkers: workers,
    projects: [
      { test: { name: 'packages', include: ['packages/*/src/**/*.test.ts'], environment: 'node' } },
      {
        test: {
          ...server,
          name: 'server',
          include: ['apps/server/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ISOLATED],
          // A worker runs file after file without reloading the server's modules (fastify, drizzle,
          // PGlite, zod…): loading them again for each file cost half the suite's CPU. Every file
          // still builds its own apps and databases; files that patch process-wide state are below.
          isolate: false,
        },
      },
      { test: { ...server, name: 'server-isolated', include: ISOLATED } },
      // jsdom tests render antd: give them room on a busy 2-core machine.
      { test: { name: 'web', include: ['apps/web/src/**/*.test.{ts,tsx}'], environment: 'jsdom', setupFiles: ['apps/web/src/test-setup.ts'], testTimeout: 20_000 } },
    ],
  },
});
