import { createContext, useContext, type ReactNode } from 'react';
import type { TenantDomainInfo } from '@suanli/contract/tenant';

const TenantContext = createContext<TenantDomainInfo | null>(null);

export function TenantProvider({ tenant, children }: { tenant: TenantDomainInfo; children: ReactNode }) {
  return <TenantContext.Provider value={tenant}>{children}</TenantContext.Provider>;
}

export function useTenant(): TenantDomainInfo {
  const tenant = useContext(TenantContext);
  if (!tenant) throw new Error('useTenant outside TenantProvider');
  return tenant;
}

/** Title and favicon of the tenant, applied before the first route renders. */
export function applyBranding(tenant: TenantDomainInfo): void {
  document.title = tenant.title;
  if (tenant.favicon) {
    let link = document.querySelector<HTMLLinkElement>('link[rel="icon"]');
    if (!link) {
      link = document.createElement('link');
      link.rel = 'icon';
      document.head.appendChild(link);
    }
    link.href = tenant.favicon;
  }
  document.documentElement.style.setProperty('--brand', tenant.config.primaryColor);
}
