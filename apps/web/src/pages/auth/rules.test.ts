import { describe, expect, it } from 'vitest';
import { firstError } from './PlainField.tsx';
import { loginPasswordChecks, phoneChecks, smsCodeChecks } from './rules.ts';

/** The sign-in page's plain fields keep antd Form's rules: same messages, format checks on blur. */
describe('sign-in field checks', () => {
  it('phone: required while typing, the 11-digit format only on blur and submit', () => {
    expect(firstError(phoneChecks(), '  ', 'change')).toBe('请输入手机号');
    expect(firstError(phoneChecks(), '123', 'change')).toBeNull();
    expect(firstError(phoneChecks(), '123', 'blur')).toBe('请输入正确的 11 位手机号');
    expect(firstError(phoneChecks(), '123', 'submit')).toBe('请输入正确的 11 位手机号');
    expect(firstError(phoneChecks(), '13712345678', 'submit')).toBeNull();
  });

  it('password: only required; SMS code: six digits on blur', () => {
    expect(firstError(loginPasswordChecks(), '', 'submit')).toBe('请输入密码');
    expect(firstError(loginPasswordChecks(), 'x', 'submit')).toBeNull();
    expect(firstError(smsCodeChecks(), '12', 'change')).toBeNull();
    expect(firstError(smsCodeChecks(), '12', 'blur')).toBe('短信验证码为 6 位数字');
    expect(firstError(smsCodeChecks(), '123456', 'blur')).toBeNull();
  });
});
