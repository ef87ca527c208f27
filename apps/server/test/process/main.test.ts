import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { openPglite } from '../../src/db/client.ts';
import { users } from '../../src/db/schema/user.ts';
import { wallets } from '../../src/db/schema/wallet.ts';
import { createLedgerService } from '../../src/modules/wallet/ledger.service.ts';
import { systemClock } from '../../src/lib/clock.ts';

const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

type Started = { child: ChildProcess; port: number; output: () => string; exited: Promise<number | null> };

/** Runs the real entry point (`npm run serve`'s command) with its own data dir. */
function startServer(dataDir: string, env: Record<string, string> = {}): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: serverDir,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', WEB_DIST: '/nonexistent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]), output: () => out, exited });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then((code) => reject(Object.assign(new Error(`server exited with ${code}`), { output: out, code })));
  });
}

describe('the server process', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-proc-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('starts on PGlite, answers health, refuses a second process on the same data, drains on SIGTERM', async () => {
    const first = await startServer(dataDir);
    const health = await fetch(`http://127.0.0.1:${first.port}/api/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', database: 'pglite' });
    expect(first.output()).toMatch(/\[seed\] tenant demo \(localhost\): operator 13900000000 \/ \S+/);

    const second = await startServer(dataDir).then(
      () => {
        throw new Error('a second server opened the same data dir');
      },
      (err: { output: string; code: number }) => err,
    );
    expect(second.code).not.toBe(0);
    expect(second.output).toMatch(/in use by process \d+/);

    // the first server is unharmed by the refused second one
    expect((await fetch(`http://127.0.0.1:${first.port}/api/health`)).status).toBe(200);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'db.lock'))).toBe(false);
  }, 90_000);

  it('ledger:check passes on consistent data and exits 1 when a balance was tampered with', async () => {
    const run = () =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/ledger-check.ts'], { cwd: serverDir, env: { ...process.env, DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (c: Buffer) => (out += c.toString()));
        child.stderr.on('data', (c: Buffer) => (out += c.toString()));
        child.once('exit', (code) => resolve({ code, out }));
      });
    // money moves through the real ledger, in the data dir the server left behind
    const database = await openPglite(path.join(dataDir, 'db'));
    const ledger = createLedgerService({ db: database.db, clock: systemClock });
    const [op] = await database.db.select().from(users).limit(1);
    if (!op) throw new Error('the seed left no user');
    await ledger.post({ tenantId: op.tenantId, userId: op.id, kind: 'adjustment', amount: 50_000, ref: 'cli-test:1' });
    await database.close();
    const good = await run();
    expect(good.code, good.out).toBe(0);
    expect(good.out).toContain('ledger:check ok');

    const again = await openPglite(path.join(dataDir, 'db'));
    await again.db.update(wallets).set({ balance: 1 }).where(eq(wallets.userId, op.id));
    await again.close();
    const bad = await run();
    expect(bad.code).toBe(1);
    expect(bad.out).toContain(`user ${op.id}: balance`);
  }, 90_000);

  it('stops with a message naming a bad setting', async () => {
    const err = await startServer(dataDir, { PORT: 'eighty' }).then(
      () => {
        throw new Error('started with a bad PORT');
      },
      (e: { output: string; code: number }) => e,
    );
    expect(err.code).toBe(1);
    expect(err.output).toContain('PORT');
  });
});
