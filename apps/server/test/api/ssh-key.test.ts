import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SSH_KEYS } from '@suanli/contract/ssh-key';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { parsePublicKey } from '../../src/modules/ssh-key/ssh-key.parser.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-keys-'));
/** A key pair made by ssh-keygen: the .pub line and ssh-keygen's own SHA256 fingerprint of it. */
function keygen(name: string, args: string[]): { pub: string; priv: string; fingerprint: string } {
  const file = path.join(dir, name);
  execFileSync('ssh-keygen', [...args, '-N', '', '-q', '-C', `${name}@laptop`, '-f', file]);
  const printed = execFileSync('ssh-keygen', ['-lf', `${file}.pub`]).toString();
  const fingerprint = printed.split(' ')[1]!;
  return { pub: fs.readFileSync(`${file}.pub`, 'utf8').trim(), priv: fs.readFileSync(file, 'utf8'), fingerprint };
}
const keys = {
  ed25519: keygen('ed', ['-t', 'ed25519']),
  rsa: keygen('rsa', ['-t', 'rsa', '-b', '2048']),
  ecdsa256: keygen('ec256', ['-t', 'ecdsa', '-b', '256']),
  ecdsa384: keygen('ec384', ['-t', 'ecdsa', '-b', '384']),
  ecdsa521: keygen('ec521', ['-t', 'ecdsa', '-b', '521']),
  rsa1024: keygen('rsa1024', ['-t', 'rsa', '-b', '1024']),
};
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const sshString = (b: Buffer | string) => {
  const buf = Buffer.isBuffer(b) ? b : Buffer.from(b);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(buf.length);
  return Buffer.concat([len, buf]);
};

describe('OpenSSH public key parsing', () => {
  it('computes the SHA256 fingerprint exactly as ssh-keygen -lf prints it, for every supported type', () => {
    for (const [name, k] of Object.entries(keys)) {
      if (name === 'rsa1024') continue;
      const parsed = parsePublicKey(k.pub);
      expect(parsed.fingerprint, name).toBe(k.fingerprint);
      expect(parsed.comment).toMatch(/@laptop$/);
    }
    expect(parsePublicKey(keys.rsa.pub).bits).toBe(2048);
    expect(parsePublicKey(keys.ecdsa521.pub).bits).toBe(521);
  });

  const [edType, edData] = keys.ed25519.pub.split(' ') as [string, string];
  const edBlob = Buffer.from(edData, 'base64');
  const malformed: [string, string, RegExp][] = [
    ['garbage', 'hello world', /公钥格式不正确/],
    ['empty', '   ', /请输入公钥/],
    ['no data', 'ssh-ed25519', /公钥内容缺失/],
    ['not base64', 'ssh-ed25519 AAAA$$$$', /Base64/],
    ['truncated base64', `${edType} ${edData.slice(0, -8)}`, /Base64|不完整/],
    ['truncated blob', `${edType} ${edBlob.subarray(0, edBlob.length - 5).toString('base64')}`, /不完整|长度/],
    ['trailing bytes in blob', `${edType} ${Buffer.concat([edBlob, Buffer.from([1, 2, 3])]).toString('base64')}`, /多余/],
    ['wrong type inside the blob', `ssh-rsa ${edData}`, /类型与内容不符/],
    ['ed25519 prefix on an RSA blob', `ssh-ed25519 ${keys.rsa.pub.split(' ')[1]}`, /类型与内容不符/],
    ['ECDSA curve mismatch', `ecdsa-sha2-nistp384 ${keys.ecdsa256.pub.split(' ')[1]}`, /类型与内容不符/],
    ['RSA 1024', keys.rsa1024.pub, /1024 位，至少需要 2048 位/],
    ['private key pasted', keys.ed25519.priv, /私钥/],
    ['PEM private key pasted', crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), /私钥/],
    ['several lines', `${keys.ed25519.pub}\n${keys.rsa.pub}`, /一次只能添加一个公钥/],
    [
      'DSA',
      `ssh-dss ${Buffer.concat([sshString('ssh-dss'), sshString(crypto.randomBytes(129)), sshString(crypto.randomBytes(21)), sshString(crypto.randomBytes(128)), sshString(crypto.randomBytes(128))]).toString('base64')}`,
      /不支持 DSA/,
    ],
    ['ECDSA point not on the curve', `ecdsa-sha2-nistp256 ${Buffer.concat([sshString('ecdsa-sha2-nistp256'), sshString('nistp256'), sshString(Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 7)]))]).toString('base64')}`, /公钥数据无效/],
    ['SSH2 (RFC 4716) format', `---- BEGIN SSH2 PUBLIC KEY ----\n${edData}\n---- END SSH2 PUBLIC KEY ----`, /OpenSSH 格式/],
  ];
  it.each(malformed)('refuses %s with a message naming the problem', (_name, line, message) => {
    expect(() => parsePublicKey(line)).toThrow(message);
  });
});

