import type { SmsSender } from './port.ts';

export type InboxEntry = { tenantId: number; phone: string; code: string; sentAt: string };

/**
 * Development adapter: prints `[sms] <phone> <code>` on the server log and keeps the last codes
 * for GET /dev/inbox (loopback clients only, each tenant sees its own). Only used when SMS_PROVIDER=console.
 */
export function createConsoleSms(log: (line: string) => void = (l) => console.log(l)): SmsSender & { inbox(tenantId?: number): InboxEntry[] } {
  const recent: InboxEntry[] = [];
  return {
    name: 'console',
    async sendCode({ tenantId, phone, code }) {
      log(`[sms] ${phone} ${code}`);
      recent.unshift({ tenantId, phone, code, sentAt: new Date().toISOString() });
      recent.length = Math.min(recent.length, 100);
    },
    inbox: (tenantId) => recent.filter((e) => tenantId === undefined || e.tenantId === tenantId),
  };
}
