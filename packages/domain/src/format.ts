import { MONEY_UNITS_PER_YUAN } from './money.ts';

/**
 * Display formatting of SPEC §9: money, dates, file sizes and durations. Pure functions shared by
 * the web (tables, cards) and the server (exports, notifications), so both show the same text.
 */

/**
 * SPEC §9: raw units ÷ 10000 with 4 decimals, the last two dropped when both are zero, yuan sign
 * in front (after the minus sign): 0 → '¥0.00', 12345 → '¥1.2345', 12300 → '¥1.23',
 * 12340 → '¥1.2340', -5000 → '-¥0.50'. No thousands separators (the spec shows none).
 *
 * BigInt arithmetic, so no amount is ever shown off by a float rounding error; a fractional or
 * unsafe number means a bug upstream (money is never fractional units), so it throws rather than
 * print a plausible wrong figure.
 */
export function formatMoney(units: number | bigint): string {
  if (typeof units === 'number' && !Number.isSafeInteger(units)) {
    throw new RangeError(`formatMoney expects integer units of 0.0001 yuan, got ${units}`);
  }
  const value = BigInt(units);
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const yuan = abs / BigInt(MONEY_UNITS_PER_YUAN);
  const fraction = (abs % BigInt(MONEY_UNITS_PER_YUAN)).toString().padStart(4, '0');
  const decimals = fraction.endsWith('00') ? fraction.slice(0, 2) : fraction;
  return `${negative ? '-' : ''}¥${yuan}.${decimals}`;
}

export const DEFAULT_DATE_PATTERN = 'YYYY-MM-DD HH:mm:ss';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

function toDate(value: Date | string | number): Date {
  if (value instanceof Date) return value;
  if (typeof value === 'string') {
    // `new Date('2024-05-01')` is UTC midnight, which shows as the previous evening west of UTC;
    // a bare date means that calendar day wherever the viewer is.
    const m = DATE_ONLY.exec(value.trim());
    if (m) return new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  }
  return new Date(value);
}

/**
 * SPEC §9 date display in the viewer's local time zone. Tokens: YYYY, MM, DD, HH (24 h), mm, ss;
 * any other text is kept as is. Numbers are epoch milliseconds. A missing or unparsable value gives
 * '' so a table cell stays empty instead of reading "NaN-aN-aN".
 */
export function formatDateTime(value: Date | string | number | null | undefined, pattern: string = DEFAULT_DATE_PATTERN): string {
  if (value === null || value === undefined || value === '') return '';
  const date = toDate(value);
  if (Number.isNaN(date.getTime())) return '';
  const parts: Record<string, string> = {
    YYYY: pad(date.getFullYear(), 4),
    MM: pad(date.getMonth() + 1),
    DD: pad(date.getDate()),
    HH: pad(date.getHours()),
    mm: pad(date.getMinutes()),
    ss: pad(date.getSeconds()),
  };
  return pattern.replace(/YYYY|MM|DD|HH|mm|ss/g, (token) => parts[token] ?? token);
}

const SIZE_UNITS = ['B', 'KB', 'MB', 'GB'] as const;

/**
 * SPEC §9 file sizes, 1024-based, largest unit GB. Bytes are whole; larger units keep at most two
 * decimals with trailing zeros dropped (1536 → '1.5 KB', 1024 → '1 KB', 1100 → '1.07 KB'), so
 * round sizes read cleanly. A value that rounds up to 1024 of a unit moves to the next unit
 * (1048575 → '1 MB', not '1024 KB').
 */
export function formatFileSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) throw new RangeError(`formatFileSize expects a non-negative size, got ${bytes}`);
  let unit = 0;
  let value = bytes;
  while (value >= 1024 && unit < SIZE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${Math.round(value)} B`;
  let rounded = Math.round(value * 100) / 100;
  if (rounded >= 1024 && unit < SIZE_UNITS.length - 1) {
    rounded = Math.round((value / 1024) * 100) / 100;
    unit += 1;
  }
  return `${Number(rounded.toFixed(2))} ${SIZE_UNITS[unit]}`;
}

export type DurationMode = 'human' | 'mmss';

/**
 * SPEC §9 durations, from whole seconds (fractions are dropped).
 *
 * - 'human' (default): the largest unit and the next one when it isn't zero, in Chinese units:
 *   45 → '45秒', 90 → '1分钟30秒', 120 → '2分钟', 3700 → '1小时1分钟', 90000 → '1天1小时'.
 *   Two units are enough to read at a glance; seconds under an hour-long span are noise.
 * - 'mmss': a clock, '01:30'; from one hour on it becomes 'hh:mm:ss' ('01:01:40') rather than
 *   letting minutes grow past 59, and hours keep growing past 99 ('100:00:00').
 */
export function formatDuration(seconds: number, mode: DurationMode = 'human'): string {
  if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError(`formatDuration expects non-negative seconds, got ${seconds}`);
  const total = Math.floor(seconds);
  const days = Math.floor(total / 86_400);
  const hours = Math.floor((total % 86_400) / 3_600);
  const minutes = Math.floor((total % 3_600) / 60);
  const secs = total % 60;

  if (mode === 'mmss') {
    const allHours = Math.floor(total / 3_600);
    return allHours > 0 ? `${pad(allHours)}:${pad(minutes)}:${pad(secs)}` : `${pad(minutes)}:${pad(secs)}`;
  }

  const pair = (big: number, bigUnit: string, small: number, smallUnit: string) => `${big}${bigUnit}${small ? `${small}${smallUnit}` : ''}`;
  if (days > 0) return pair(days, '天', hours, '小时');
  if (hours > 0) return pair(hours, '小时', minutes, '分钟');
  if (minutes > 0) return pair(minutes, '分钟', secs, '秒');
  return `${secs}秒`;
}
