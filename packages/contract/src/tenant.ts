import { z } from 'zod';

export const captchaTypes = ['click', 'slide', 'rotate', 'drag'] as const;
export const captchaType = z.enum(captchaTypes);
export type CaptchaType = z.infer<typeof captchaType>;

/** Tenant domain info of SPEC §3, plus the tenant's public settings the web needs. */
export const tenantDomainInfo = z.object({
  hash_rate_logo: z.string(),
  title: z.string(),
  config: z.object({
    restricted: z.boolean(),
    captchaType: captchaType,
    /** False when the server runs with CAPTCHA=off (development): the web skips the captcha step. */
    captchaEnabled: z.boolean(),
    primaryColor: z.string(),
    contactPhone: z.string(),
    contactEmail: z.string(),
    companyName: z.string(),
    icp: z.string(),
  }),
  favicon: z.string(),
  hash_rate_slogan_title: z.string(),
  hash_rate_slogan: z.string(),
  html_style: z.number().int(),
  navigation_logo: z.string(),
  login_logo: z.string(),
  /** #26: the tenant's own copy in English, shown in English mode where given (else the Chinese). */
  en: z
    .object({ title: z.string(), hash_rate_slogan_title: z.string(), hash_rate_slogan: z.string(), companyName: z.string() })
    .partial()
    .optional(),
});
export type TenantDomainInfo = z.infer<typeof tenantDomainInfo>;

export const tenantDomainQuery = z.object({ domain: z.string().max(253).optional() });
