import crypto, { type KeyObject } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * The server's RSA key pair for SPEC §5/§9 request encryption: clients protect their per-request
 * AES key with the public half. RSA-OAEP with SHA-256 (for OAEP and MGF1) — PKCS#1 v1.5
 * decryption is refused by Node 20 (Marvin attack), so it is not offered.
 */
export type RsaKeys = {
  /** SubjectPublicKeyInfo PEM, served at GET /api/v1/crypto/public-key. */
  readonly publicKeyPem: string;
  /** Modulus size in bytes: every valid ciphertext has exactly this length. */
  readonly modulusBytes: number;
  /**
   * Where the private key came from. 'memory' means a fresh key for this process only: clients
   * holding the previous public key fail until they reload, and replicas disagree — set
   * RSA_PRIVATE_KEY_FILE (or give DATA_DIR) in production. 'database': the pair every replica
   * shares through the server_keys table (loadSharedRsaKeys).
   */
  readonly source: 'file' | 'data-dir' | 'memory' | 'database';
  /** RSA-OAEP(SHA-256) decryption; throws on any ciphertext not made with our public key. */
  decrypt(ciphertext: Buffer): Buffer;
};

const MIN_MODULUS_BITS = 2048;

function fromPrivateKey(privateKey: KeyObject, source: RsaKeys['source'], origin: string): RsaKeys {
  const bits = privateKey.asymmetricKeyDetails?.modulusLength ?? 0;
  if (privateKey.asymmetricKeyType !== 'rsa' || bits < MIN_MODULUS_BITS) {
    throw new Error(`${origin}: expected an RSA private key of at least ${MIN_MODULUS_BITS} bits`);
  }
  const publicKeyPem = crypto.createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
  return {
    publicKeyPem,
    modulusBytes: Math.ceil(bits / 8),
    source,
    decrypt: (ciphertext) => crypto.privateDecrypt({ key: privateKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, ciphertext),
  };
}

function parsePem(pem: string, source: RsaKeys['source'], origin: string): RsaKeys {
  let key: KeyObject;
  try {
    key = crypto.createPrivateKey(pem); // PKCS#1 or PKCS#8 PEM
  } catch (err) {
    throw new Error(`${origin}: not a readable PEM private key (${err instanceof Error ? err.message : String(err)})`, { cause: err });
  }
  return fromPrivateKey(key, source, origin);
}

async function generatePrivateKeyPem(): Promise<string> {
  const { privateKey } = await new Promise<{ privateKey: string }>((resolve, reject) =>
    crypto.generateKeyPair(
      'rsa',
      { modulusLength: MIN_MODULUS_BITS, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } },
      (err, _publicKey, privateKey) => (err ? reject(err) : resolve({ privateKey })),
    ),
  );
  return privateKey;
}

/** A key pair that lives only in this process. */
export async function generateRsaKeys(): Promise<RsaKeys> {
  return parsePem(await generatePrivateKeyPem(), 'memory', 'generated key');
}

const isErrno = (err: unknown, ...codes: string[]) => err instanceof Error && 'code' in err && codes.includes(String(err.code));

/**
 * RSA_PRIVATE_KEY_FILE when set (a bad file stops start-up). Otherwise `$DATA_DIR/keys/rsa-private.pem`,
 * generated on first start with mode 0600. The data dir itself is never created here: when it
 * doesn't exist (tests; an external PostgreSQL with no DATA_DIR) or can't be written, the key is
 * kept in memory and `source` says so.
 */
