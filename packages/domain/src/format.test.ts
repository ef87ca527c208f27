import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatDateTime, formatDuration, formatFileSize, formatMoney } from './format.ts';

describe('formatMoney (SPEC §9: units of 0.0001 yuan)', () => {
  it.each([
    [0, '¥0.00'],
    [1_000_000, '¥100.00'],
    [12_345, '¥1.2345'],
    [12_300, '¥1.23'],
    [12_340, '¥1.2340'],
    [12_305, '¥1.2305'],
    [1, '¥0.0001'],
    [100, '¥0.01'],
    [10, '¥0.0010'],
    [9_999, '¥0.9999'],
    [10_000, '¥1.00'],
    [-5_000, '-¥0.50'],
    [-1, '-¥0.0001'],
    [-12_345_678, '-¥1234.5678'],
  ])('%d units → %s', (units, expected) => {
    expect(formatMoney(units)).toBe(expected);
  });

  it('keeps every digit of amounts where floating point division would round', () => {
    // 2^53 - 1 units: dividing as a float would print ...740991.0000 or similar
    expect(formatMoney(Number.MAX_SAFE_INTEGER)).toBe('¥900719925474.0991');
    expect(formatMoney(-Number.MAX_SAFE_INTEGER)).toBe('-¥900719925474.0991');
    expect(formatMoney(123_456_789_012_345_678n)).toBe('¥12345678901234.5678');
    // 0.1 + 0.2 style trap: 3 units must stay exactly 0.0003
    expect(formatMoney(3)).toBe('¥0.0003');
  });

  it('treats negative zero as zero', () => {
    expect(formatMoney(-0)).toBe('¥0.00');
  });

  it('refuses fractional, unsafe or non-finite input instead of printing a wrong figure', () => {
    expect(() => formatMoney(1.5)).toThrow(RangeError);
    expect(() => formatMoney(Number.NaN)).toThrow(RangeError);
    expect(() => formatMoney(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => formatMoney(2 ** 60)).toThrow(RangeError);
  });
});

describe('formatDateTime', () => {
  // Node re-reads TZ when it changes, so one process can check several zones.
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('defaults to YYYY-MM-DD HH:mm:ss with zero padding', () => {
    expect(formatDateTime(new Date(2024, 0, 2, 3, 4, 5))).toBe('2024-01-02 03:04:05');
    expect(formatDateTime(new Date(2024, 11, 31, 23, 59, 59))).toBe('2024-12-31 23:59:59');
  });

  it('accepts epoch milliseconds and ISO strings, shown in the local time zone', () => {
    vi.stubEnv('TZ', 'Asia/Shanghai');
    expect(formatDateTime('2024-03-10T12:00:00Z')).toBe('2024-03-10 20:00:00');
    expect(formatDateTime('2024-03-10T23:30:00+08:00')).toBe('2024-03-10 23:30:00');
    expect(formatDateTime(Date.UTC(2024, 2, 10, 16, 0, 0))).toBe('2024-03-11 00:00:00');
    vi.stubEnv('TZ', 'America/New_York');
    expect(formatDateTime('2024-03-10T12:00:00Z')).toBe('2024-03-10 08:00:00');
  });

  it('reads a bare date as that calendar day in any time zone', () => {
    vi.stubEnv('TZ', 'America/Los_Angeles');
    expect(formatDateTime('2024-05-01')).toBe('2024-05-01 00:00:00');
    vi.stubEnv('TZ', 'Asia/Shanghai');
    expect(formatDateTime('2024-05-01', 'YYYY/MM/DD')).toBe('2024/05/01');
  });

  it('applies custom patterns and leaves other text alone', () => {
    const d = new Date(2025, 6, 8, 9, 5, 7);
    expect(formatDateTime(d, 'YYYY-MM-DD')).toBe('2025-07-08');
    expect(formatDateTime(d, 'HH:mm')).toBe('09:05');
    expect(formatDateTime(d, 'YYYY年MM月DD日 HH时mm分ss秒')).toBe('2025年07月08日 09时05分07秒');
    expect(formatDateTime(d, 'MM/DD/YYYY, ss')).toBe('07/08/2025, 07');
  });

  it('gives an empty string for missing or unparsable values', () => {
    expect(formatDateTime(null)).toBe('');
    expect(formatDateTime(undefined)).toBe('');
    expect(formatDateTime('')).toBe('');
    expect(formatDateTime('not a date')).toBe('');
    expect(formatDateTime(Number.NaN)).toBe('');
  });
});

describe('formatFileSize (1024 base, up to two decimals, trailing zeros dropped)', () => {
  it.each([
    [0, '0 B'],
    [1, '1 B'],
    [1023, '1023 B'],
    [1024, '1 KB'],
    [1536, '1.5 KB'],
    [1100, '1.07 KB'],
    [10 * 1024 + 512, '10.5 KB'],
    [1024 ** 2, '1 MB'],
    [1.25 * 1024 ** 2, '1.25 MB'],
    [1024 ** 3, '1 GB'],
    [3.5 * 1024 ** 3, '3.5 GB'],
    [2048 * 1024 ** 3, '2048 GB'],
  ])('%d bytes → %s', (bytes, expected) => {
    expect(formatFileSize(bytes)).toBe(expected);
  });

  it('moves to the next unit when rounding reaches 1024', () => {
    expect(formatFileSize(1024 ** 2 - 1)).toBe('1 MB');
    expect(formatFileSize(1024 ** 3 - 1)).toBe('1 GB');
  });

  it('refuses negative and non-finite sizes', () => {
    expect(() => formatFileSize(-1)).toThrow(RangeError);
    expect(() => formatFileSize(Number.NaN)).toThrow(RangeError);
    expect(() => formatFileSize(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0秒'],
    [45, '45秒'],
    [59, '59秒'],
    [60, '1分钟'],
    [90, '1分钟30秒'],
    [3599, '59分钟59秒'],
    [3600, '1小时'],
    [3700, '1小时1分钟'],
    [3659, '1小时'],
    [86_399, '23小时59分钟'],
    [86_400, '1天'],
    [90_000, '1天1小时'],
    [90_061, '1天1小时'],
    [40 * 86_400, '40天'],
  ])('human: %d s → %s', (seconds, expected) => {
    expect(formatDuration(seconds)).toBe(expected);
    expect(formatDuration(seconds, 'human')).toBe(expected);
  });

  it.each([
    [0, '00:00'],
    [5, '00:05'],
    [90, '01:30'],
    [3599, '59:59'],
    [3600, '01:00:00'],
    [3700, '01:01:40'],
    [90_000, '25:00:00'],
    [360_000, '100:00:00'],
  ])('mmss: %d s → %s', (seconds, expected) => {
    expect(formatDuration(seconds, 'mmss')).toBe(expected);
  });

  it('drops fractions of a second', () => {
    expect(formatDuration(90.9)).toBe('1分钟30秒');
    expect(formatDuration(59.99, 'mmss')).toBe('00:59');
  });

  it('refuses negative and non-finite durations', () => {
    expect(() => formatDuration(-1)).toThrow(RangeError);
    expect(() => formatDuration(Number.NaN, 'mmss')).toThrow(RangeError);
  });
});
