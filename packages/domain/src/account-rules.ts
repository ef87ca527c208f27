/** Mainland China mobile number: 11 digits starting with 1[3-9]. */
export const PHONE_RE = /^1[3-9]\d{9}$/;
/** PRODUCT.md: 8–64 characters, letters and digits, containing both. */
export const PASSWORD_RE = /^(?=.*[A-Za-z])(?=.*\d)[A-Za-z\d!@#$%^&*()_+\-=.,?~]{8,64}$/;

/** PRODUCT.md "Accounts" numbers, shared by the server's rules and the web's countdowns. */
export const AccountRules = {
  smsCodeLength: 6,
  smsCodeTtlSeconds: 5 * 60,
  smsResendSeconds: 60,
  smsDailyMax: 10,
  smsMaxAttempts: 5,
  loginCaptchaAfterFailures: 3,
  loginLockAfterFailures: 10,
  loginLockMinutes: 15,
  /** Wrong old passwords (password or phone change) before those checks lock. */
  passwordCheckLockAfterFailures: 5,
  passwordCheckLockMinutes: 15,
  sessionTtlDays: 7,
  /** How stale a session's last-seen may get before a request slides its expiry forward. */
  sessionTouchSeconds: 60,
  captchaTtlSeconds: 120,
} as const;

/** 13812345678 -> 138****5678 */
export function maskPhone(phone: string): string {
  return phone.length === 11 ? `${phone.slice(0, 3)}****${phone.slice(7)}` : phone;
}
