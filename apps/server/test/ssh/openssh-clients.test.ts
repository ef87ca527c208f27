import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSshGateway, type SshGateway } from '../../src/ssh/gateway.ts';
import { createFakeSshAccess, type FakeInstance } from '../fakes/ssh-access.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';

const run = promisify(execFile);

/** The system OpenSSH clients (ssh, scp, sftp) against the gateway, with keys made by ssh-keygen. */
describe('SSH gateway with the OpenSSH clients', () => {
  let fake: ReturnType<typeof createFakeSshAccess>;
  let gw: SshGateway;
  let dir: string;
  let inst: FakeInstance;
  const keys: Record<string, string> = {};

  const common = () => ['-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR', '-o', 'IdentitiesOnly=yes'];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-openssh-'));
    for (const [name, args] of [
      ['ed25519', ['-t', 'ed25519']],
      ['rsa', ['-t', 'rsa', '-b', '3072']],
      ['ecdsa', ['-t', 'ecdsa', '-b', '256']],
      ['other', ['-t', 'ed25519']],
    ] as const) {
      const file = path.join(dir, name);
      await run('ssh-keygen', [...args, '-N', '', '-q', '-C', `${name}@test`, '-f', file]);
      keys[name] = file;
    }
    const pub = (n: string) => fs.readFileSync(`${keys[n]}.pub`, 'utf8').trim();
    fake = createFakeSshAccess();
    inst = fake.add({ tenantId: 1, userId: 7, keys: [pub('ed25519'), pub('rsa'), pub('ecdsa')] });
    gw = await startSshGateway({ config: { SSH_PORT: 0, SSH_HOST_KEY_FILE: undefined, HOST: '127.0.0.1' }, access: fake.access, log: { info: () => {}, warn: () => {} } });
  });
  afterAll(async () => {
    await gw?.close();
    fake?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Runs a client to its end; never throws, so exit codes can be asserted. */
  function client(bin: string, args: string[], input?: string): Promise<{ code: number | null; out: string; err: string }> {
    return new Promise((resolve) => {
      const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('close', (code) => resolve({ code, out, err }));
      child.stdin.end(input ?? '');
    });
  }
  const ssh = (key: string, ...rest: string[]) => client('ssh', [...common(), '-i', key, '-p', String(gw.port), `${inst.id}@127.0.0.1`, ...rest]);

  it("`ssh id@host 'echo hi; exit 3'` prints hi and exits 3 (ed25519, RSA and ECDSA keys)", async () => {
    for (const k of ['ed25519', 'rsa', 'ecdsa']) {
      const r = await ssh(keys[k]!, 'echo hi; exit 3');
      expect(r.out, `${k}: ${r.err}`).toBe('hi\n');
      expect(r.code).toBe(3);
    }
  });

  it('passes stdin through and ends it', async () => {
    const r = await client('ssh', [...common(), '-i', keys.ed25519!, '-p', String(gw.port), `${inst.id}@127.0.0.1`, 'wc -l'], 'a\nb\nc\n');
    expect(r.out.trim()).toBe('3');
    expect(r.code).toBe(0);
  });

  it('refuses a key that is not the owner\'s (exit 255, permission denied)', async () => {
    const r = await ssh(keys.other!, 'echo should-not-run');
    expect(r.code).toBe(255);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/Permission denied/);
  });

  it('sftp puts and gets a file', async () => {
    const local = path.join(dir, 'local.txt');
    const back = path.join(dir, 'back.txt');
    fs.writeFileSync(local, 'sftp payload\n'.repeat(1000));
    const batch = path.join(dir, 'batch');
    fs.writeFileSync(batch, `put ${local} remote.txt\nls\nget remote.txt ${back}\n`);
    const r = await client('sftp', [...common(), '-i', keys.ed25519!, '-P', String(gw.port), '-b', batch, `${inst.id}@127.0.0.1`]);
    expect(r.code, r.err).toBe(0);
    expect(fs.readFileSync(path.join(inst.dir, 'remote.txt'), 'utf8')).toBe(fs.readFileSync(local, 'utf8'));
    expect(fs.readFileSync(back, 'utf8')).toBe(fs.readFileSync(local, 'utf8'));
  });

  it('scp copies both ways (sftp protocol by default, and the legacy -O protocol)', async () => {
    const local = path.join(dir, 'scp.txt');
    fs.writeFileSync(local, 'scp payload\n');
    for (const legacy of [false, true]) {
      const name = legacy ? 'scp-legacy.txt' : 'scp-sftp.txt';
      const up = await client('scp', [...common(), ...(legacy ? ['-O'] : []), '-i', keys.ed25519!, '-P', String(gw.port), local, `${inst.id}@127.0.0.1:${name}`]);
      expect(up.code, up.err).toBe(0);
      expect(fs.readFileSync(path.join(inst.dir, name), 'utf8')).toBe('scp payload\n');
      const down = path.join(dir, `down-${name}`);
      const r = await client('scp', [...common(), ...(legacy ? ['-O'] : []), '-i', keys.ed25519!, '-P', String(gw.port), `${inst.id}@127.0.0.1:${name}`, down]);
      expect(r.code, r.err).toBe(0);
      expect(fs.readFileSync(down, 'utf8')).toBe('scp payload\n');
    }
    // The legacy protocol ran `scp -t` / `scp -f` through exec inside the instance.
    expect(fake.stats.execs.some((c) => typeof c === 'string' && /^scp .*-t/.test(c))).toBe(true);
  });

  it('logs in with a key added through POST /api/v1/pub_key/add, and no longer once it is deleted', async () => {
    const t: TestApp = await buildTestApp();
    try {
      const { token, user } = await createUser(t);
      const owner = { tenantId: user.tenantId, userId: user.id };
      const viaApi = fake.add({ ...owner, keysFrom: () => t.container.sshKeys.linesOf(owner) });
      const sshTo = (id: string) => client('ssh', [...common(), '-i', keys.other!, '-p', String(gw.port), `${id}@127.0.0.1`, 'echo via-api']);
      expect((await sshTo(viaApi.id)).code).toBe(255);
      const added = await t.request({ method: 'POST', url: '/api/v1/pub_key/add', token, payload: { key: fs.readFileSync(`${keys.other}.pub`, 'utf8') } });
      expect(added.statusCode).toBe(200);
      const ok = await sshTo(viaApi.id);
      expect(ok.out, ok.err).toBe('via-api\n');
      expect(ok.code).toBe(0);
      await t.request({ method: 'POST', url: '/api/v1/pub_key/delete', token, payload: { id: added.json<{ data: { id: number } }>().data.id } });
      expect((await sshTo(viaApi.id)).code).toBe(255);
    } finally {
      await t.close();
    }
  });
});
