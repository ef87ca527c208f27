import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { AppError } from '../../src/lib/errors.ts';
import { loadRsaKeys } from '../../src/lib/rsa-keys.ts';
import { buildTestApp, decryptLikeClient, encryptLikeClient, type TestApp } from '../helpers/app.ts';

/** SPEC §5/§9: flagged calls travel AES-encrypted with an RSA-protected key, both ways. */
describe('request and response encryption', () => {
  let t: TestApp;
  let publicKeyPem: string;
  const PHONE = '13712345678';

  beforeAll(async () => {
    t = await buildTestApp();
    // Throwaway flagged routes: echo (any JSON, any size) and a handler that fails.
    t.app.post('/test/encrypted/echo', { config: { encrypted: true } }, async (req) => ({ code: 200, msg: '操作成功', data: req.body }));
    t.app.post('/test/encrypted/conflict', { config: { encrypted: true } }, async () => {
      throw new AppError(409, '资源冲突：测试');
    });
    const res = await t.request({ method: 'GET', url: '/api/v1/crypto/public-key' });
    publicKeyPem = res.json().data.publicKey;
  });
  afterAll(() => t.close());

  /** A hand-built call, so each part of the wire format can be broken on purpose. */
  const raw = (url: string, body: string, headers: Record<string, string>) =>
    t.app.inject({ method: 'POST', url, payload: body, headers: { host: 'localhost', ...headers } });
  const sealed = (json: string, aesKey?: string) => encryptLikeClient(json, publicKeyPem, aesKey);
  const textHeaders = (header: string) => ({ 'content-type': 'text/plain;charset=utf-8', 'encrypt-key': header });
  const expect400 = (res: LightMyRequestResponse, msg: string, reason?: string) => {
    expect(res.statusCode).toBe(400);
    expect(res.headers['encrypt-key']).toBeUndefined();
    const body = res.json();
    expect(body).toMatchObject({ code: 400, msg, data: null });
    expect(body.reason).toBe(reason);
  };
  /** An error answered to a client whose key was readable: encrypted like a success. */
  const decrypted400 = (res: LightMyRequestResponse, aesKey: string, header: string, msg: string) => {
    expect(res.statusCode).toBe(400);
    expect(res.headers['encrypt-key']).toBe(header);
    expect(JSON.parse(decryptLikeClient(res.body, aesKey))).toMatchObject({ code: 400, msg, data: null });
  };

  it('serves the RSA-2048 public key as SPKI PEM in the envelope', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/crypto/public-key' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ code: 200, msg: '操作成功', data: { publicKey: expect.stringMatching(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n?$/) } });
    const key = crypto.createPublicKey(publicKeyPem);
    expect(key.asymmetricKeyType).toBe('rsa');
    expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);
  });

  it('registers through the encrypted /user/register and answers encrypted with the echoed header', async () => {
    await t.request({ method: 'POST', url: '/user/send-code', payload: { phone: PHONE, purpose: 'register' } });
    const code = t.sms.lastCode(PHONE);
    const { body, header, aesKey } = sealed(JSON.stringify({ phone: PHONE, code, password: 'abc12345', userName: '加密用户' }));
    const res = await raw('/user/register', body, textHeaders(header));

    expect(res.statusCode).toBe(200);
    expect(res.headers['encrypt-key']).toBe(header);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).toMatch(/^[A-Za-z0-9+/]+=*$/); // ciphertext, not JSON
    expect(res.body).not.toContain('token');
    const envelope = JSON.parse(decryptLikeClient(res.body, aesKey));
    expect(envelope).toMatchObject({ code: 200, msg: '操作成功', data: { token: expect.any(String) } });

    // The session works: the encrypted path reached the real service.
    const me = await t.request({ method: 'GET', url: '/api/v1/user/detail', token: envelope.data.token });
    expect(me.statusCode).toBe(200);
  });

  it('logs in through the helper\'s encrypted option, and wrong credentials come back encrypted too', async () => {
    const good = await t.request({ method: 'POST', url: '/user/login/password', encrypted: true, payload: { phone: PHONE, password: 'abc12345' } });
    expect(good.statusCode).toBe(200);
    expect(good.headers['encrypt-key']).toBeTruthy();
    expect(good.json()).toMatchObject({ code: 200, data: { token: expect.any(String) } });

    const bad = await t.request({ method: 'POST', url: '/user/login/password', encrypted: true, payload: { phone: PHONE, password: 'wrong-pass1' } });
    expect(bad.statusCode).toBeGreaterThanOrEqual(400);
    expect(bad.headers['encrypt-key']).toBeTruthy();
    expect(bad.json()).toMatchObject({ code: bad.statusCode, msg: expect.any(String), data: null });
  });

  it('validates the decrypted JSON with the route schema, naming the field, in an encrypted answer', async () => {
    const res = await t.request({ method: 'POST', url: '/user/login/password', encrypted: true, payload: { phone: '123', password: 'x' } });
    expect(res.statusCode).toBe(400);
    expect(res.headers['encrypt-key']).toBeTruthy();
    expect(res.json()).toMatchObject({ code: 400, msg: expect.stringContaining('手机号'), data: null });
  });

  it('round-trips unicode and large bodies, and compresses the ciphertext, not the plain text', async () => {
    const data = { text: '算力云 ✓ émoji 🚀', list: Array.from({ length: 2000 }, (_, i) => i) };
    const echoed = await t.request({ method: 'POST', url: '/test/encrypted/echo', encrypted: true, payload: data });
    expect(echoed.json()).toEqual({ code: 200, msg: '操作成功', data });

    const { body, header, aesKey } = sealed(JSON.stringify(data));
    const res = await raw('/test/encrypted/echo', body, { ...textHeaders(header), 'accept-encoding': 'gzip' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['encrypt-key']).toBe(header);
    const cipherText = zlib.gunzipSync(res.rawPayload).toString('utf8');
    expect(JSON.parse(decryptLikeClient(cipherText, aesKey))).toEqual({ code: 200, msg: '操作成功', data });
  });

  it('encrypts error envelopes a handler throws', async () => {
    const res = await t.request({ method: 'POST', url: '/test/encrypted/conflict', encrypted: true, payload: {} });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 409, msg: '资源冲突：测试', data: null });
  });

  describe('refuses a flagged route called without encryption', () => {
    it('plain JSON without encrypt-key → 400 ENCRYPTION_REQUIRED', async () => {
      const res = await t.request({ method: 'POST', url: '/user/login/password', payload: { phone: PHONE, password: 'abc12345' } });
      expect400(res, '该接口要求加密传输：请求缺少加密密钥（encrypt-key）', 'ENCRYPTION_REQUIRED');
    });

    it('a ciphertext body without encrypt-key → 400 ENCRYPTION_REQUIRED', async () => {
      const { body } = sealed('{}');
      const res = await raw('/test/encrypted/echo', body, { 'content-type': 'text/plain' });
      expect400(res, '该接口要求加密传输：请求缺少加密密钥（encrypt-key）', 'ENCRYPTION_REQUIRED');
    });

    it('encrypt-key with a JSON body → 400 ENCRYPTION_REQUIRED', async () => {
      const { header } = sealed('{}');
      const res = await raw('/test/encrypted/echo', JSON.stringify({ a: 1 }), { 'content-type': 'application/json', 'encrypt-key': header });
      expect400(res, '该接口要求加密传输：请求体须为加密文本（Content-Type: text/plain）', 'ENCRYPTION_REQUIRED');
    });

    it('encrypt-key with no body at all → 400 ENCRYPTION_REQUIRED', async () => {
      const { header } = sealed('{}');
      const res = await t.app.inject({ method: 'POST', url: '/test/encrypted/echo', headers: { host: 'localhost', 'encrypt-key': header } });
      expect400(res, '该接口要求加密传输：请求体须为加密文本（Content-Type: text/plain）', 'ENCRYPTION_REQUIRED');
    });
  });

  describe('refuses a bad encrypt-key with 400 加密密钥无效', () => {
    const cases: [string, () => string][] = [
      ['empty', () => ''],
      ['not base64', () => '!!!not-base64!!!'],
      ['base64 of the wrong length', () => Buffer.from('short').toString('base64')],
      ['right length, random bytes', () => crypto.randomBytes(256).toString('base64')],
      [
        'made with another public key',
        () => {
          const other = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
          return encryptLikeClient('{}', other).header;
        },
      ],
      [
        'made with PKCS#1 v1.5 instead of OAEP',
        () => crypto.publicEncrypt({ key: publicKeyPem, padding: crypto.constants.RSA_PKCS1_PADDING }, Buffer.from('A'.repeat(32))).toString('base64'),
      ],
      [
        'made with OAEP over SHA-1 instead of SHA-256',
        () => crypto.publicEncrypt({ key: publicKeyPem, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, Buffer.from('A'.repeat(32))).toString('base64'),
      ],
    ];
    it.each(cases)('%s', async (_name, header) => {
      const { body } = sealed('{}');
      const res = await raw('/test/encrypted/echo', body, textHeaders(header()));
      expect400(res, '加密密钥无效，请刷新页面后重试');
    });
  });

  it.each([
    ['too short', 'abc123'],
    ['33 characters', 'a'.repeat(33)],
    ['32 characters with symbols', `${'a'.repeat(31)}!`],
  ])('refuses an AES key that is %s with 400 加密密钥格式不正确', async (_name, aesKey) => {
    const header = crypto
      .publicEncrypt({ key: publicKeyPem, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(aesKey))
      .toString('base64');
    const res = await raw('/test/encrypted/echo', 'AAAA', textHeaders(header));
    expect400(res, '加密密钥格式不正确：应为 32 位字母或数字');
  });

  describe('refuses a body that does not decrypt, naming the stage, encrypted for the client that sent a good key', () => {
    it('not base64 → 加密请求体不是合法的 Base64 文本', async () => {
      const { header, aesKey } = sealed('{}');
      const res = await raw('/test/encrypted/echo', '{"phone":"13712345678"}', textHeaders(header));
      decrypted400(res, aesKey, header, '加密请求体不是合法的 Base64 文本');
    });

    it('empty → 加密请求体不能为空', async () => {
      const { header, aesKey } = sealed('{}');
      const res = await raw('/test/encrypted/echo', '   ', textHeaders(header));
      decrypted400(res, aesKey, header, '加密请求体不能为空');
    });

    it('not a whole number of AES blocks → 请求体解密失败', async () => {
      const { header, aesKey } = sealed('{}');
      const res = await raw('/test/encrypted/echo', Buffer.alloc(20).toString('base64'), textHeaders(header));
      decrypted400(res, aesKey, header, '请求体解密失败，请确认使用了与加密密钥相同的密钥加密');
    });

    it('bad PKCS7 padding → 请求体解密失败', async () => {
      const { header, aesKey } = sealed('{}');
      const cipher = crypto.createCipheriv('aes-256-ecb', Buffer.from(aesKey), null).setAutoPadding(false);
      const block = Buffer.alloc(16, 0x41);
      block[15] = 0; // a last byte of 0 is never valid PKCS7
      const body = Buffer.concat([cipher.update(block), cipher.final()]).toString('base64');
      const res = await raw('/test/encrypted/echo', body, textHeaders(header));
      decrypted400(res, aesKey, header, '请求体解密失败，请确认使用了与加密密钥相同的密钥加密');
    });

    it('encrypted with a different AES key than the header carries → 请求体解密失败 or not JSON, never 500', async () => {
      const { header, aesKey } = sealed('{}');
      const { body } = sealed(JSON.stringify({ a: 'x'.repeat(100) }), 'B'.repeat(32));
      const res = await raw('/test/encrypted/echo', body, textHeaders(header));
      expect(res.statusCode).toBe(400);
      expect(JSON.parse(decryptLikeClient(res.body, aesKey)).msg).toMatch(/请求体解密失败|不是合法的 JSON/);
    });

    it('decrypts to something that is not JSON → 解密后的请求体不是合法的 JSON', async () => {
      const { body, header, aesKey } = sealed('phone=13712345678');
      const res = await raw('/test/encrypted/echo', body, textHeaders(header));
      decrypted400(res, aesKey, header, '解密后的请求体不是合法的 JSON');
    });

    it('refuses prototype-poisoning keys like the JSON parser does', async () => {
      const { body, header, aesKey } = sealed('{"__proto__":{"admin":true}}');
      const res = await raw('/test/encrypted/echo', body, textHeaders(header));
      decrypted400(res, aesKey, header, '解密后的请求体不是合法的 JSON');
    });
  });

  it('keeps the 1 MiB body limit for encrypted bodies', async () => {
    const { header } = sealed('{}');
    const res = await raw('/test/encrypted/echo', 'A'.repeat(1024 * 1024 + 4), textHeaders(header));
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 413, msg: '请求体过大' });
  });

  it('refuses text/plain bodies on routes that are not flagged (415), and leaves their JSON alone', async () => {
    const res = await raw('/user/send-code', JSON.stringify({ phone: PHONE, purpose: 'login' }), { 'content-type': 'text/plain' });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({ code: 415, msg: '不支持的请求内容类型，请使用 application/json' });

    const json = await t.request({ method: 'POST', url: '/user/send-code', payload: { phone: '13700000001', purpose: 'login' } });
    expect(json.headers['encrypt-key']).toBeUndefined();
    expect(json.headers['content-type']).toContain('application/json');
  });

  it('still answers 404 for a text/plain post to an unknown path', async () => {
    const res = await raw('/api/v1/nothing-here', 'hello', { 'content-type': 'text/plain' });
    expect(res.statusCode).toBe(404);
  });
});

