import type { TenantDomainInfo } from '@suanli/contract/tenant';
import { http } from '../client.ts';

declare global {
  interface Window {
    /** Inlined by the server into index.html per Host, so branding needs no round trip. */
    __TENANT__?: TenantDomainInfo;
  }
}

/** SPEC §7 Tenant: branding of the current host. */
export function fetchTenantDomain(): Promise<TenantDomainInfo> {
  if (window.__TENANT__) return Promise.resolve(window.__TENANT__);
  return http.get<TenantDomainInfo>('/ucenter/api/v1/tenant/domain', { domain: window.location.host }, { withToken: false });
}
