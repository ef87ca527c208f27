import crypto from 'node:crypto';
import type { SharedKeyStore } from '../../lib/rsa-keys.ts';
import { createSecretVault } from '../../lib/sealed-secrets.ts';

/**
 * Instance root passwords are shown to their owner on demand (console "reveal"), so they are kept
 * sealed with AES-256-GCM (and separately argon2-hashed for SSH logins). The sealing key is one
 * random 256-bit key every replica shares through the server_keys table (row `instance-password`,
 * the same first-writer-wins record the request-encryption key uses): stored itself sealed under
 * KEY_ENCRYPTION_SECRET when that is set, else plain (the database's access control protects it,
 * as it does for the RSA key). A leaked `instances` table alone reveals no password.
 */
export const PASSWORD_KEY_NAME = 'instance-password';

export type PasswordVault = {
  /** Seals `password` for instance `instanceId` (bound to it: a sealed value can't be moved to another row). */
  seal(instanceId: string, password: string): Promise<string>;
  open(instanceId: string, sealed: string): Promise<string>;
};

export function createPasswordVault(deps: { store: SharedKeyStore; secret?: string }): PasswordVault {
  return createSecretVault({ ...deps, keyName: PASSWORD_KEY_NAME });
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
