import type { SmsSender } from '../../src/adapters/sms/port.ts';

/** Records codes instead of sending them; `failNext` makes the next send fail like a gateway error. */
export function createFakeSms() {
  const sent: { phone: string; code: string }[] = [];
  let fail = false;
  const sender: SmsSender & { sent: typeof sent; lastCode(phone: string): string; failNext(): void } = {
    name: 'console',
    sent,
    async sendCode({ phone, code }) {
      if (fail) {
        fail = false;
        throw new Error('gateway down');
      }
      sent.push({ phone, code });
    },
    lastCode(phone: string) {
      const hit = [...sent].reverse().find((s) => s.phone === phone);
      if (!hit) throw new Error(`no code sent to ${phone}`);
      return hit.code;
    },
    failNext() {
      fail = true;
    },
  };
  return sender;
}
