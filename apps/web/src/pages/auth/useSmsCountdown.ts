import { useCallback, useEffect, useState } from 'react';
import { AccountRules } from '@suanli/domain/account-rules';

/**
 * When each phone may get another code. Module-wide, because the server's limit is per phone
 * whatever the purpose (PRODUCT.md: one code a minute per phone): a code sent from the sign-up
 * form also holds back 忘记密码 and 验证码登录 for that phone, and closing a form doesn't reset it.
 */
const STORAGE_KEY = 'sms-resend-deadlines';
const deadlines = new Map<string, number>(readStored());

/** Also kept for the tab's session, so a reload doesn't offer a send the server would refuse. */
function readStored(): [string, number][] {
  try {
    const raw = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? '[]') as unknown;
    const now = Date.now();
    return Array.isArray(raw) ? raw.filter((e): e is [string, number] => Array.isArray(e) && typeof e[0] === 'string' && typeof e[1] === 'number' && e[1] > now) : [];
  } catch {
    return [];
  }
}

function store(): void {
  try {
    const now = Date.now();
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify([...deadlines].filter(([, until]) => until > now)));
  } catch {
    /* storage disabled: the countdown lasts for this page only */
  }
}

/** The resend countdown for `phone`: whole seconds left, 0 when a code may be sent. */
export function useSmsCountdown(phone: string) {
  const [, setTick] = useState(0);
  const remaining = Math.max(0, Math.ceil(((deadlines.get(phone) ?? 0) - Date.now()) / 1000));
  const running = remaining > 0;

  useEffect(() => {
    if (!running) return;
    const id = window.setInterval(() => setTick((n) => n + 1), 250);
    return () => window.clearInterval(id);
  }, [running]);

  const start = useCallback((sentTo: string, seconds: number = AccountRules.smsResendSeconds) => {
    deadlines.set(sentTo, Date.now() + seconds * 1000);
    store();
    setTick((n) => n + 1);
  }, []);

  return { remaining, start };
}
