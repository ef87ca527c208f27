import { ecb } from '@noble/ciphers/aes.js';
import { t } from '../locales/i18n.ts';

/**
 * SPEC §5/§9 request encryption, the client half (the server half is
 * apps/server/src/http/plugins/encryption.ts):
 *
 *   body    base64(AES-256-ECB/PKCS7(JSON.stringify(data), K)), sent as text/plain
 *   header  `encrypt-key` = base64(RSA-OAEP-SHA256(K, server public key))
 *   K       32 random letters/digits; its ASCII bytes are the AES-256 key
 *
 * An encrypted answer carries `encrypt-key` too and is decrypted with the K this call kept.
 * RSA goes through WebCrypto; AES-ECB through @noble/ciphers, because WebCrypto has no ECB and a
 * synchronous decrypt keeps the response path simple.
 */

export { ENCRYPT_HEADER } from './encrypt-key.ts';
export const PUBLIC_KEY_URL = '/api/v1/crypto/public-key';

declare global {
  interface Window {
    /** The server's public key (SPKI PEM or base64 DER), when the page was served with it inlined. */
    __PUBLIC_KEY__?: string;
  }
}

const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const utf8 = new TextEncoder();

/** 32 letters/digits from the CSPRNG. Bytes ≥ 248 are redrawn so all 62 characters are equally likely. */
export function randomAesKey(): string {
  const limit = 256 - (256 % KEY_ALPHABET.length);
  let key = '';
  while (key.length < 32) {
    for (const b of crypto.getRandomValues(new Uint8Array(48))) {
      if (b < limit && key.length < 32) key += KEY_ALPHABET[b % KEY_ALPHABET.length];
    }
  }
  return key;
}

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  // Chunked: spreading a large array into fromCharCode overflows the call stack.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export function base64ToBytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replace(/\s+/g, ''));
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** WebCrypto exists only in secure contexts (HTTPS or localhost); plain HTTP on a LAN address has none. */
function subtleCrypto(): SubtleCrypto {
  const subtle = globalThis.crypto?.subtle as SubtleCrypto | undefined;
  if (!subtle) throw new Error(t('common.errors.browserCrypto'));
  return subtle;
}

async function publicKeyText(): Promise<string> {
  const inlined = typeof window !== 'undefined' ? window.__PUBLIC_KEY__ : undefined;
  if (inlined) return inlined;
  let res: Response;
  try {
    res = await fetch(PUBLIC_KEY_URL, { headers: { accept: 'application/json' } });
  } catch {
    throw new Error(t('common.errors.network'));
  }
  const body = (await res.json().catch(() => undefined)) as { data?: { publicKey?: unknown } } | undefined;
  const key = body?.data?.publicKey;
  if (!res.ok || typeof key !== 'string') throw new Error(t('common.errors.status', { code: res.status }));
  return key;
}

let publicKey: Promise<CryptoKey> | undefined;

/** Fetched once per page and shared by every encrypted call; a failed fetch is retried next call. */
function serverPublicKey(subtle: SubtleCrypto): Promise<CryptoKey> {
  publicKey ??= publicKeyText()
    .then((text) => {
      const der = base64ToBytes(text.replace(/-----(BEGIN|END) PUBLIC KEY-----/g, ''));
      return subtle.importKey('spki', der, { name: 'RSA-OAEP', hash: 'SHA-256' }, false, ['encrypt']);
    })
    .catch((err: unknown) => {
      publicKey = undefined;
      throw err;
    });
  return publicKey;
}

/** Forget the cached public key (the server's key changed, or a test swaps it). */
export function resetPublicKey(): void {
  publicKey = undefined;
}

/** Encrypts a JSON body for a flagged call; keep `aesKey` to decrypt the answer. */
export async function encryptRequest(data: unknown): Promise<{ body: string; header: string; aesKey: string }> {
  const subtle = subtleCrypto();
  const key = await serverPublicKey(subtle);
  const aesKey = randomAesKey();
  const keyBytes = utf8.encode(aesKey);
  const body = bytesToBase64(ecb(keyBytes).encrypt(utf8.encode(JSON.stringify(data))));
  const header = bytesToBase64(new Uint8Array(await subtle.encrypt({ name: 'RSA-OAEP' }, key, keyBytes)));
  return { body, header, aesKey };
}

/** Decrypts an answer that came with `encrypt-key`, using the AES key its request was sent with. */
export function decryptResponse(body: string, aesKey: string): unknown {
  try {
    const plain = ecb(utf8.encode(aesKey)).decrypt(base64ToBytes(body));
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(plain)) as unknown;
  } catch {
    // A mangled answer (a proxy rewrote it, or it was cut short) reads to the user like a network fault.
    throw new Error(t('common.errors.network'));
  }
}
