import crypto from 'node:crypto';
import type { SharedKeyStore } from './rsa-keys.ts';

/**
 * Secrets the server must read back (instance root passwords, large-model upstream API keys) are
 * kept sealed with AES-256-GCM under a random 256-bit key per purpose, which every replica shares
 * through the server_keys table (row `keyName`, first writer wins): stored itself sealed under
 * KEY_ENCRYPTION_SECRET when that is set, else plain (the database's access control protects it, as
 * it does for the RSA key). Each value is bound to a context (`aad`, e.g. its row), so a sealed
 * value can't be moved elsewhere. A leaked table alone reveals nothing.
 */
const VERSION = 'v1';

const wrapKey = (secret: string, keyName: string) => Buffer.from(crypto.hkdfSync('sha256', secret, 'suanli', `server-keys/${keyName}`, 32));

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

export type SecretVault = {
  /** Seals `plain`, bound to `context` (opening needs the same context). */
  seal(context: string, plain: string): Promise<string>;
  open(context: string, sealed: string): Promise<string>;
};

export function createSecretVault(deps: { store: SharedKeyStore; secret?: string; keyName: string }): SecretVault {
  const { keyName } = deps;
  let keyPromise: Promise<Buffer> | undefined;
  const load = async (): Promise<Buffer> => {
    const fresh = crypto.randomBytes(32);
    const fingerprint = `aes-256-gcm key sha256:${crypto.createHash('sha256').update(fresh).digest('base64url').slice(0, 16)}`;
    const stored = await deps.store.claim(
      keyName,
      deps.secret
        ? { publicKeyPem: fingerprint, privateKey: gcmSeal(wrapKey(deps.secret, keyName), fresh, keyName), privateKeyFormat: 'aes-256-gcm' }
        : { publicKeyPem: fingerprint, privateKey: fresh.toString('base64'), privateKeyFormat: 'plain' },
    );
    if (!stored.privateKey) throw new Error(`server_keys ${keyName}: no key recorded`);
    if (stored.privateKeyFormat === 'plain') return Buffer.from(stored.privateKey, 'base64');
    if (!deps.secret) throw new Error(`The ${keyName} key in server_keys is encrypted: set KEY_ENCRYPTION_SECRET to the value the other replicas use.`);
    try {
      return gcmOpen(wrapKey(deps.secret, keyName), stored.privateKey, keyName);
    } catch (err) {
      throw new Error(`KEY_ENCRYPTION_SECRET does not open the ${keyName} key in the database (server_keys).`, { cause: err });
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
    async seal(context, plain) {
      return `${VERSION}:${gcmSeal(await key(), Buffer.from(plain, 'utf8'), context)}`;
    },
    async open(context, sealed) {
      if (!sealed.startsWith(`${VERSION}:`)) throw new Error(`unknown sealed ${keyName} format`);
      return gcmOpen(await key(), sealed.slice(VERSION.length + 1), context).toString('utf8');
    },
  };
}
