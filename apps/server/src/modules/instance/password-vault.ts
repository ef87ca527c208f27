import crypto from 'node:crypto';
import type { SharedKeyStore } from '../../lib/rsa-keys.ts';

/**
 * Instance root passwords are shown to their owner on demand (console "reveal"), so they are kept
 * sealed with AES-256-GCM (and separately argon2-hashed for SSH logins). The sealing key is one
 * random 256-bit key every replica shares through the server_keys table (row `instance-password`,
 * the same first-writer-wins record the request-encryption key uses): stored itself sealed under
 * KEY_ENCRYPTION_SECRET when that is set, else plain (the database's access control protects it,
 * as it does for the RSA key). A leaked `instances` table alone reveals no password.
 */
export const PASSWORD_KEY_NAME = 'instance-password';
const VERSION = 'v1';

const wrapKey = (secret: string) => Buffer.from(crypto.hkdfSync('sha256', secret, 'suanli', `server-keys/${PASSWORD_KEY_NAME}`, 32));

function gcmSeal(key: Buffer, plain: Buffer, aad: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

function gcmOpen(key: Buffer, sealed: string, aad: string): Buffer {
  const raw = Buffer.from(sealed, 'base64');
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
}

export type PasswordVault = {
  /** Seals `password` for instance `instanceId` (bound to it: a sealed value can't be moved to another row). */
  seal(instanceId: string, password: string): Promise<string>;
  open(instanceId: string, sealed: string): Promise<string>;
};

export function createPasswordVault(deps: { store: SharedKeyStore; secret?: string }): PasswordVault {
  let keyPromise: Promise<Buffer> | undefined;
  const load = async (): Promise<Buffer> => {
    const fresh = crypto.randomBytes(32);
    const fingerprint = `aes-256-gcm key sha256:${crypto.createHash('sha256').update(fresh).digest('base64url').slice(0, 16)}`;
    const stored = await deps.store.claim(
      PASSWORD_KEY_NAME,
      deps.secret
        ? { publicKeyPem: fingerprint, privateKey: gcmSeal(wrapKey(deps.secret), fresh, PASSWORD_KEY_NAME), privateKeyFormat: 'aes-256-gcm' }
        : { publicKeyPem: fingerprint, privateKey: fresh.toString('base64'), privateKeyFormat: 'plain' },
    );
    if (!stored.privateKey) throw new Error(`server_keys ${PASSWORD_KEY_NAME}: no key recorded`);
    if (stored.privateKeyFormat === 'plain') return Buffer.from(stored.privateKey, 'base64');
    if (!deps.secret) throw new Error(`The instance password key in server_keys is encrypted: set KEY_ENCRYPTION_SECRET to the value the other replicas use.`);
    try {
      return gcmOpen(wrapKey(deps.secret), stored.privateKey, PASSWORD_KEY_NAME);
    } catch (err) {
      throw new Error('KEY_ENCRYPTION_SECRET does not open the instance password key in the database (server_keys).', { cause: err });
    }
  };
  const key = () => {
    keyPromise ??= load().catch((err: unknown) => {
      keyPromise = undefined;
      throw err;
    });
    return keyPromise;
  };
  return {
    async seal(instanceId, password) {
      return `${VERSION}:${gcmSeal(await key(), Buffer.from(password, 'utf8'), instanceId)}`;
    },
    async open(instanceId, sealed) {
      if (!sealed.startsWith(`${VERSION}:`)) throw new Error('unknown sealed password format');
      return gcmOpen(await key(), sealed.slice(VERSION.length + 1), instanceId).toString('utf8');
    },
  };
}

const LETTERS = 'abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ';
const DIGITS = '23456789';
/** A 16-character root password: letters and digits (no look-alikes), at least one of each, uniform. */
export function generateRootPassword(): string {
  const all = LETTERS + DIGITS;
  for (;;) {
    const p = Array.from({ length: 16 }, () => all[crypto.randomInt(all.length)]).join('');
    if (/[A-Za-z]/.test(p) && /\d/.test(p)) return p;
  }
}

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** `i-` + 10 lowercase letters and digits. */
export function newInstanceId(): string {
  return `i-${Array.from({ length: 10 }, () => ID_ALPHABET[crypto.randomInt(ID_ALPHABET.length)]).join('')}`;
}
