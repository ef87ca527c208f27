import { z } from 'zod';
import { PASSWORD_RE, PHONE_RE } from '@suanli/domain/account-rules';

// The patterns live in the domain package so the web can use them without loading zod.
export { PASSWORD_RE, PHONE_RE };

export const phone = z
  .string({ error: '请输入手机号' })
  .trim()
  .regex(PHONE_RE, { error: '手机号格式不正确，请输入 11 位中国大陆手机号' });

export const password = z
  .string({ error: '请输入密码' })
  .min(8, { error: '密码长度至少 8 位' })
  .max(64, { error: '密码长度不能超过 64 位' })
  .regex(PASSWORD_RE, { error: '密码需同时包含字母和数字，且只能使用字母、数字和常用符号' });

export const smsCode = z
  .string({ error: '请输入短信验证码' })
  .trim()
  .regex(/^\d{6}$/, { error: '短信验证码为 6 位数字' });

/** Free text stored as given and rendered escaped; control characters are refused. */
export const plainText = (label: string, max: number, min = 1) =>
  z
    .string({ error: `请输入${label}` })
    .trim()
    .min(min, { error: min <= 1 ? `请输入${label}` : `${label}至少 ${min} 个字符` })
    .max(max, { error: `${label}不能超过 ${max} 个字符` })
    // eslint-disable-next-line no-control-regex
    .refine((s) => !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(s), {
      error: `${label}包含不可见的控制字符`,
    });

/**
 * An ISO 8601 instant with offset, in years 1900–9999: PostgreSQL has no year 0000 and JavaScript
 * dates beyond 9999 don't print as ISO 8601, so such a filter is refused here, naming the field.
 */
export const isoDateTime = (label: string) =>
  z.iso
    .datetime({ offset: true, error: `${label}格式不正确，应为 ISO 8601（带时区），如 2025-01-31T08:00:00+08:00` })
    .refine(
      (s) => {
        const t = Date.parse(s);
        return Number.isFinite(t) && t >= Date.UTC(1900, 0, 1) && t < Date.UTC(10000, 0, 1);
      },
      { error: `${label}超出范围，应在 1900–9999 年之间` },
    );
