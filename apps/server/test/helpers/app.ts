import crypto from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { createContainer, type Container, type ContainerOverrides } from '../../src/container.ts';
import { buildApp } from '../../src/app.ts';
import { seedDemo } from '../../src/db/seed.ts';
import type { Clock } from '../../src/lib/clock.ts';
import { generateRsaKeys, type RsaKeys } from '../../src/lib/rsa-keys.ts';
import { createFakeSms } from '../fakes/sms.ts';
import { openTestDatabase, type Engine } from './db.ts';

export type TestApp = {
  app: FastifyInstance;
  container: Container;
  sms: ReturnType<typeof createFakeSms>;
  /**
   * app.inject with Host set (default `localhost`, the seeded demo tenant). `encrypted` sends the
   * body as the web client does for flagged calls (SPEC §5) and decrypts the answer.
   */
  request(opts: InjectOptions & { host?: string; token?: string; encrypted?: boolean }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
};

let sharedRsaKeys: Promise<RsaKeys> | undefined;
/** One in-memory key pair per test process: generating RSA keys is the slow part of an app. */
const testRsaKeys = () => (sharedRsaKeys ??= generateRsaKeys());

const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * The client half of SPEC §5 as the web client does it (apps/web/src/api/crypto.ts), written
 * separately on Node's crypto so server tests don't check the server against itself.
 */
export function encryptLikeClient(json: string, publicKeyPem: string, aesKey: string = Array.from({ length: 32 }, () => KEY_ALPHABET[crypto.randomInt(KEY_ALPHABET.length)]).join('')) {
  const cipher = crypto.createCipheriv('aes-256-ecb', Buffer.from(aesKey, 'latin1'), null);
  const body = Buffer.concat([cipher.update(json, 'utf8'), cipher.final()]).toString('base64');
  const header = crypto
    .publicEncrypt({ key: publicKeyPem, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(aesKey, 'latin1'))
    .toString('base64');
  return { body, header, aesKey };
}

export function decryptLikeClient(body: string, aesKey: string): string {
  const decipher = crypto.createDecipheriv('aes-256-ecb', Buffer.from(aesKey, 'latin1'), null);
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
}

export async function buildTestApp(opts: { engine?: Engine; captcha?: boolean; clock?: Clock; env?: Record<string, string>; overrides?: ContainerOverrides } = {}): Promise<TestApp> {
  // PORT 80: the app is never listening in API tests, and payment URLs (http://<tenant host>:<PORT>)
  // then read like the tests' Host headers, with no port.
  const config = loadConfig({ CAPTCHA: opts.captcha ? 'on' : 'off', RATE_LIMIT: 'off', DATA_DIR: '/nonexistent-test-data', LOG_LEVEL: 'silent', PORT: '80', ...opts.env });
  const database = await openTestDatabase(opts.engine ?? 'pglite');
  const sms = createFakeSms();
  const container = await createContainer(config, { database, sms, clock: opts.clock, rsaKeys: await testRsaKeys(), ...opts.overrides });
  await seedDemo(container.db, () => {});
  const app = await buildApp(container);
  let publicKeyPem: string | undefined;
  /** Fetched the way the web client does, so the endpoint is part of every encrypted call. */
  const publicKey = async (host: string) =>
    (publicKeyPem ??= (await app.inject({ method: 'GET', url: '/api/v1/crypto/public-key', headers: { host } })).json<{ data: { publicKey: string } }>().data.publicKey);
  return {
    app,
    container,
    sms,
    async request({ host = 'localhost', token, headers, encrypted, ...rest }) {
      const base = { host, ...(token ? { authorization: `Bearer ${token}` } : {}) };
      if (!encrypted) return app.inject({ ...rest, headers: { ...base, ...headers } });

      const { payload, body, ...others } = rest;
      const data = payload ?? body;
      if (data === undefined) throw new Error('an encrypted request needs a payload');
      // A string is taken as the JSON text itself, so a test can send bytes no serializer would.
      const json = typeof data === 'string' ? data : JSON.stringify(data);
      const enc = encryptLikeClient(json, await publicKey(host));
      const res = await app.inject({
        ...others,
        payload: enc.body,
        headers: { ...base, 'content-type': 'text/plain;charset=utf-8', 'encrypt-key': enc.header, ...headers },
      });
      if (!res.headers['encrypt-key']) return res;
      const plain = decryptLikeClient(res.body, enc.aesKey);
      return Object.assign(res, { body: plain, payload: plain, rawPayload: Buffer.from(plain), json: () => JSON.parse(plain) as unknown });
    },
    async close() {
      await app.close();
      await container.close();
    },
  };
}
