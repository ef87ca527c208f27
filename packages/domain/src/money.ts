/**
 * The product's money unit and every conversion of it, in one place (server, web and contract
 * import it from here): integer units of 0.0001 yuan (DESIGN §4, SPEC §9), what the gateways
 * speak (Alipay's yuan strings with two decimals, "100.00"; WeChat Pay's integer fen) and what a
 * payer types ("99.9").
 *
 * Everything is integer or BigInt arithmetic: a float division such as `units / 10000` can round
 * a large amount to the wrong yuan, and a payment off by one fen is a payment that never matches.
 * Anything that is not a non-negative safe integer (or a well-formed yuan string) throws, because
 * it means a bug upstream, never an amount to round.
 */

/** Money travels as integer units of 0.0001 yuan: 1 yuan = 10000 units. */
export const MONEY_UNITS_PER_YUAN = 10_000;
/** 1 fen = 0.01 yuan = 100 units: the smallest amount either gateway can charge. */
export const UNITS_PER_FEN = 100;

const BIG_UNITS_PER_YUAN = BigInt(MONEY_UNITS_PER_YUAN);
const BIG_UNITS_PER_FEN = BigInt(UNITS_PER_FEN);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function assertAmount(value: number, what: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new RangeError(`${what} must be a safe integer, got ${String(value)}`);
  }
  if (value < 0) throw new RangeError(`${what} must not be negative, got ${value}`);
}

/** Units that a gateway can charge: a whole number of fen. Throws otherwise. */
export function assertPayableUnits(units: number): void {
  assertAmount(units, 'amount (units of 0.0001 yuan)');
  if (units % UNITS_PER_FEN !== 0) {
    throw new RangeError(`amount ${units} units is not a whole number of fen (a multiple of ${UNITS_PER_FEN} units): gateways charge whole fen`);
  }
}

/** 1000000 units → 10000 fen (WeChat Pay amount.total). */
export function unitsToFen(units: number): number {
  assertPayableUnits(units);
  return units / UNITS_PER_FEN; // exact: units is a multiple of 100 below 2^53
}

/** 10000 fen → 1000000 units. */
export function fenToUnits(fen: number): number {
  assertAmount(fen, 'amount (fen)');
  const units = BigInt(fen) * BIG_UNITS_PER_FEN;
  if (units > MAX_SAFE) throw new RangeError(`amount ${fen} fen is too large to hold in units`);
  return Number(units);
}

/** 1000000 units → "100.00" (Alipay total_amount). */
export function unitsToYuan(units: number): string {
  assertPayableUnits(units);
  const big = BigInt(units);
  const yuan = big / BIG_UNITS_PER_YUAN;
  const fen = (big % BIG_UNITS_PER_YUAN) / BIG_UNITS_PER_FEN;
  return `${yuan}.${fen.toString().padStart(2, '0')}`;
}

// Plain decimal yuan with at most two decimals: no sign, exponent, spaces or leading zeros, so
// "1e2", " 1.00", "-0.01", "01.00" and "1.001" are refused instead of guessed at.
const YUAN = /^(0|[1-9]\d*)(?:\.(\d{1,2}))?$/;

/** "100.00" → 1000000 units. Throws on anything that is not an exact, non-negative yuan amount. */
export function yuanToUnits(yuan: string): number {
  const m = typeof yuan === 'string' ? YUAN.exec(yuan) : null;
  if (!m) throw new RangeError(`not a yuan amount with at most two decimals: ${JSON.stringify(yuan)}`);
  const units = BigInt(m[1]!) * BIG_UNITS_PER_YUAN + BigInt((m[2] ?? '').padEnd(2, '0')) * BIG_UNITS_PER_FEN;
  if (units > MAX_SAFE) throw new RangeError(`yuan amount ${yuan} is too large to hold in units`);
  return Number(units);
}

/** Whole yuan (a preset amount, a limit) -> units. Throws past the safe range. */
export function wholeYuanToUnits(yuan: number): number {
  assertAmount(yuan, 'amount (yuan)');
  const units = BigInt(yuan) * BIG_UNITS_PER_YUAN;
  if (units > MAX_SAFE) throw new RangeError(`amount ${yuan} yuan is too large to hold in units`);
  return Number(units);
}

const TYPED = /^(\d+)(?:\.(\d*))?$/;

/**
 * A yuan amount as a person types it ('100', '99.9', '0.01', '1.') -> units, read from the digits
 * so no float rounding creeps in. null when it is not a plain non-negative decimal or too large;
 * `decimals` tells how many significant decimals were typed (the whole-fen rule is the caller's),
 * and units is NaN past four of them.
 */
export function parseTypedYuan(input: string | number | null | undefined): { units: number; decimals: number } | null {
  if (input === null || input === undefined) return null;
  const text = (typeof input === 'number' ? String(input) : input).trim();
  const m = TYPED.exec(text);
  if (!m) return null;
  const [, whole = '0', fraction = ''] = m;
  const digits = fraction.replace(/0+$/, '');
  if (digits.length > 4) return { units: Number.NaN, decimals: digits.length };
  const units = BigInt(whole) * BIG_UNITS_PER_YUAN + BigInt(digits.padEnd(4, '0') || '0');
  if (units > MAX_SAFE) return null;
  return { units: Number(units), decimals: digits.length };
}
