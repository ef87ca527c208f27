import { describe, expect, it } from 'vitest';
import { diskHourly, paygHourly, prepaidDurationMs, quotePayg, quotePrepaid, type MachinePricing } from './pricing.ts';

const m: MachinePricing = {
  gpuTypeName: 'RTX 4090',
  prices: { hour: 36_000, day: 800_000, week: 5_000_000, month: 18_000_000, year: 180_000_000 },
  dataDiskFreeGb: 50,
  dataDiskPricePerGbDay: 100,
};

describe('pay-as-you-go price', () => {
  it('is GPU price × count when the data disk is within the free size', () => {
    expect(paygHourly(m, 1, 50)).toBe(36_000);
    expect(paygHourly(m, 3, 20)).toBe(108_000);
  });

  it('adds the extra disk per day turned into per hour, rounded up to a whole unit', () => {
    // 10 GB × 100 / 24 = 41.67 → 42
    expect(diskHourly(m, 60)).toBe(42);
    expect(paygHourly(m, 2, 60)).toBe(72_042);
    // 24 GB × 100 / 24 = 100 exactly: no rounding
    expect(diskHourly(m, 74)).toBe(100);
    expect(diskHourly({ ...m, dataDiskPricePerGbDay: 1 }, 51)).toBe(1); // 1/24 of a unit still costs one unit
  });

  it('quotes lines in Chinese, nothing to pay now and one hour as the required balance', () => {
    const q = quotePayg(m, 2, 60);
    expect(q.total).toBe(0);
    expect(q.hourly).toBe(72_042);
    expect(q.requiredBalance).toBe(72_042);
    expect(q.lines).toEqual([
      { label: 'RTX 4090 × 2，按量计费（每小时）', amount: 72_000 },
      { label: '数据盘扩容 10 GB（每小时）', amount: 42 },
    ]);
    expect(quotePayg(m, 1, 50).lines).toHaveLength(1);
  });
});

describe('prepaid price', () => {
  it('is period price × GPUs × quantity plus the extra disk per day × days, exactly', () => {
    const q = quotePrepaid(m, 2, 70, 'month', 3);
    expect(q.lines[0]).toEqual({ label: 'RTX 4090 × 2，按月 × 3（3 个月）', amount: 108_000_000 });
    expect(q.lines[1]).toEqual({ label: '数据盘扩容 20 GB × 90 天', amount: 180_000 });
    expect(q.total).toBe(108_180_000);
    expect(q.hourly).toBe(0);
    expect(quotePrepaid(m, 1, 50, 'week', 1).total).toBe(5_000_000);
    expect(quotePrepaid(m, 1, 51, 'year', 1).total).toBe(180_000_000 + 36_500);
  });

  it('runs for the period’s days', () => {
    expect(prepaidDurationMs('day', 2)).toBe(2 * 86_400_000);
    expect(prepaidDurationMs('week', 1)).toBe(7 * 86_400_000);
    expect(prepaidDurationMs('month', 1)).toBe(30 * 86_400_000);
    expect(prepaidDurationMs('year', 1)).toBe(365 * 86_400_000);
  });

  it('refuses prices that are not integer units', () => {
    expect(() => quotePrepaid({ ...m, prices: { ...m.prices, day: 1.5 } }, 1, 50, 'day', 1)).toThrow(RangeError);
    expect(() => paygHourly({ ...m, prices: { ...m.prices, hour: -1 } }, 1, 50)).toThrow(RangeError);
  });
});
