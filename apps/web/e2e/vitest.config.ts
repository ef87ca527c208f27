import { defineConfig } from 'vitest/config';

/** End-to-end specs: the real server in-process, the built web app, Debian's Chromium. */
export default defineConfig({
  test: {
    name: 'e2e',
    root: new URL('.', import.meta.url).pathname,
    include: ['**/*.e2e.test.ts'],
    environment: 'node',
    testTimeout: 90_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two spec files at a time: each has its own server, data dir and browser, and much of a spec
    // is waiting (for an instance, a settlement tick, a stream), so two overlap well on 2 cores.
    // The a11y spec alone takes about a third of the stage: the others run beside it.
    fileParallelism: true,
    maxWorkers: 2,
    sequence: { shuffle: false },
  },
});
