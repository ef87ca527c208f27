import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { users } from '../../server/src/db/schema/user.ts';
import { screenshotPath, startHarness, type Harness } from './harness.ts';
import { registerUser, signInWithToken } from './fixtures.ts';

/**
 * A client run without blocking: the SSH gateway lives in this very process, so a spawnSync would
 * stop it from answering (the client then times out in the banner exchange).
 */
function runClient(cmd: string, args: string[], timeoutMs = 60_000): Promise<{ stdout: string; stderr: string; status: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, status });
    });
  });
}

/**
 * Issue #8 acceptance: a key made by ssh-keygen, added through the console, logs the system `ssh`
 * and `sftp` clients in to a running instance through the SSH gateway; a key not added is refused.
 */
describe('ssh: a key added in the console opens ssh and sftp to an instance', () => {
  let h: Harness;
  let dir = '';
  beforeAll(async () => {
    h = await startHarness({}, { ssh: true });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-ssh-e2e-'));
  });
  afterAll(async () => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    await h?.close();
  });

  /** The API as the console calls it (envelope unwrapped), with the user's token. */
  async function api<T>(token: string, method: string, pathname: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const res = await fetch(h.url('demo', pathname), {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const env = (await res.json()) as { code: number; msg: string; data: T };
    if (env.code !== 200) throw new Error(`${method} ${pathname}: ${res.status} ${env.msg}`);
    return env.data;
  }

  const keygen = (name: string) => {
    const file = path.join(dir, name);
    const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `e2e-${name}`, '-f', file], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    return file;
  };

  const sshOpts = (key: string) => ['-i', key, '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', '-o', 'ConnectTimeout=10'];

  it('adds an ssh-keygen key through the UI, then runs ssh and sftp against the gateway', { timeout: 240_000 }, async () => {
    expect(h.sshPort).toBeGreaterThan(0);
    const user = await registerUser(h);
    const [row] = await h.container.db.select({ id: users.id }).from(users).where(eq(users.phone, user.phone));
    await h.container.ledger.post({ tenantId: user.tenantId, userId: row!.id, kind: 'recharge', amount: 1_000_000, ref: `ssh-e2e:${user.phone}` });

    // A running pay-as-you-go instance, ordered and paid the way the console does it.
    const machines = await api<{ list: { id: number; rentable: boolean }[] }>(user.token, 'GET', '/api/v1/machine/list?pageSize=100');
    const machine = machines.list.find((m) => m.rentable);
    if (!machine) throw new Error('no rentable machine in the demo inventory');
    const images = await api<{ id: number; status: string }[] | { list: { id: number; status: string }[] }>(user.token, 'GET', '/api/v1/image/all');
    const image = (Array.isArray(images) ? images : images.list).find((i) => i.status === 'ready');
    if (!image) throw new Error('no ready image');
    const order = await api<{ id: string }>(user.token, 'POST', '/api/v1/order/payg', { machineId: machine.id, gpuCount: 1, imageId: image.id, name: 'ssh-box' });
    await api(user.token, 'POST', '/api/v1/order/pay', { orderId: order.id }, { 'idempotency-key': crypto.randomUUID() });

    // The key, added in the console; the fingerprint shown is ssh-keygen's.
    const key = keygen('id_ed25519');
    const pub = fs.readFileSync(`${key}.pub`, 'utf8').trim();
    const fingerprint = spawnSync('ssh-keygen', ['-lf', `${key}.pub`], { encoding: 'utf8' }).stdout.split(' ')[1];
    expect(fingerprint).toMatch(/^SHA256:/);
    const { context, page } = await h.newPage({ width: 1280, height: 800 });
    try {
      await signInWithToken(page, h, 'demo', user.token);
      await page.goto(h.url('demo', '/center/ssh/control'));
      await page.getByTestId('ssh-key-name').fill('e2e laptop');
      await page.getByTestId('ssh-key-text').fill(pub);
      await page.getByTestId('ssh-key-submit').click();
      await page.getByTestId('ssh-key-fingerprint').first().waitFor();
      expect(await page.getByTestId('ssh-key-fingerprint').first().textContent()).toBe(fingerprint);
      // The same key twice is refused with the server's message.
      await page.getByTestId('ssh-key-text').fill(pub);
      await page.getByTestId('ssh-key-submit').click();
      await page.getByTestId('ssh-key-error').waitFor();
      await page.screenshot({ path: screenshotPath('ssh-keys-1280') });

      // The instance, running.
      const instance = await (async () => {
        for (let i = 0; i < 60; i += 1) {
          const list = await api<{ list: { id: string; name: string; status: string; ssh: { port: number; command: string } }[] }>(user.token, 'GET', '/api/v1/instance/list');
          const found = list.list.find((x) => x.name === 'ssh-box');
          if (found?.status === 'running') return found;
          if (found?.status === 'failed') throw new Error('instance failed');
          await new Promise((r) => setTimeout(r, 1_000));
        }
        throw new Error('instance not running after 60 s');
      })();
      const target = `${instance.id}@127.0.0.1`;
      // The console's SSH command names the port the gateway really listens on (SSH_PORT=0 here).
      expect(instance.ssh.port).toBe(h.sshPort);
      expect(instance.ssh.command).toContain(`-p ${h.sshPort} ${instance.id}@`);

      // ssh with a command: its output and its exit code come back.
      const run = await runClient('ssh', ['-p', String(h.sshPort), ...sshOpts(key), target, 'echo "hi from $(hostname)"; exit 3']);
      expect(run.stdout, `ssh exited ${run.status}: ${run.stderr}`).toBe(`hi from ${instance.id}\n`);
      expect(run.status).toBe(3);

      // sftp: a file up to the data disk and back down.
      const local = path.join(dir, 'up.txt');
      const back = path.join(dir, 'down.txt');
      fs.writeFileSync(local, `suanli sftp ${Date.now()}\n`);
      const batch = path.join(dir, 'batch');
      fs.writeFileSync(batch, `put ${local} /root/data/up.txt\nls -l /root/data\nget /root/data/up.txt ${back}\n`);
      const sftp = await runClient('sftp', ['-P', String(h.sshPort), ...sshOpts(key), '-b', batch, target]);
      expect(sftp.status, sftp.stderr).toBe(0);
      expect(fs.readFileSync(back, 'utf8')).toBe(fs.readFileSync(local, 'utf8'));
      const cat = await runClient('ssh', ['-p', String(h.sshPort), ...sshOpts(key), target, 'cat /root/data/up.txt']);
      expect(cat.stdout).toBe(fs.readFileSync(local, 'utf8'));

      // A key the user never added is refused.
      const stranger = keygen('stranger');
      const refused = await runClient('ssh', ['-p', String(h.sshPort), ...sshOpts(stranger), target, 'true']);
      expect(refused.status).toBe(255);
      expect(refused.stderr).toMatch(/Permission denied/);
    } finally {
      await context.close();
    }
  });
});
