import { z } from 'zod';
import { password, phone, plainText, smsCode } from './validation.ts';

export const smsPurposes = ['register', 'login', 'reset', 'change_phone'] as const;
export const smsPurpose = z.enum(smsPurposes, { error: '验证码用途不正确' });
export type SmsPurpose = z.infer<typeof smsPurpose>;

const ticket = z.string().min(8).max(128);

export const sendCodeBody = z.strictObject({
  phone,
  purpose: smsPurpose,
  captchaTicket: ticket.optional(),
});

export const registerBody = z.strictObject({
  phone,
  code: smsCode,
  password,
  userName: plainText('用户名', 32).optional(),
});

export const loginPasswordBody = z.strictObject({
  phone,
  password: z.string({ error: '请输入密码' }).min(1, { error: '请输入密码' }).max(128, { error: '密码长度不能超过 64 位' }),
  captchaTicket: ticket.optional(),
});

export const loginCodeBody = z.strictObject({ phone, code: smsCode });

export const findPasswordBody = z.strictObject({ phone, code: smsCode, password });

export const changePasswordBody = z.strictObject({
  oldPassword: z.string({ error: '请输入原密码' }).min(1, { error: '请输入原密码' }).max(128),
  newPassword: password,
});

export const changePhoneBody = z.strictObject({
  phone,
  code: smsCode,
  /** The current password: a session alone can't move the account to another phone. */
  password: z.string({ error: '请输入当前登录密码' }).min(1, { error: '请输入当前登录密码' }).max(128, { error: '密码长度不能超过 64 位' }),
});

export const loginResult = z.object({ token: z.string(), expiresAt: z.string() });

export const userRoles = ['user', 'operator'] as const;
export const accountTypes = ['personal', 'enterprise'] as const;

export const userDetail = z.object({
  /** The name the user chose; empty until they choose one (the console shows a default in its language). */
  userName: z.string(),
  realNameAuth: z.boolean(),
  uuid: z.string(),
  phone: z.string(),
  role: z.enum(userRoles),
  accountType: z.enum(accountTypes),
  balance: z.number().int(),
  frozenBalance: z.number().int(),
  instanceNum: z.number().int(),
  createdAt: z.string(),
});
export type UserDetail = z.infer<typeof userDetail>;

export const sessionItem = z.object({
  id: z.string(),
  current: z.boolean(),
  userAgent: z.string(),
  ip: z.string(),
  createdAt: z.string(),
  lastSeenAt: z.string(),
});
export type SessionItem = z.infer<typeof sessionItem>;

export const sendCodeResult = z.object({ retryAfterSeconds: z.number().int() });
