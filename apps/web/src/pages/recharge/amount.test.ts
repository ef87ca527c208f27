import { describe, expect, it } from 'vitest';
import { parseYuan, validateYuan } from './amount.ts';

describe('parseYuan', () => {
  it('reads yuan into 0.0001-yuan units without float error', () => {
    expect(parseYuan('100')).toEqual({ units: 1_000_000, decimals: 0 });
    expect(parseYuan('0.29')).toEqual({ units: 2_900, decimals: 2 });
    expect(parseYuan('1.10')).toEqual({ units: 11_000, decimals: 1 });
    expect(parseYuan(99.99)).toEqual({ units: 999_900, decimals: 2 });
    expect(parseYuan(' 5. ')).toEqual({ units: 50_000, decimals: 0 });
  });
  it('refuses what is not a plain decimal', () => {
    expect(parseYuan('-1')).toBeNull();
    expect(parseYuan('1e3')).toBeNull();
    expect(parseYuan('abc')).toBeNull();
    expect(parseYuan('')).toBeNull();
    expect(parseYuan(null)).toBeNull();
  });
});

describe('validateYuan', () => {
  it('accepts 1 to 100,000 yuan in whole fen', () => {
    expect(validateYuan('1')).toBeNull();
    expect(validateYuan('100000')).toBeNull();
    expect(validateYuan('123.45')).toBeNull();
  });
  it('names what is wrong', () => {
    expect(validateYuan('')).toBe('wallet.recharge.amountRequired');
    expect(validateYuan(undefined)).toBe('wallet.recharge.amountRequired');
    expect(validateYuan('x')).toBe('wallet.recharge.amountInvalid');
    expect(validateYuan('0.99')).toBe('wallet.recharge.amountMin');
    expect(validateYuan('100000.01')).toBe('wallet.recharge.amountMax');
    expect(validateYuan('1.001')).toBe('wallet.recharge.amountDecimals');
    expect(validateYuan('1.00001')).toBe('wallet.recharge.amountDecimals');
  });
});
