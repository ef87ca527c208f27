import crypto from 'node:crypto';
import { API_KEY_PREFIX, API_KEY_SECRET_RE } from '@suanli/contract/llm';
import { sha256 } from '../../lib/crypto.ts';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A new secret: `sk-` + 48 uniform base62 characters (≈ 285 bits). */
export function newApiKeySecret(): string {
  return API_KEY_PREFIX + Array.from({ length: 48 }, () => ALPHABET[crypto.randomInt(ALPHABET.length)]).join('');
}

/** What is stored and looked up: sha256 (hex) of the secret; a secret that can't be ours is refused before hashing. */
export function apiKeySecretHash(secret: string): string | undefined {
  return API_KEY_SECRET_RE.test(secret) ? sha256(secret) : undefined;
}

/** `sk-abcd…wxyz`: how a key is shown after creation. */
export function apiKeyHint(secret: string): string {
  return `${secret.slice(0, 7)}…${secret.slice(-4)}`;
}
