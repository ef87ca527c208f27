import { createContext, useContext, type ReactNode } from 'react';
import type { TenantDomainInfo } from '@suanli/contract/tenant';
import { readableOn } from '@suanli/domain/contrast';
import { useT } from '../locales/i18n.ts';

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
  // #23: text and white-on-brand stay at WCAG AA whatever colour the tenant chose.
  document.documentElement.style.setProperty('--brand', readableOn(tenant.config.primaryColor));
}

type TenantCopy = 'title' | 'hash_rate_slogan_title' | 'hash_rate_slogan' | 'companyName';

/** #26: the tenant's copy in the interface language: its English variant where it gave one. */
export function tenantText(tenant: TenantDomainInfo, field: TenantCopy, lang: string): string {
  const chinese = field === 'companyName' ? tenant.config.companyName : tenant[field];
  return (lang === 'en-US' && tenant.en?.[field]) || chinese;
}

/** tenantText for the current language, re-rendering on a switch. */
export function useTenantText(): (field: TenantCopy) => string {
  const tenant = useTenant();
  const { lang } = useT();
  return (field) => tenantText(tenant, field, lang);
}
