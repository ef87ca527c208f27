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
   * RSA_PRIVATE_KEY_FILE (or give DATA_DIR) in production.
   */
  readonly source: 'file' | 'data-dir' | 'memory';
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
