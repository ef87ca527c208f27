import type { SmsSender } from './port.ts';

export type InboxEntry = { phone: string; code: string; sentAt: string };

/**
 * Development adapter: prints `[sms] <phone> <code>` on the server log and keeps the last codes
 * for GET /dev/inbox. Only registered when SMS_PROVIDER=console.
 */
export function createConsoleSms(log: (line: string) => void = (l) => console.log(l)): SmsSender & { inbox(): InboxEntry[] } {
  const recent: InboxEntry[] = [];
  return {
    name: 'console',
    async sendCode({ phone, code }) {
      log(`[sms] ${phone} ${code}`);
      recent.unshift({ phone, code, sentAt: new Date().toISOString() });
      recent.length = Math.min(recent.length, 100);
    },
    inbox: () => [...recent],
  };
}
