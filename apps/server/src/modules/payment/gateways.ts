import type { PaymentMethod } from '@suanli/contract/payment';
import type { AlipaySettings, TenantPaymentSettings, WechatSettings } from '@suanli/contract/payment-settings';
import type { AlipayOptions } from '../../adapters/payments/alipay.ts';
import type { PaymentGateway } from '../../adapters/payments/port.ts';
import type { WechatPayOptions } from '../../adapters/payments/wechat.ts';

/** What the payer sees in the method list and in ledger memos. */
export const METHOD_NAMES: Record<PaymentMethod, string> = { sandbox: '沙箱支付', alipay: '支付宝', wechat: '微信支付' };

/** Real gateways first: where a tenant offers one, it is the one users should pick. */
const METHOD_ORDER: readonly PaymentMethod[] = ['alipay', 'wechat', 'sandbox'];

export type { AlipaySettings, WechatSettings };

/** What the tenant's Alipay settings give the adapter: public-key mode, or certificate mode when the three certificates are set. */
export function alipayOptionsOf(s: AlipaySettings): Omit<AlipayOptions, 'fetch' | 'clock' | 'timeoutMs'> {
  return {
    appId: s.appId,
    privateKeyPem: s.privateKeyPem,
    alipayPublicKeyPem: s.alipayPublicKeyPem,
    appCertPem: s.appCertPem,
    alipayPublicCertPem: s.alipayPublicCertPem,
    alipayRootCertPem: s.alipayRootCertPem,
    sellerId: s.sellerId,
    gatewayUrl: s.gatewayUrl,
    mode: s.mode,
  };
}

/** What the tenant's WeChat Pay settings give the adapter (public key, a starting platform certificate, certificate download). */
export function wechatOptionsOf(s: WechatSettings): Omit<WechatPayOptions, 'fetch' | 'clock' | 'nonce' | 'timeoutMs'> {
  return {
    mchId: s.mchId,
    appId: s.appId,
    merchantSerialNo: s.merchantSerialNo,
    merchantPrivateKeyPem: s.merchantPrivateKeyPem,
    apiV3Key: s.apiV3Key,
    publicKeyId: s.publicKeyId,
    publicKeyPem: s.publicKeyPem,
    platformPublicKeyPem: s.platformPublicKeyPem,
    platformSerialNo: s.platformSerialNo,
    downloadCertificates: s.downloadCertificates,
    baseUrl: s.baseUrl,
  };
}

/** The key ids a tenant's WeChat Pay settings name (configured serials; fetched certificates are only known to its gateway). */
export const wechatSerialsOf = (s: WechatSettings | undefined): string[] => [s?.platformSerialNo, s?.publicKeyId].filter((v): v is string => !!v).map((v) => v.toUpperCase());

export type GatewayFactories = {
  /** One sandbox per installation: its key pair is global, not a tenant's. */
  sandbox: PaymentGateway;
  alipay: (settings: AlipaySettings) => PaymentGateway;
  wechat: (settings: WechatSettings) => PaymentGateway;
};

export type GatewayTenant = { id: number; paymentSettings: TenantPaymentSettings };

/** Methods a tenant offers for new payments; the sandbox only where the installation allows it. */
export function enabledMethods(settings: TenantPaymentSettings, sandboxAllowed = true): PaymentMethod[] {
  return METHOD_ORDER.filter((m) => settings[m]?.enabled === true && (m !== 'sandbox' || sandboxAllowed));
}

/**
 * Builds a tenant's gateways from `tenants.payment_settings`. Adapters parse PEM keys when built,
 * so each is kept per tenant and method until that tenant's settings change (compared by value:
 * an operator's edit takes effect on the next call, on every replica, without a restart).
 */
export function createGatewayDirectory(factories: GatewayFactories, opts: { sandboxAllowed: boolean } = { sandboxAllowed: true }) {
  const cache = new Map<string, { settings: string; gateway: PaymentGateway }>();
  const { sandboxAllowed } = opts;

  return {
    /**
     * The tenant's gateway for `method`, or undefined when the tenant has no settings for it.
     * `enabledOnly: false` is for money already on its way: a notification or query for a payment
     * made before the operator switched the method off must still be verified and credited.
     * Throws the adapter's error when the settings are unusable (a malformed key).
     */
    forTenant(tenant: GatewayTenant, method: PaymentMethod, opts: { enabledOnly: boolean } = { enabledOnly: true }): PaymentGateway | undefined {
      const sandboxOk = sandboxAllowed;
      const settings = tenant.paymentSettings[method];
      if (!settings || (opts.enabledOnly && !settings.enabled)) return undefined;
      if (method === 'sandbox') return opts.enabledOnly && !sandboxOk ? undefined : factories.sandbox;
      const key = `${tenant.id}:${method}`;
      const fingerprint = JSON.stringify(settings);
      const hit = cache.get(key);
      if (hit && hit.settings === fingerprint) return hit.gateway;
      const { alipay, wechat } = tenant.paymentSettings;
      const gateway = method === 'alipay' ? alipay && factories.alipay(alipay) : wechat && factories.wechat(wechat);
      if (!gateway) return undefined;
      cache.set(key, { settings: fingerprint, gateway });
      return gateway;
    },
    sandbox: factories.sandbox,
    /** Methods the tenant offers for new payments. */
    offered: (settings: TenantPaymentSettings) => enabledMethods(settings, sandboxAllowed),
  };
}
export type GatewayDirectory = ReturnType<typeof createGatewayDirectory>;

const UUID = /^([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})$/i;

/**
 * The order number gateways know a payment by: its uuid without dashes (32 hex digits). WeChat
 * Pay takes at most 32 characters, Alipay 64, so one form fits all three.
 */
export const outTradeNoOf = (paymentId: string): string => paymentId.replaceAll('-', '').toLowerCase();

/** The payment id an order number names (either form), or undefined when it names none. */
export function paymentIdOf(outTradeNo: string): string | undefined {
  const m = UUID.exec(outTradeNo);
  return m ? `${m[1]}-${m[2]}-${m[3]}-${m[4]}-${m[5]}`.toLowerCase() : undefined;
}
