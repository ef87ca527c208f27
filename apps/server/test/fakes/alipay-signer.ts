import crypto, { type KeyObject } from 'node:crypto';

/**
 * Alipay's side of a notification, for tests: the content Alipay signs (every parameter but
 * `sign` and `sign_type`, sorted by name, raw `k=v` joined with `&`) and its SHA256withRSA
 * signature. The product verifies with the official alipay-sdk; this is the independent signer.
 */
export function alipayNotifyContent(params: Record<string, string>): string {
  return Object.keys(params)
    .filter((k) => k !== 'sign' && k !== 'sign_type')
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');
}

export const rsa2Sign = (content: string, key: KeyObject): string => crypto.sign('sha256', Buffer.from(content, 'utf8'), key).toString('base64');
