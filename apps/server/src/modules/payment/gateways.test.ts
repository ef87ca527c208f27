import { tenantPaymentSettings } from '@suanli/contract/payment-settings';
import { describe, expect, it } from 'vitest';
import { alipayOptionsOf, wechatOptionsOf, wechatSerialsOf } from './gateways.ts';

const KEY = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----';
const CERT = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
const alipayBase = { enabled: true, appId: '2021', mode: 'page', privateKeyPem: KEY };
const wechatBase = { enabled: true, mchId: '1', appId: 'wx', merchantSerialNo: 'S', merchantPrivateKeyPem: KEY, apiV3Key: 'a7cde1ef9a0b1c2d3e4f5a6b7c8d9e0f' };
const messages = (v: unknown) => {
  const r = tenantPaymentSettings.safeParse(v);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('#20 tenant payment settings (contract schema)', () => {
  it('keeps accepting the settings stored before certificate mode and key sets existed', () => {
    expect(messages({ sandbox: { enabled: true }, alipay: { ...alipayBase, alipayPublicKeyPem: KEY }, wechat: { ...wechatBase, platformPublicKeyPem: KEY, platformSerialNo: 'PUB_KEY_ID_1' } })).toEqual([]);
  });

  it('takes Alipay certificate mode as the three certificates instead of the public key, and names what is missing', () => {
    expect(messages({ alipay: { ...alipayBase, appCertPem: CERT, alipayPublicCertPem: CERT, alipayRootCertPem: CERT } })).toEqual([]);
    expect(messages({ alipay: { ...alipayBase, appCertPem: CERT } })).toEqual(['alipay.appCertPem: certificate mode needs all three: appCertPem, alipayPublicCertPem and alipayRootCertPem']);
    expect(messages({ alipay: { ...alipayBase, alipayPublicKeyPem: KEY, appCertPem: CERT, alipayPublicCertPem: CERT, alipayRootCertPem: CERT } })[0]).toMatch(/choose one mode/);
    expect(messages({ alipay: alipayBase })[0]).toMatch(/set alipayPublicKeyPem/);
    expect(messages({ alipay: { ...alipayBase, appCertPem: KEY, alipayPublicCertPem: CERT, alipayRootCertPem: CERT } })[0]).toMatch(/must be a PEM certificate/);
  });

  it('takes WeChat Pay public-key mode, certificate download, or both, and refuses half a pair', () => {
    expect(messages({ wechat: { ...wechatBase, publicKeyId: 'PUB_KEY_ID_0112', publicKeyPem: KEY } })).toEqual([]);
    expect(messages({ wechat: wechatBase })).toEqual([]);
    expect(messages({ wechat: { ...wechatBase, publicKeyId: 'PUB_KEY_ID_0112' } })).toEqual(['wechat.publicKeyId: public-key mode needs both publicKeyId and publicKeyPem']);
    expect(messages({ wechat: { ...wechatBase, publicKeyId: '0112', publicKeyPem: KEY } })[0]).toMatch(/starts with PUB_KEY_ID_/);
    expect(messages({ wechat: { ...wechatBase, downloadCertificates: false } })[0]).toMatch(/with certificate download off/);
  });

  it('maps settings to adapter options and the serials a notification can be matched by', () => {
    expect(alipayOptionsOf({ ...alipayBase, mode: 'qr', appCertPem: CERT, alipayPublicCertPem: CERT, alipayRootCertPem: CERT })).toMatchObject({ appCertPem: CERT, alipayPublicKeyPem: undefined, mode: 'qr' });
    const wx = { ...wechatBase, publicKeyId: 'PUB_KEY_ID_ab', publicKeyPem: KEY, platformSerialNo: '5157f0', platformPublicKeyPem: KEY };
    expect(wechatOptionsOf(wx)).toMatchObject({ publicKeyId: 'PUB_KEY_ID_ab', platformSerialNo: '5157f0' });
    expect(wechatSerialsOf(wx)).toEqual(['5157F0', 'PUB_KEY_ID_AB']);
  });
});
