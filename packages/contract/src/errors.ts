/**
 * Machine-readable reasons carried next to the Chinese `msg` of an error envelope, for the few
 * errors the web reacts to (not just displays).
 */
export const ErrorReason = {
  /** Solve a captcha and send the same request again with its ticket. */
  CaptchaRequired: 'CAPTCHA_REQUIRED',
  /** The request failed (e.g. wrong password); the next try must come with a captcha ticket. */
  CaptchaNext: 'CAPTCHA_NEXT',
  AccountLocked: 'ACCOUNT_LOCKED',
  SessionExpired: 'SESSION_EXPIRED',
  EncryptionRequired: 'ENCRYPTION_REQUIRED',
  EnterpriseOnly: 'ENTERPRISE_ONLY',
  InsufficientBalance: 'INSUFFICIENT_BALANCE',
} as const;
export type ErrorReason = (typeof ErrorReason)[keyof typeof ErrorReason];

/** SPEC §8 messages, in Chinese, shared by server and web. */
export const Messages = {
  ok: '操作成功',
  sessionInvalid: '无效的会话，或者会话已过期，请重新登录。',
  sessionExpiredDialog: '登录状态已过期，您可以继续留在该页面，或者重新登录',
  notFound: '当前操作没有权限或资源不存在',
  resourceMissing: '资源不存在',
  network: '网络不稳定，请稍后重试',
  timeout: '系统接口请求超时',
  server500: '系统接口 500 异常',
  statusError: (code: number) => `系统接口 ${code} 异常`,
  internal: '服务器开小差了，请稍后重试',
  tooMany: '操作过于频繁，请稍后再试',
  forbidden: '没有权限执行该操作',
} as const;
