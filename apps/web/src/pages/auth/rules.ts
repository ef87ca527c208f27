import type { FormRule } from 'antd';
import { PASSWORD_RE, PHONE_RE } from '@suanli/domain/account-rules';
import { t } from '../../locales/i18n.ts';
import type { Check } from './PlainField.tsx';

/**
 * Form rules mirroring the server's contract (packages/contract/src/validation.ts), so most
 * mistakes are caught before a request. Functions, so the messages follow the current language.
 */
export const phoneRules = (): FormRule[] => [
  { required: true, whitespace: true, message: t('auth.rules.phoneRequired') },
  { pattern: PHONE_RE, message: t('auth.rules.phoneInvalid'), validateTrigger: 'onBlur' },
];

/** A password being chosen: 8–64 characters, letters and digits. */
export const newPasswordRules = (): FormRule[] => [
  { required: true, message: t('auth.rules.passwordRequired') },
  { min: 8, max: 64, message: t('auth.rules.passwordLength') },
  { pattern: PASSWORD_RE, message: t('auth.rules.passwordPattern') },
];

/** A password being typed to sign in: whatever it is, the server judges it. */
export const loginPasswordRules = (): FormRule[] => [{ required: true, message: t('auth.rules.passwordRequired') }];

export const smsCodeRules = (): FormRule[] => [
  { required: true, whitespace: true, message: t('auth.rules.codeRequired') },
  { pattern: /^\d{6}$/, message: t('auth.rules.codeInvalid'), validateTrigger: 'onBlur' },
];

/** Must equal the field `other` (the password just chosen). */
export const confirmRules = (other: string): FormRule[] => [
  { required: true, message: t('auth.rules.confirmRequired') },
  ({ getFieldValue }) => ({
    validator: (_rule, value: unknown) =>
      !value || getFieldValue(other) === value ? Promise.resolve() : Promise.reject(new Error(t('auth.rules.confirmMismatch'))),
  }),
];

export const userNameRules = (): FormRule[] => [{ max: 32, message: t('auth.rules.userNameMax') }];

/** Form.Item triggers for fields whose format rules wait for blur (typing clears the error). */
export const CHANGE_AND_BLUR = ['onChange', 'onBlur'];

/*
 * The same rules for the plain fields of the sign-in page (it loads no antd Form): same
 * patterns, same messages, format checks on blur as above.
 */
const filled = (v: string) => v.trim() !== '';

export const phoneChecks = (): Check[] => [
  { test: filled, message: t('auth.rules.phoneRequired') },
  { test: (v) => PHONE_RE.test(v), message: t('auth.rules.phoneInvalid'), onBlur: true },
];

export const loginPasswordChecks = (): Check[] => [{ test: (v) => v !== '', message: t('auth.rules.passwordRequired') }];

export const smsCodeChecks = (): Check[] => [
  { test: filled, message: t('auth.rules.codeRequired') },
  { test: (v) => /^\d{6}$/.test(v), message: t('auth.rules.codeInvalid'), onBlur: true },
];
