import type { TenantPaymentSettings } from '@suanli/contract/payment-settings';

/**
 * Whether a tenant's payers may use the sandbox cashier, which credits money without taking any:
 * the installation allows it (SANDBOX_PAYMENTS, on by default), the tenant's settings switch it on,
 * and — where the tenant has a real gateway (Alipay or WeChat Pay) configured — the operator said
 * so explicitly with `alongsideRealGateways`. Checked on every step of a sandbox payment (offer,
 * create, cashier, notification, reconciliation), so switching it off applies at once, also to
 * sandbox payments created before the switch.
 */
export function sandboxEnabled(settings: TenantPaymentSettings, installationAllows: boolean): boolean {
  const sandbox = settings.sandbox;
  if (!installationAllows || sandbox?.enabled !== true) return false;
  const realGateway = settings.alipay !== undefined || settings.wechat !== undefined;
  return !realGateway || sandbox.alongsideRealGateways === true;
}
