import { paymentMethods } from '@suanli/contract/payment';
import { t } from '../../../locales/i18n.ts';
import zhWallet from '../../../locales/zh-CN/wallet.ts';

type Method = (typeof paymentMethods)[number];
const isMethod = (m: string): m is Method => (paymentMethods as readonly string[]).includes(m);
/** Memos written before the server stored codes: "<Chinese method name> 充值". */
const legacy = new Map(Object.entries(zhWallet.methods).map(([code, name]) => [`${name} 充值`, code]));

/**
 * #26: a ledger memo in the interface language. The server stores the memos it writes as codes
 * (`recharge:<method>`); older rows hold the Chinese text, mapped back to the same code. Anything
 * else (an operator's note) is shown as written.
 */
export function memoText(memo: string): string {
  const method = /^recharge:(\w+)$/.exec(memo)?.[1] ?? legacy.get(memo);
  if (method && isMethod(method)) return t('wallet.memo.recharge', { method: t(`wallet.methods.${method}`) });
  return memo;
}
