import { execFileSync } from 'node:child_process';
import crypto, { type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Test certificates made with the openssl CLI (no network): a self-signed root and certificates
 * it issues for keys generated here, with chosen subjects and serials — enough for Alipay's
 * certificate mode (app cert, Alipay public cert, Alipay root cert) and WeChat Pay platform
 * certificates.
 */
export type TestCa = { key: KeyObject; cert: string; subject: string };

const openssl = (dir: string, args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });

function inTmp<T>(fn: (dir: string) => T): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-certs-'));
  try {
    return fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const rsaKeyPair = () => crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });

/** A self-signed CA certificate for `subject` (openssl -subj form, e.g. /C=CN/O=Test/CN=Root). */
export function makeRootCa(subject: string, key: KeyObject = rsaKeyPair().privateKey): TestCa {
  return inTmp((dir) => {
    fs.writeFileSync(path.join(dir, 'ca.key'), key.export({ type: 'pkcs8', format: 'pem' }));
    openssl(dir, ['req', '-x509', '-new', '-key', 'ca.key', '-subj', subject, '-days', '3650', '-sha256', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-out', 'ca.crt']);
    return { key, cert: fs.readFileSync(path.join(dir, 'ca.crt'), 'utf8'), subject };
  });
}

/** A certificate for `publicOf`'s key, issued by `ca`, with the serial given in hex. */
export function issueCert(ca: TestCa, subject: string, keyPair: { privateKey: KeyObject }, serialHex: string, days = 365): string {
  return inTmp((dir) => {
    fs.writeFileSync(path.join(dir, 'ca.key'), ca.key.export({ type: 'pkcs8', format: 'pem' }));
    fs.writeFileSync(path.join(dir, 'ca.crt'), ca.cert);
    fs.writeFileSync(path.join(dir, 'leaf.key'), keyPair.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    openssl(dir, ['req', '-new', '-key', 'leaf.key', '-subj', subject, '-out', 'leaf.csr']);
    openssl(dir, ['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', `0x${serialHex}`, '-days', String(days), '-sha256', '-out', 'leaf.crt']);
    return fs.readFileSync(path.join(dir, 'leaf.crt'), 'utf8');
  });
}
