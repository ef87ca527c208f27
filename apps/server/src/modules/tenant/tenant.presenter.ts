import type { TenantDomainInfo } from '@suanli/contract/tenant';
import type { TenantRow } from './tenant.repository.ts';

export function presentTenantDomain(t: TenantRow, opts: { captchaEnabled: boolean }): TenantDomainInfo {
  return {
    hash_rate_logo: t.hashRateLogo,
    title: t.title,
    config: {
      restricted: t.restricted,
      captchaType: t.captchaType,
      captchaEnabled: opts.captchaEnabled,
      primaryColor: t.settings.primaryColor,
      contactPhone: t.settings.contactPhone,
      contactEmail: t.settings.contactEmail,
      companyName: t.settings.companyName,
      icp: t.settings.icp,
    },
    favicon: t.favicon,
    hash_rate_slogan_title: t.sloganTitle,
    hash_rate_slogan: t.slogan,
    html_style: t.htmlStyle,
    navigation_logo: t.navigationLogo,
    login_logo: t.loginLogo,
    ...(t.settings.en
      ? { en: { title: t.settings.en.title, hash_rate_slogan_title: t.settings.en.sloganTitle, hash_rate_slogan: t.settings.en.slogan, companyName: t.settings.en.companyName } }
      : {}),
  };
}