describe.each(engines)('SSH public keys API (%s)', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ engine });
  });
  afterAll(async () => {
    await t?.close();
  });

  const add = (token: string, payload: object) => t.request({ method: 'POST', url: '/api/v1/pub_key/add', token, payload });
  const list = async (token: string) => {
    const res = await t.request({ method: 'GET', url: '/api/v1/pub_key/list', token });
    expect(res.statusCode).toBe(200);
    return res.json<{ data: { list: { id: number; name: string; type: string; fingerprint: string }[]; total: number } }>().data;
  };

  it('adds, lists and deletes keys; the name defaults to the comment, then the type', async () => {
    const { token } = await createUser(t);
    const a = await add(token, { key: keys.ed25519.pub });
    expect(a.statusCode).toBe(200);
    expect(a.json().data).toMatchObject({ name: 'ed@laptop', type: 'ssh-ed25519', fingerprint: keys.ed25519.fingerprint });
    const noComment = keys.ecdsa384.pub.split(' ').slice(0, 2).join(' ');
    expect((await add(token, { key: noComment })).json().data.name).toBe('ecdsa-sha2-nistp384');
    expect((await add(token, { key: keys.rsa.pub, name: '工作电脑' })).json().data.name).toBe('工作电脑');
    const l = await list(token);
    expect(l.total).toBe(3);
    expect(l.list.map((k) => k.fingerprint)).toEqual([keys.ed25519.fingerprint, keys.ecdsa384.fingerprint, keys.rsa.fingerprint]);
    expect(await t.container.sshKeys.linesOf({ tenantId: 1, userId: 0 })).toEqual([]);

    const del = await t.request({ method: 'POST', url: '/api/v1/pub_key/delete', token, payload: { id: l.list[0]!.id } });
    expect(del.statusCode).toBe(200);
    expect((await list(token)).total).toBe(2);
  });

  it('refuses a duplicate (same fingerprint, whatever the comment) with 409 in Chinese; another user may add it', async () => {
    const { token } = await createUser(t);
    expect((await add(token, { key: keys.ecdsa521.pub })).statusCode).toBe(200);
    const again = await add(token, { key: `${keys.ecdsa521.pub.split(' ').slice(0, 2).join(' ')} other-comment` });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 409, msg: '该公钥已添加过，请勿重复添加', data: null });
    const other = await createUser(t);
    expect((await add(other.token, { key: keys.ecdsa521.pub })).statusCode).toBe(200);
  });

  it('two parallel adds of the same key: exactly one is stored', async () => {
    const { token, user } = await createUser(t);
    const results = await Promise.all([add(token, { key: keys.ecdsa256.pub }), add(token, { key: keys.ecdsa256.pub })]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(await t.container.sshKeys.linesOf({ tenantId: user.tenantId, userId: user.id })).toHaveLength(1);
  });

  it(`keeps at most ${MAX_SSH_KEYS} keys per user`, async () => {
    const { token } = await createUser(t);
    for (let i = 0; i < MAX_SSH_KEYS; i++) {
      const pk = crypto.generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!;
      const blob = Buffer.concat([sshString('ssh-ed25519'), sshString(Buffer.from(pk, 'base64url'))]);
      expect((await add(token, { key: `ssh-ed25519 ${blob.toString('base64')}` })).statusCode).toBe(200);
    }
    const over = await add(token, { key: keys.ed25519.pub });
    expect(over.statusCode).toBe(409);
    expect(over.json().msg).toContain(`最多只能添加 ${MAX_SSH_KEYS} 个公钥`);
  });

  it('refuses malformed keys with 400 and writes nothing', async () => {
    const { token } = await createUser(t);
    for (const key of ['garbage', keys.rsa1024.pub, keys.ed25519.priv, `ssh-rsa ${keys.ed25519.pub.split(' ')[1]}`, `${keys.ed25519.pub}\n${keys.rsa.pub}`]) {
      const res = await add(token, { key });
      expect(res.statusCode, key.slice(0, 30)).toBe(400);
      expect(res.json().data).toBeNull();
      expect(res.json().msg).toMatch(/[\u4e00-\u9fff]/);
    }
    expect((await add(token, { key: 'x'.repeat(20_000) })).statusCode).toBe(400);
    expect((await add(token, { key: keys.ed25519.pub, name: 'n'.repeat(40) })).statusCode).toBe(400);
    expect((await list(token)).total).toBe(0);
  });

  it("another user's key or a missing id answers 404 alike; nothing is deleted", async () => {
    const owner = await createUser(t);
    const id = (await add(owner.token, { key: keys.ed25519.pub })).json<{ data: { id: number } }>().data.id;
    const stranger = await createUser(t);
    for (const target of [id, id + 100_000]) {
      const res = await t.request({ method: 'POST', url: '/api/v1/pub_key/delete', token: stranger.token, payload: { id: target } });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 404, msg: '公钥不存在', data: null });
    }
    expect((await list(owner.token)).total).toBe(1);
    expect((await list(stranger.token)).total).toBe(0);
  });

  it('needs a session', async () => {
    expect((await t.request({ method: 'GET', url: '/api/v1/pub_key/list' })).statusCode).toBe(401);
    expect((await t.request({ method: 'POST', url: '/api/v1/pub_key/add', payload: { key: keys.ed25519.pub } })).statusCode).toBe(401);
  });
});