export async function loadRsaKeys(opts: { file?: string; dataDir: string }): Promise<RsaKeys> {
  if (opts.file) {
    const origin = `RSA_PRIVATE_KEY_FILE (${opts.file})`;
    let pem: string;
    try {
      pem = await fs.readFile(opts.file, 'utf8');
    } catch (err) {
      throw new Error(`${origin}: cannot read (${err instanceof Error ? err.message : String(err)})`, { cause: err });
    }
    return parsePem(pem, 'file', origin);
  }

  const keyFile = path.join(opts.dataDir, 'keys', 'rsa-private.pem');
  const origin = `RSA key ${keyFile}`;
  try {
    return parsePem(await fs.readFile(keyFile, 'utf8'), 'data-dir', origin);
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
  }

  const pem = await generatePrivateKeyPem();
  try {
    await fs.access(opts.dataDir);
  } catch {
    return parsePem(pem, 'memory', origin);
  }
  try {
    await fs.mkdir(path.dirname(keyFile), { recursive: true, mode: 0o700 });
    // Write aside then hard-link into place: the link either wins atomically or fails with EEXIST
    // because another replica sharing DATA_DIR won, and then everyone uses the winner's key.
    const temp = `${keyFile}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
    await fs.writeFile(temp, pem, { mode: 0o600, flag: 'wx' });
    try {
      await fs.link(temp, keyFile);
    } catch (err) {
      if (!isErrno(err, 'EEXIST')) throw err;
      return parsePem(await fs.readFile(keyFile, 'utf8'), 'data-dir', origin);
    } finally {
      await fs.unlink(temp).catch(() => {});
    }
    return parsePem(pem, 'data-dir', origin);
  } catch (err) {
    if (isErrno(err, 'EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'ENOENT')) return parsePem(pem, 'memory', origin);
    throw err;
  }
}

/** A key pair as recorded in the database for every replica (table server_keys). */
export type SharedKeyRecord = {
  publicKeyPem: string;
  /** PKCS#8 PEM ('plain'), sealed under KEY_ENCRYPTION_SECRET ('aes-256-gcm'), or null: the key lives in each replica's RSA_PRIVATE_KEY_FILE ('file'). */
  privateKey: string | null;
  privateKeyFormat: 'file' | 'plain' | 'aes-256-gcm';
};
/** Records `candidate` under `name` unless a record exists (insert … on conflict do nothing), and returns the one on record. */
export type SharedKeyStore = { claim(name: string, candidate: SharedKeyRecord): Promise<SharedKeyRecord> };

export const REQUEST_KEY_NAME = 'request-rsa';

/** Short, stable name of a public key for messages: base64url SHA-256 of its SPKI, first 16 characters. */
export function keyFingerprint(publicKeyPem: string): string {
  const der = crypto.createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' });
  return crypto.createHash('sha256').update(der).digest('base64url').slice(0, 16);
}

function sealKey(secret: string, name: string): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', secret, 'suanli', `server-keys/${name}`, 32));
}

function seal(pem: string, secret: string, name: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', sealKey(secret, name), iv);
  cipher.setAAD(Buffer.from(name));
  const body = Buffer.concat([cipher.update(pem, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

function unseal(sealed: string, secret: string, name: string): string {
  const raw = Buffer.from(sealed, 'base64');
  const decipher = crypto.createDecipheriv('aes-256-gcm', sealKey(secret, name), raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(name));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

const publicPemOf = (pem: string) => crypto.createPublicKey(crypto.createPrivateKey(pem)).export({ type: 'spki', format: 'pem' }).toString();

/**
 * The request-encryption key every replica on one database agrees on (issue #7 item 18).
 *
 * - With RSA_PRIVATE_KEY_FILE: that key, and its public half is recorded in the database the first
 *   time; a replica whose file holds another key refuses to start (so a load balancer never mixes
 *   two keys). The private key is not copied into the database.
 * - Without: the first replica records a key pair in the database (the existing
 *   `$DATA_DIR/keys/rsa-private.pem` if there is one, so an upgrade keeps its key, else a new one),
 *   every other replica reads that one back. The private key is stored sealed with AES-256-GCM
 *   under a key derived from KEY_ENCRYPTION_SECRET when that is set, else as plain PEM (the
 *   database's own access control is then what protects it).
 */
export async function loadSharedRsaKeys(opts: { file?: string; dataDir: string; store: SharedKeyStore; secret?: string }): Promise<RsaKeys> {
  const name = REQUEST_KEY_NAME;
  const fix = `To replace the shared key on purpose, stop every replica and run: DELETE FROM server_keys WHERE name = '${name}';`;
  if (opts.file) {
    const keys = await loadRsaKeys({ file: opts.file, dataDir: opts.dataDir });
    const stored = await opts.store.claim(name, { publicKeyPem: keys.publicKeyPem, privateKey: null, privateKeyFormat: 'file' });
    if (keyFingerprint(stored.publicKeyPem) !== keyFingerprint(keys.publicKeyPem)) {
      throw new Error(
        `RSA_PRIVATE_KEY_FILE (${opts.file}) holds request-encryption key ${keyFingerprint(keys.publicKeyPem)}, but the other replicas on this database ` +
          `use key ${keyFingerprint(stored.publicKeyPem)} (table server_keys): a sign-in encrypted for one would fail on the other. ` +
          `Give every replica the same key file${stored.privateKeyFormat === 'file' ? '' : ', or unset RSA_PRIVATE_KEY_FILE to use the shared key'}. ${fix}`,
      );
    }
    return keys;
  }

  const keyFile = path.join(opts.dataDir, 'keys', 'rsa-private.pem');
  let pem: string;
  try {
    pem = await fs.readFile(keyFile, 'utf8');
    parsePem(pem, 'data-dir', `RSA key ${keyFile}`);
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
    pem = await generatePrivateKeyPem();
  }
  const candidate: SharedKeyRecord = opts.secret
    ? { publicKeyPem: publicPemOf(pem), privateKey: seal(pem, opts.secret, name), privateKeyFormat: 'aes-256-gcm' }
    : { publicKeyPem: publicPemOf(pem), privateKey: pem, privateKeyFormat: 'plain' };
  const stored = await opts.store.claim(name, candidate);
  if (stored.privateKeyFormat === 'file' || stored.privateKey === null) {
    throw new Error(
      `The other replicas on this database use request-encryption key ${keyFingerprint(stored.publicKeyPem)} from their RSA_PRIVATE_KEY_FILE; ` +
        `set RSA_PRIVATE_KEY_FILE on this replica to the same key file. ${fix}`,
    );
  }
  let sharedPem = stored.privateKey;
  if (stored.privateKeyFormat === 'aes-256-gcm') {
    if (!opts.secret) throw new Error(`The shared request-encryption key in the database (server_keys) is encrypted: set KEY_ENCRYPTION_SECRET to the value the other replicas use. ${fix}`);
    try {
      sharedPem = unseal(stored.privateKey, opts.secret, name);
    } catch (err) {
      throw new Error(`KEY_ENCRYPTION_SECRET does not open the shared request-encryption key in the database (server_keys): set it to the value the other replicas use. ${fix}`, { cause: err });
    }
  }
  return parsePem(sharedPem, 'database', `shared RSA key (server_keys ${name})`);
}
