import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

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
