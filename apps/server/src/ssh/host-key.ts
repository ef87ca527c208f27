import fs from 'node:fs';
import path from 'node:path';
import ssh2 from 'ssh2';

/**
 * The gateway's host key: SSH_HOST_KEY_FILE when set (any key ssh2 reads: OpenSSH or PEM; ed25519,
 * ECDSA or RSA), else $DATA_DIR/keys/ssh_host_ed25519_key, generated once (mode 0600) so clients'
 * known_hosts stay valid across restarts. Without a usable data dir (tests) a key is made in memory.
 */
export function loadHostKey(opts: { file?: string; dataDir?: string }): { key: string; source: string } {
  if (opts.file) {
    const key = fs.readFileSync(opts.file, 'utf8');
    check(key, opts.file);
    return { key, source: opts.file };
  }
  const generate = generateEd25519
  if (!opts.dataDir) return { key: generate(), source: 'memory' };
  const dir = path.join(opts.dataDir, 'keys');
  const file = path.join(dir, 'ssh_host_ed25519_key');
  if (fs.existsSync(file)) {
    const key = fs.readFileSync(file, 'utf8');
    check(key, file);
    return { key, source: file };
  }
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const key = generate();
  try {
    // wx: two processes starting at once don't overwrite each other's key; the loser reads the winner's.
    fs.writeFileSync(file, key, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const existing = fs.readFileSync(file, 'utf8');
    check(existing, file);
    return { key: existing, source: file };
  }
  return { key, source: file };
}

function check(key: string, where: string): void {
  const parsed = ssh2.utils.parseKey(key);
  if (parsed instanceof Error) throw new Error(`SSH host key ${where}: ${parsed.message}`);
  const k = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!k?.isPrivateKey()) throw new Error(`SSH host key ${where}: not a private key`);
}

/**
 * An ed25519 key in OpenSSH format. ssh2 1.17's generator now and then writes one its own parser
 * refuses (about 1 in 100); such a key is thrown away and another made.
 */
export function generateEd25519(): string {
  for (let i = 0; i < 20; i++) {
    const key = ssh2.utils.generateKeyPairSync('ed25519').private;
    if (!(ssh2.utils.parseKey(key) instanceof Error)) return key;
  }
  throw new Error('could not generate an ed25519 host key');
}
