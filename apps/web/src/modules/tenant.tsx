import { createContext, useContext, useMemo, type ReactNode } from 'react';
import type { TenantDomainInfo } from '@suanli/contract/tenant';
import { brandColor } from '@suanli/domain/contrast';
import { useT } from '../locales/i18n.ts';

const TenantContext = createContext<TenantDomainInfo | null>(null);

/** #26: in English mode the tenant's copy is its English variant where it gave one. */
export function localizeTenant(tenant: TenantDomainInfo, lang: string): TenantDomainInfo {
  if (lang !== 'en-US' || !tenant.en) return tenant;
  const en = tenant.en;
  return {
    ...tenant,
    title: en.title || tenant.title,
    hash_rate_slogan_title: en.hash_rate_slogan_title || tenant.hash_rate_slogan_title,
    hash_rate_slogan: en.hash_rate_slogan || tenant.hash_rate_slogan,
    config: { ...tenant.config, companyName: en.companyName || tenant.config.companyName },
  };
}

export function TenantProvider({ tenant, children }: { tenant: TenantDomainInfo; children: ReactNode }) {
  const { lang } = useT();
  const value = useMemo(() => localizeTenant(tenant, lang), [tenant, lang]);
  return <TenantContext.Provider value={value}>{children}</TenantContext.Provider>;
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
  document.documentElement.style.setProperty('--brand', brandColor(tenant.config.primaryColor));
}
