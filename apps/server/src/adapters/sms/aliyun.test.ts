import { describe, expect, it } from 'vitest';
import { AliyunSmsError, canonicalQuery, createAliyunSms, percentEncode, signRpc, stringToSign } from './aliyun.ts';

describe('Aliyun RPC signature', () => {
  it('matches the worked example of Aliyun\'s "RPC signature" documentation (DescribeRegions)', () => {
    const params = {
      Timestamp: '2016-02-23T12:46:24Z',
      Format: 'XML',
      AccessKeyId: 'testid',
      Action: 'DescribeRegions',
      SignatureMethod: 'HMAC-SHA1',
      SignatureNonce: '3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf',
      Version: '2014-05-26',
      SignatureVersion: '1.0',
    };
    expect(stringToSign('GET', params)).toBe(
      'GET&%2F&AccessKeyId%3Dtestid%26Action%3DDescribeRegions%26Format%3DXML%26SignatureMethod%3DHMAC-SHA1' +
        '%26SignatureNonce%3D3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf%26SignatureVersion%3D1.0' +
        '%26Timestamp%3D2016-02-23T12%253A46%253A24Z%26Version%3D2014-05-26',
    );
    expect(signRpc('GET', params, 'testsecret')).toBe('OLeaidS1JvxuMvnyHOwuJ+uX5qY=');
  });

  it('matches the SendSms example of the Dysmsapi "HTTP protocol and signature" documentation (Chinese sign name)', () => {
    const params = {
      AccessKeyId: 'testId',
      Action: 'SendSms',
      Format: 'XML',
      OutId: '123',
      PhoneNumbers: '15300000001',
      RegionId: 'cn-hangzhou',
      SignName: '阿里云短信测试专用',
      SignatureMethod: 'HMAC-SHA1',
      SignatureNonce: '45e25e9b-0a6f-4070-8c85-2956eda1b466',
      SignatureVersion: '1.0',
      TemplateCode: 'SMS_71390007',
      TemplateParam: '{"customer":"test"}',
      Timestamp: '2017-07-12T02:42:19Z',
      Version: '2017-05-25',
    };
    expect(stringToSign('GET', params)).toBe(
      'GET&%2F&AccessKeyId%3DtestId%26Action%3DSendSms%26Format%3DXML%26OutId%3D123%26PhoneNumbers%3D15300000001' +
        '%26RegionId%3Dcn-hangzhou%26SignName%3D%25E9%2598%25BF%25E9%2587%258C%25E4%25BA%2591%25E7%259F%25AD%25E4%25BF%25A1%25E6%25B5%258B%25E8%25AF%2595%25E4%25B8%2593%25E7%2594%25A8' +
        '%26SignatureMethod%3DHMAC-SHA1%26SignatureNonce%3D45e25e9b-0a6f-4070-8c85-2956eda1b466%26SignatureVersion%3D1.0' +
        '%26TemplateCode%3DSMS_71390007%26TemplateParam%3D%257B%2522customer%2522%253A%2522test%2522%257D' +
        '%26Timestamp%3D2017-07-12T02%253A42%253A19Z%26Version%3D2017-05-25',
    );
    expect(signRpc('GET', params, 'testSecret')).toBe('zJDF+Lrzhj/ThnlvIToysFRq6t4=');
    // A stale Signature among the params must not be signed over.
    expect(signRpc('GET', { ...params, Signature: 'old' }, 'testSecret')).toBe('zJDF+Lrzhj/ThnlvIToysFRq6t4=');
  });

  it('percent-encodes as Aliyun does, not as encodeURIComponent does', () => {
    expect(percentEncode('a b')).toBe('a%20b');
    expect(percentEncode("*!'()")).toBe('%2A%21%27%28%29');
    expect(percentEncode('-_.~')).toBe('-_.~');
    expect(percentEncode('/=&+:')).toBe('%2F%3D%26%2B%3A');
    expect(percentEncode('{"code":"1"}')).toBe('%7B%22code%22%3A%221%22%7D');
    expect(percentEncode('短')).toBe('%E7%9F%AD');
  });
});

type Call = { url: URL; init: RequestInit | undefined };

function fakeFetch(answer: () => Promise<Response>) {
  const calls: Call[] = [];
  const fn: typeof fetch = async (input, init) => {
    calls.push({ url: new URL(input instanceof Request ? input.url : input.toString()), init });
    return answer();
  };
  return { fn, calls };
}

const json = (status: number, body: unknown) => async () => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

const baseOptions = {
  accessKeyId: 'LTAI-test-id',
  accessKeySecret: 'test-secret',
  signName: '算力云',
  templateCode: 'SMS_123456789',
  endpoint: 'https://dysmsapi.aliyuncs.com/',
  clock: () => new Date('2024-06-01T08:09:10.987Z'),
  nonce: () => 'nonce-0001',
};

