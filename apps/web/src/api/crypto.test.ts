import nodeCrypto, { webcrypto } from 'node:crypto';
import axios, { AxiosError, AxiosHeaders, type AxiosAdapter, type InternalAxiosRequestConfig } from 'axios';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { decryptResponse, ENCRYPT_HEADER, encryptRequest, PUBLIC_KEY_URL, randomAesKey, resetPublicKey } from './crypto.ts';

/**
 * Interop with the server's side of SPEC §5, done here with Node's own crypto (what the server
 * uses): whatever the web encrypts Node must decrypt, and the other way round.
 */
const { privateKey, publicKey } = nodeCrypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();

const nodeOpenKey = (header: string) =>
  nodeCrypto.privateDecrypt({ key: privateKey, padding: nodeCrypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(header, 'base64')).toString('latin1');
const nodeDecrypt = (body: string, aesKey: string) => {
  const d = nodeCrypto.createDecipheriv('aes-256-ecb', Buffer.from(aesKey, 'latin1'), null);
  return Buffer.concat([d.update(Buffer.from(body, 'base64')), d.final()]).toString('utf8');
};
const nodeEncrypt = (text: string, aesKey: string) => {
  const c = nodeCrypto.createCipheriv('aes-256-ecb', Buffer.from(aesKey, 'latin1'), null);
  return Buffer.concat([c.update(text, 'utf8'), c.final()]).toString('base64');
};

const envelope = (data: unknown) => new Response(JSON.stringify({ code: 200, msg: '操作成功', data }), { status: 200, headers: { 'content-type': 'application/json' } });

beforeAll(() => {
  // jsdom's window.crypto has getRandomValues but no subtle; browsers in a secure context have both.
  if (!globalThis.crypto?.subtle) vi.stubGlobal('crypto', webcrypto);
});

beforeEach(() => {
  resetPublicKey();
  window.__PUBLIC_KEY__ = publicKeyPem;
});
afterEach(() => {
  delete window.__PUBLIC_KEY__;
  vi.unstubAllGlobals();
  if (!globalThis.crypto?.subtle) vi.stubGlobal('crypto', webcrypto);
});

describe('randomAesKey', () => {
  it('makes 32 letters or digits, different every time', () => {
    const keys = Array.from({ length: 200 }, randomAesKey);
    for (const k of keys) expect(k).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(new Set(keys).size).toBe(keys.length);
    // Every character class shows up across 6400 draws: no truncated alphabet.
    const all = keys.join('');
    expect(all).toMatch(/[A-Z]/);
    expect(all).toMatch(/[a-z]/);
    expect(all).toMatch(/[0-9]/);
  });
});

describe('encryptRequest → Node', () => {
  it('produces a body and header the server (Node crypto, RSA-OAEP SHA-256, AES-256-ECB) can open', async () => {
    const data = { phone: '13712345678', password: 'abc12345', note: '算力云 🚀', list: Array.from({ length: 500 }, (_, i) => i) };
    const { body, header, aesKey } = await encryptRequest(data);
    expect(aesKey).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(nodeOpenKey(header)).toBe(aesKey);
    expect(JSON.parse(nodeDecrypt(body, aesKey))).toEqual(data);
    expect(body).not.toContain('abc12345');
  });

  it('uses a fresh AES key per request', async () => {
    const a = await encryptRequest({ x: 1 });
    const b = await encryptRequest({ x: 1 });
    expect(a.aesKey).not.toBe(b.aesKey);
    expect(a.body).not.toBe(b.body);
  });

  it('accepts the inlined key as bare base64 DER too', async () => {
    window.__PUBLIC_KEY__ = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    const { header, aesKey } = await encryptRequest({});
    expect(nodeOpenKey(header)).toBe(aesKey);
  });

  it('fetches the public key once from the server when the page has none, and caches it', async () => {
    delete window.__PUBLIC_KEY__;
    const fetchMock = vi.fn(async () => envelope({ publicKey: publicKeyPem }));
    vi.stubGlobal('fetch', fetchMock);
    const first = await encryptRequest({ a: 1 });
    const second = await encryptRequest({ a: 2 });
    expect(fetchMock).toHaveBeenCalledTimes(1);
    expect(fetchMock.mock.calls[0]).toEqual([PUBLIC_KEY_URL, expect.anything()]);
    expect(nodeOpenKey(first.header)).toBe(first.aesKey);
    expect(nodeOpenKey(second.header)).toBe(second.aesKey);
  });

  it('retries the key fetch on the next call after a failure', async () => {
    delete window.__PUBLIC_KEY__;
    const fetchMock = vi
      .fn<() => Promise<Response>>()
      .mockRejectedValueOnce(new TypeError('Failed to fetch'))
      .mockResolvedValueOnce(new Response('oops', { status: 502 }))
      .mockResolvedValue(envelope({ publicKey: publicKeyPem }));
    vi.stubGlobal('fetch', fetchMock);
    await expect(encryptRequest({})).rejects.toThrow('网络不稳定，请稍后重试');
    await expect(encryptRequest({})).rejects.toThrow('系统接口 502 异常');
    const ok = await encryptRequest({});
    expect(nodeOpenKey(ok.header)).toBe(ok.aesKey);
    expect(fetchMock).toHaveBeenCalledTimes(3);
  });

  it('explains itself where the browser has no WebCrypto (plain HTTP), before any network call', async () => {
    const fetchMock = vi.fn();
    vi.stubGlobal('fetch', fetchMock);
    vi.stubGlobal('crypto', { getRandomValues: webcrypto.getRandomValues.bind(webcrypto) });
    await expect(encryptRequest({ a: 1 })).rejects.toThrow('当前浏览器环境不支持加密传输，请使用 HTTPS 访问或更换浏览器');
    expect(fetchMock).not.toHaveBeenCalled();
  });
});

describe('Node → decryptResponse', () => {
  it('opens an envelope the server encrypted with the request key', () => {
    const aesKey = randomAesKey();
    const env = { code: 200, msg: '操作成功', data: { token: 't-1', name: '用户' } };
    expect(decryptResponse(nodeEncrypt(JSON.stringify(env), aesKey), aesKey)).toEqual(env);
  });

  it('throws a readable error for an answer that is not what was sent', () => {
    const aesKey = randomAesKey();
    expect(() => decryptResponse('not base64 at all!', aesKey)).toThrow('网络不稳定，请稍后重试');
    expect(() => decryptResponse(nodeEncrypt('{"code":200}', randomAesKey()), aesKey)).toThrow(Error);
    expect(() => decryptResponse(nodeEncrypt('not json', aesKey), aesKey)).toThrow('网络不稳定，请稍后重试');
  });
});

describe('the API client end to end', () => {
  /**
   * A stand-in server behind axios' adapter: opens the request like the Fastify plugin does and
   * answers encrypted with the echoed header, or refuses like it.
   */
  const fakeServer = (answer: (plain: unknown) => { status: number; body: unknown }): AxiosAdapter => async (config: InternalAxiosRequestConfig) => {
    const headers = AxiosHeaders.from(config.headers);
    const header = String(headers.get(ENCRYPT_HEADER));
    expect(String(headers.get('Content-Type'))).toMatch(/^text\/plain/);
    const aesKey = nodeOpenKey(header);
    const { status, body } = answer(JSON.parse(nodeDecrypt(String(config.data), aesKey)));
    const response = { data: nodeEncrypt(JSON.stringify(body), aesKey), status, statusText: '', headers: new AxiosHeaders({ [ENCRYPT_HEADER]: header }), config };
    if (status >= 400) throw new AxiosError('Request failed', AxiosError.ERR_BAD_REQUEST, config, null, response);
    return response;
  };

  it('encrypts a flagged post and hands back the decrypted data; errors come back decrypted too', async () => {
    vi.resetModules();
    const seen: unknown[] = [];
    const originalAdapter = axios.defaults.adapter;
    axios.defaults.adapter = fakeServer((plain) => {
      seen.push(plain);
      const { password } = plain as { password: string };
      return password === 'abc12345'
        ? { status: 200, body: { code: 200, msg: '操作成功', data: { token: 'tok' } } }
        : { status: 400, body: { code: 400, msg: '手机号或密码错误', data: null, reason: 'BAD_CREDENTIALS' } };
    });
    try {
      // Imported after the adapter is set: the client's axios instance copies the defaults.
      const { http } = await import('./client.ts');
      await expect(http.post('/user/login/password', { phone: '13712345678', password: 'abc12345' }, { encrypt: true, repeatSubmit: false })).resolves.toEqual({
        token: 'tok',
      });
      await expect(http.post('/user/login/password', { phone: '13712345678', password: 'nope' }, { encrypt: true, silent: true })).rejects.toMatchObject({
        status: 400,
        message: '手机号或密码错误',
        reason: 'BAD_CREDENTIALS',
      });
      expect(seen).toEqual([
        { phone: '13712345678', password: 'abc12345' },
        { phone: '13712345678', password: 'nope' },
      ]);
    } finally {
      axios.defaults.adapter = originalAdapter;
    }
  });
});
