import { RECHARGE_MAX, RECHARGE_MIN } from '@suanli/contract/payment';
import { MONEY_UNITS_PER_YUAN } from '@suanli/domain/format';
import type { MessageKey } from '../../locales/i18n.ts';

/** The preset amounts of /recharge/index, in yuan. */
export const PRESET_YUAN = [50, 100, 200, 500, 1000, 5000] as const;

const DECIMAL = /^(\d+)(?:\.(\d*))?$/;

/**
 * A yuan amount as typed ('100', '99.9', '0.01') -> integer units of 0.0001 yuan, read from the
 * digits so no float rounding creeps in. null when it is not a plain non-negative decimal.
 * `fraction` tells how many decimals were typed, for the whole-fen rule.
 */
export function parseYuan(input: string | number | null | undefined): { units: number; decimals: number } | null {
  if (input === null || input === undefined) return null;
  const text = (typeof input === 'number' ? String(input) : input).trim();
  const m = DECIMAL.exec(text);
  if (!m) return null;
  const [, whole = '0', fraction = ''] = m;
  const digits = fraction.replace(/0+$/, '');
  if (digits.length > 4) return { units: NaN, decimals: digits.length };
  const units = Number(whole) * MONEY_UNITS_PER_YUAN + Number(digits.padEnd(4, '0') || '0');
  if (!Number.isSafeInteger(units)) return null;
  return { units, decimals: digits.length };
}

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

export const yuanToUnits = (yuan: number) => yuan * MONEY_UNITS_PER_YUAN;