describe('createAliyunSms', () => {
  it('sends a signed SendSms GET with the code as the template variable', async () => {
    const f = fakeFetch(json(200, { Code: 'OK', Message: 'OK', RequestId: 'R1', BizId: 'B1' }));
    await createAliyunSms({ ...baseOptions, fetch: f.fn }).sendCode({ tenantId: 1, phone: '13800138000', code: '123456' });

    expect(f.calls).toHaveLength(1);
    const { url, init } = f.calls[0]!;
    expect(init?.method).toBe('GET');
    expect(url.origin + url.pathname).toBe('https://dysmsapi.aliyuncs.com/');
    const q = Object.fromEntries(url.searchParams);
    expect(q).toEqual({
      AccessKeyId: 'LTAI-test-id',
      Action: 'SendSms',
      Format: 'JSON',
      PhoneNumbers: '13800138000',
      RegionId: 'cn-hangzhou',
      SignName: '算力云',
      Signature: expect.any(String),
      SignatureMethod: 'HMAC-SHA1',
      SignatureNonce: 'nonce-0001',
      SignatureVersion: '1.0',
      TemplateCode: 'SMS_123456789',
      TemplateParam: '{"code":"123456"}',
      Timestamp: '2024-06-01T08:09:10Z',
      Version: '2017-05-25',
    });
    // The wire form uses Aliyun's encoding (%20, %2A...), so the gateway re-derives the same string.
    const { Signature: signature, ...signed } = q;
    expect(url.search).toBe(`?Signature=${percentEncode(signature!)}&${canonicalQuery(signed)}`);
    // The signature the gateway will recompute from what it received (signRpc is pinned above
    // against Aliyun's published examples).
    expect(signature).toBe(signRpc('GET', signed, 'test-secret'));
  });

  it('uses a per-call sign name when the caller gives one', async () => {
    const f = fakeFetch(json(200, { Code: 'OK' }));
    await createAliyunSms({ ...baseOptions, fetch: f.fn }).sendCode({ tenantId: 1, phone: '13800138000', code: '000111', signName: '星湖智算' });
    expect(f.calls[0]!.url.searchParams.get('SignName')).toBe('星湖智算');
  });

  it("throws Aliyun's Message when the answer's Code is not OK", async () => {
    const f = fakeFetch(json(200, { Code: 'isv.BUSINESS_LIMIT_CONTROL', Message: '触发小时级流控Permits:5', RequestId: 'R2' }));
    const sms = createAliyunSms({ ...baseOptions, fetch: f.fn });
    const err = await sms.sendCode({ tenantId: 1, phone: '13800138000', code: '123456' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AliyunSmsError);
    expect((err as AliyunSmsError).message).toContain('触发小时级流控Permits:5');
    expect((err as AliyunSmsError).code).toBe('isv.BUSINESS_LIMIT_CONTROL');
    expect((err as AliyunSmsError).requestId).toBe('R2');
  });

  it('reads the refusal from a 4xx answer too (e.g. a bad signature)', async () => {
    const f = fakeFetch(json(400, { Code: 'SignatureDoesNotMatch', Message: 'Specified signature is not matched with our calculation.' }));
    await expect(createAliyunSms({ ...baseOptions, fetch: f.fn }).sendCode({ tenantId: 1, phone: '13800138000', code: '1' })).rejects.toThrow(
      /Specified signature is not matched.*SignatureDoesNotMatch/,
    );
  });

  it('throws when the gateway answers something that is not a SendSms result', async () => {
    const f = fakeFetch(async () => new Response('<html>502 Bad Gateway</html>', { status: 502 }));
    await expect(createAliyunSms({ ...baseOptions, fetch: f.fn }).sendCode({ tenantId: 1, phone: '13800138000', code: '1' })).rejects.toThrow(/HTTP 502/);
  });

  it('throws when the network fails', async () => {
    const f = fakeFetch(async () => {
      throw new TypeError('fetch failed');
    });
    const err = await createAliyunSms({ ...baseOptions, fetch: f.fn })
      .sendCode({ tenantId: 1, phone: '13800138000', code: '1' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AliyunSmsError);
    expect((err as Error).message).toMatch(/unreachable: fetch failed/);
  });

  it('gives up on a gateway that never answers', async () => {
    const hanging: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
      });
    await expect(createAliyunSms({ ...baseOptions, fetch: hanging, timeoutMs: 20 }).sendCode({ tenantId: 1, phone: '13800138000', code: '1' })).rejects.toThrow(
      AliyunSmsError,
    );
  });

  it('signs each request with a fresh nonce by default', async () => {
    const f = fakeFetch(json(200, { Code: 'OK' }));
    const sms = createAliyunSms({ ...baseOptions, nonce: undefined, fetch: f.fn });
    await sms.sendCode({ tenantId: 1, phone: '13800138000', code: '1' });
    await sms.sendCode({ tenantId: 1, phone: '13800138000', code: '2' });
    const [a, b] = f.calls.map((c) => c.url.searchParams.get('SignatureNonce'));
    expect(a).toBeTruthy();
    expect(a).not.toBe(b);
  });
});