describe('RSA key pair loading', () => {
  const dirs: string[] = [];
  const tmp = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-keys-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });
  const roundTrip = (pem: string, decrypt: (b: Buffer) => Buffer) =>
    decrypt(crypto.publicEncrypt({ key: pem, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from('k'.repeat(32)))).toString();

  it('generates the key once under $DATA_DIR/keys with mode 0600 and reuses it after a restart', async () => {
    const dataDir = tmp();
    const first = await loadRsaKeys({ dataDir });
    const file = path.join(dataDir, 'keys', 'rsa-private.pem');
    expect(first.source).toBe('data-dir');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const second = await loadRsaKeys({ dataDir });
    expect(second.publicKeyPem).toBe(first.publicKeyPem);
    expect(roundTrip(first.publicKeyPem, second.decrypt)).toBe('k'.repeat(32));
    expect(fs.readdirSync(path.join(dataDir, 'keys'))).toEqual(['rsa-private.pem']); // no temp files left
  });

  it('agrees on one key when two processes start at once on a shared DATA_DIR', async () => {
    const dataDir = tmp();
    const [a, b] = await Promise.all([loadRsaKeys({ dataDir }), loadRsaKeys({ dataDir })]);
    expect(a.publicKeyPem).toBe(b.publicKeyPem);
  });

  it('reads RSA_PRIVATE_KEY_FILE (PKCS#1 or PKCS#8) before anything else', async () => {
    const dir = tmp();
    const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const file = path.join(dir, 'operator.pem');
    fs.writeFileSync(file, privateKey.export({ type: 'pkcs1', format: 'pem' }));
    const keys = await loadRsaKeys({ file, dataDir: tmp() });
    expect(keys.source).toBe('file');
    expect(keys.publicKeyPem).toBe(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  });

  it('stops start-up with a clear message for a missing, unreadable or weak key file', async () => {
    const dir = tmp();
    await expect(loadRsaKeys({ file: path.join(dir, 'missing.pem'), dataDir: dir })).rejects.toThrow(/RSA_PRIVATE_KEY_FILE .*cannot read/);
    const junk = path.join(dir, 'junk.pem');
    fs.writeFileSync(junk, 'not a key');
    await expect(loadRsaKeys({ file: junk, dataDir: dir })).rejects.toThrow(/not a readable PEM private key/);
    const weak = path.join(dir, 'weak.pem');
    fs.writeFileSync(weak, crypto.generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
    await expect(loadRsaKeys({ file: weak, dataDir: dir })).rejects.toThrow(/at least 2048 bits/);
  });

  it('keeps the key in memory, writing nothing, when DATA_DIR does not exist', async () => {
    const dataDir = path.join(tmp(), 'absent');
    const keys = await loadRsaKeys({ dataDir });
    expect(keys.source).toBe('memory');
    expect(fs.existsSync(dataDir)).toBe(false);
    expect(roundTrip(keys.publicKeyPem, keys.decrypt)).toBe('k'.repeat(32));
  });
});
