import { RECHARGE_MAX, RECHARGE_MIN } from '@suanli/contract/payment';
import { parseTypedYuan, wholeYuanToUnits } from '@suanli/domain/money';
import type { MessageKey } from '../../locales/i18n.ts';

/** The preset amounts of /recharge/index, in yuan. */
export const PRESET_YUAN = [50, 100, 200, 500, 1000, 5000] as const;

/** A yuan amount as typed -> units (see parseTypedYuan in the domain package). */
export const parseYuan = parseTypedYuan;

/** The message key for what is wrong with a typed amount, or null when it can be paid. */
export function validateYuan(input: string | number | null | undefined): MessageKey | null {
  if (input === null || input === undefined || String(input).trim() === '') return 'wallet.recharge.amountRequired';
  const parsed = parseYuan(input);
  if (!parsed) return 'wallet.recharge.amountInvalid';
  if (parsed.decimals > 2) return 'wallet.recharge.amountDecimals';
  if (parsed.units < RECHARGE_MIN) return 'wallet.recharge.amountMin';
  if (parsed.units > RECHARGE_MAX) return 'wallet.recharge.amountMax';
  return null;
}

export const yuanToUnits = wholeYuanToUnits;
