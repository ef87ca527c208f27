import type { TenantPaymentSettings } from '@suanli/contract/payment-settings';
import { boolean, integer, jsonb, pgTable, smallint, text, timestamp } from 'drizzle-orm/pg-core';
import { captchaTypes } from '@suanli/contract/tenant';

export type TenantSettings = {
  primaryColor: string;
  contactPhone: string;
  contactEmail: string;
  companyName: string;
  icp: string;
  /** English variants of the tenant's copy (#26), shown in English mode where given. */
  en?: { title?: string; sloganTitle?: string; slogan?: string; companyName?: string };
};

/** Per-tenant gateway settings (secrets included: the operator's own merchant accounts); the schema lives in the contract. */
export type { TenantPaymentSettings };

export const tenants = pgTable('tenants', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  code: text('code').notNull().unique(),
  title: text('title').notNull(),
  sloganTitle: text('slogan_title').notNull().default(''),
  slogan: text('slogan').notNull().default(''),
  favicon: text('favicon').notNull().default(''),
  hashRateLogo: text('hash_rate_logo').notNull().default(''),
  navigationLogo: text('navigation_logo').notNull().default(''),
  loginLogo: text('login_logo').notNull().default(''),
  htmlStyle: smallint('html_style').notNull().default(0),
  restricted: boolean('restricted').notNull().default(false),
  captchaType: text('captcha_type', { enum: captchaTypes }).notNull().default('slide'),
  settings: jsonb('settings').$type<TenantSettings>().notNull(),
  paymentSettings: jsonb('payment_settings').$type<TenantPaymentSettings>().notNull().default({}),
  isDefault: boolean('is_default').notNull().default(false),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export const tenantHosts = pgTable('tenant_hosts', {
  host: text('host').primaryKey(),
  tenantId: integer('tenant_id')
    .notNull()
    .references(() => tenants.id, { onDelete: 'cascade' }),
});
