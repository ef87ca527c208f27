import { z } from 'zod';

/**
 * A tenant's payment gateway settings (`tenants.payment_settings`, set with `npm run
 * tenant:payments`; docs/operator-guide.md). One source for the database column's type, the
 * gateway directory and the CLI's check. Secrets included: these are the operator's own merchant
 * accounts, never sent to a browser.
 */
const pem = z.string().min(32, 'must be a PEM key or its base64 body');
const certPem = z.string().includes('-----BEGIN CERTIFICATE-----', { error: 'must be a PEM certificate (-----BEGIN CERTIFICATE-----)' });

export const alipaySettings = z
  .strictObject({
    enabled: z.boolean(),
    appId: z.string().min(1),
    /** The application private key (PKCS#1 or PKCS#8 PEM, or the bare base64 Alipay's tool prints). */
    privateKeyPem: pem,
    /** Public-key mode (公钥模式): Alipay's public key. */
    alipayPublicKeyPem: pem.optional(),
    /** Certificate mode (公钥证书模式): appCertPublicKey_<APPID>.crt, alipayCertPublicKey_RSA2.crt, alipayRootCert.crt. */
    appCertPem: certPem.optional(),
    alipayPublicCertPem: certPem.optional(),
    alipayRootCertPem: certPem.optional(),
    sellerId: z.string().optional(),
    gatewayUrl: z.url().optional(),
    mode: z.enum(['page', 'qr']),
  })
  .superRefine((s, ctx) => {
    const certs = [s.appCertPem, s.alipayPublicCertPem, s.alipayRootCertPem].filter((c) => c !== undefined).length;
    if (s.alipayPublicKeyPem !== undefined && certs > 0) {
      ctx.addIssue({ code: 'custom', path: ['alipayPublicKeyPem'], message: 'choose one mode: alipayPublicKeyPem (public-key mode) or the three certificates (certificate mode), not both' });
    } else if (s.alipayPublicKeyPem === undefined && certs !== 3) {
      ctx.addIssue({
        code: 'custom',
        path: certs === 0 ? ['alipayPublicKeyPem'] : ['appCertPem'],
        message: certs === 0 ? 'set alipayPublicKeyPem (public-key mode) or appCertPem, alipayPublicCertPem and alipayRootCertPem (certificate mode)' : 'certificate mode needs all three: appCertPem, alipayPublicCertPem and alipayRootCertPem',
      });
    }
  });

export const wechatSettings = z
  .strictObject({
    enabled: z.boolean(),
    mchId: z.string().min(1),
    appId: z.string().min(1),
    merchantSerialNo: z.string().min(1),
    merchantPrivateKeyPem: pem,
    apiV3Key: z.string().length(32, 'the API v3 key is exactly 32 characters'),
    /** Public-key mode (微信支付公钥): its id and the key. */
    publicKeyId: z.string().regex(/^PUB_KEY_ID_/, 'the WeChat Pay public key id starts with PUB_KEY_ID_').optional(),
    publicKeyPem: pem.optional(),
    /** Platform-certificate mode: optionally one certificate (or key) to start with, and its serial; the rest are fetched from /v3/certificates. */
    platformPublicKeyPem: pem.optional(),
    platformSerialNo: z.string().min(1).optional(),
    /** Fetch platform certificates from /v3/certificates; on unless only a public key is configured. */
    downloadCertificates: z.boolean().optional(),
    baseUrl: z.url().optional(),
  })
  .superRefine((s, ctx) => {
    if ((s.publicKeyId === undefined) !== (s.publicKeyPem === undefined)) ctx.addIssue({ code: 'custom', path: ['publicKeyId'], message: 'public-key mode needs both publicKeyId and publicKeyPem' });
    if ((s.platformSerialNo === undefined) !== (s.platformPublicKeyPem === undefined)) ctx.addIssue({ code: 'custom', path: ['platformSerialNo'], message: 'a platform key needs both platformSerialNo and platformPublicKeyPem' });
    if (s.downloadCertificates === false && s.publicKeyId === undefined && s.platformSerialNo === undefined) {
      ctx.addIssue({ code: 'custom', path: ['downloadCertificates'], message: 'with certificate download off, configure the WeChat Pay public key (publicKeyId, publicKeyPem)' });
    }
  });

export const tenantPaymentSettings = z.strictObject({
  /** The built-in sandbox cashier (credits money for free): off beside a real gateway unless `alongsideRealGateways` (modules/payment/sandbox-policy.ts). */
  sandbox: z.strictObject({ enabled: z.boolean(), alongsideRealGateways: z.boolean().optional() }).optional(),
  alipay: alipaySettings.optional(),
  wechat: wechatSettings.optional(),
});
export type TenantPaymentSettings = z.infer<typeof tenantPaymentSettings>;
export type AlipaySettings = z.infer<typeof alipaySettings>;
export type WechatSettings = z.infer<typeof wechatSettings>;
