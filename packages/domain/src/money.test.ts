import { describe, expect, it } from 'vitest';
import { assertPayableUnits, fenToUnits, unitsToFen, unitsToYuan, yuanToUnits } from './money.ts';

describe('gateway amount conversions', () => {
  it('turns units into Alipay yuan strings with exactly two decimals', () => {
    expect(unitsToYuan(1_000_000)).toBe('100.00');
    expect(unitsToYuan(10_000)).toBe('1.00');
    expect(unitsToYuan(100)).toBe('0.01');
    expect(unitsToYuan(12_300)).toBe('1.23');
    expect(unitsToYuan(0)).toBe('0.00');
    expect(unitsToYuan(1_000_000_000)).toBe('100000.00'); // the recharge ceiling
    // The largest payable safe amount keeps every digit (a float division would not).
    expect(unitsToYuan(9_007_199_254_740_900)).toBe('900719925474.09');
  });

  it('reads Alipay yuan strings back exactly', () => {
    expect(yuanToUnits('100.00')).toBe(1_000_000);
    expect(yuanToUnits('0.01')).toBe(100);
    expect(yuanToUnits('0.1')).toBe(1_000);
    expect(yuanToUnits('12')).toBe(120_000);
    expect(yuanToUnits('100000.00')).toBe(1_000_000_000);
    // Number(s) * 10000 gives 5699.999999999999, 199899.99999999997 and 700.0000000000001 here:
    // the parse must not go through a float.
    expect(yuanToUnits('0.57')).toBe(5_700);
    expect(yuanToUnits('19.99')).toBe(199_900);
    expect(yuanToUnits('0.07')).toBe(700);
    expect(yuanToUnits('900719925474.09')).toBe(9_007_199_254_740_900);
  });

  it.each(['', ' 1.00', '1.00 ', '-1.00', '+1.00', '1.001', '1.', '.5', '01.00', '1e2', '1,00', '0x10', 'NaN', 'Infinity', '１.００', '900719925474.10'])(
    'refuses the malformed or out-of-range yuan string %j',
    (s) => {
      expect(() => yuanToUnits(s)).toThrow(RangeError);
    },
  );

  it('converts between units and WeChat fen', () => {
    expect(unitsToFen(1_000_000)).toBe(10_000);
    expect(unitsToFen(100)).toBe(1);
    expect(unitsToFen(0)).toBe(0);
    expect(fenToUnits(10_000)).toBe(1_000_000);
    expect(fenToUnits(1)).toBe(100);
    expect(fenToUnits(0)).toBe(0);
  });

  it('refuses amounts that are not whole fen, since no gateway can charge them', () => {
    expect(() => unitsToFen(1_000_050)).toThrow(/whole number of fen/);
    expect(() => unitsToYuan(12_345)).toThrow(/whole number of fen/);
    expect(() => assertPayableUnits(1)).toThrow(RangeError);
    expect(() => assertPayableUnits(100)).not.toThrow();
  });

  it.each([-100, 1.5, 100.000001, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 1, 2 ** 60])('refuses %s units', (n) => {
    expect(() => unitsToFen(n)).toThrow(RangeError);
    expect(() => unitsToYuan(n)).toThrow(RangeError);
  });

  it.each([-1, 0.5, Number.NaN, Number.MAX_SAFE_INTEGER])('refuses %s fen', (n) => {
    // MAX_SAFE_INTEGER fen is a valid fen count but overflows units: refused, not rounded.
    expect(() => fenToUnits(n)).toThrow(RangeError);
  });

  it('refuses values that are not numbers at all', () => {
    expect(() => unitsToFen('100' as unknown as number)).toThrow(RangeError);
    expect(() => yuanToUnits(100 as unknown as string)).toThrow(RangeError);
  });
});
