import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import ssh2 from 'ssh2';
import { startSshGateway } from '../../src/ssh/gateway.ts';
import { createFakeSshAccess } from '../fakes/ssh-access.ts';

const quiet = { info: () => {}, warn: () => {} };
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-hostkey-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The host key a client sees (its SSH blob, base64), without logging in. */
function hostKeyOf(port: number): Promise<string> {
  return new Promise((resolve) => {
    const c = new ssh2.Client();
    c.on('error', () => {});
    c.connect({
      host: '127.0.0.1',
      port,
      username: 'i-0000000000',
      password: 'x',
      tryKeyboard: false,
      hostVerifier: (key: Buffer) => {
        resolve(key.toString('base64'));
        return false;
      },
    });
  });
}

describe('SSH gateway host key', () => {
  const fake = createFakeSshAccess();
  afterAll(() => fake.close());

  it('is an ed25519 key generated once into $DATA_DIR/keys (0600) and kept across restarts', async () => {
    const cfg = { SSH_PORT: 0, SSH_HOST_KEY_FILE: undefined, HOST: '127.0.0.1' };
    const a = await startSshGateway({ config: cfg, access: fake.access, log: quiet, dataDir: dir });
    const first = await hostKeyOf(a.port);
    await a.close();
    const file = path.join(dir, 'keys', 'ssh_host_ed25519_key');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(first, 'base64').subarray(4, 15).toString()).toBe('ssh-ed25519');
    const b = await startSshGateway({ config: cfg, access: fake.access, log: quiet, dataDir: dir });
    expect(await hostKeyOf(b.port)).toBe(first);
    await b.close();
  });

  it('uses SSH_HOST_KEY_FILE when set (an RSA key made by ssh-keygen here)', async () => {
    const file = path.join(dir, 'rsa_host');
    execFileSync('ssh-keygen', ['-t', 'rsa', '-b', '3072', '-N', '', '-q', '-f', file]);
    const g = await startSshGateway({ config: { SSH_PORT: 0, SSH_HOST_KEY_FILE: file, HOST: '127.0.0.1' }, access: fake.access, log: quiet });
    const seen = await hostKeyOf(g.port);
    await g.close();
    expect(seen).toBe(fs.readFileSync(`${file}.pub`, 'utf8').split(' ')[1]);
  });

  it('refuses to start with a file that is not a private key', async () => {
    const file = path.join(dir, 'bad');
    fs.writeFileSync(file, 'not a key');
    await expect(startSshGateway({ config: { SSH_PORT: 0, SSH_HOST_KEY_FILE: file, HOST: '127.0.0.1' }, access: fake.access, log: quiet })).rejects.toThrow(/SSH host key/);
  });
});
