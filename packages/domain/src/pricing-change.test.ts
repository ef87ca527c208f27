import { describe, expect, it } from 'vitest';
import { ceilDiv, DAY_MS, diskChangeDifference, durationText, floorDiv, gpuChangeDifference, minDataDiskGb, prepaidRefund, remainingMs } from './pricing-change.ts';

const t0 = new Date('2026-11-01T00:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

describe('integer division', () => {
  it('floors and ceils towards the right infinity, also for negatives', () => {
    expect(floorDiv(7n, 2n)).toBe(3n);
    expect(floorDiv(-7n, 2n)).toBe(-4n);
    expect(floorDiv(-6n, 2n)).toBe(-3n);
    expect(ceilDiv(7n, 2n)).toBe(4n);
    expect(ceilDiv(-7n, 2n)).toBe(-3n);
    expect(ceilDiv(6n, 2n)).toBe(3n);
    expect(() => floorDiv(1n, 0n)).toThrow(RangeError);
  });
});

describe('prepaid refund', () => {
  it('refunds the unused part of a bill pro rata to the millisecond, rounded down', () => {
    // ¥1,800 for 30 days; 10 days and 1 second used.
    const bill = { amount: 18_000_000, periodStart: t0, periodEnd: at(30 * DAY_MS) };
    const now = at(10 * DAY_MS + 1000);
    const r = prepaidRefund([bill], now);
    // 18,000,000 × (20 d − 1 s) / 30 d = 11,999,993.05… → 11,999,993
    expect(r.total).toBe(11_999_993);
    expect(r.perBill).toEqual([11_999_993]);
  });

  it('refunds a bill that starts later in full, and nothing of an ended one', () => {
    const now = at(DAY_MS);
    const r = prepaidRefund(
      [
        { amount: 800_000, periodStart: t0, periodEnd: at(DAY_MS) },
        { amount: 800_000, periodStart: at(2 * DAY_MS), periodEnd: at(3 * DAY_MS) },
        { amount: 300, periodStart: at(DAY_MS / 2), periodEnd: at(2 * DAY_MS) },
      ],
      now,
    );
    // the third: 300 × 1 d / 1.5 d = 200
    expect(r.perBill).toEqual([0, 800_000, 200]);
    expect(r.total).toBe(800_200);
  });

  it('floors a negative (downgrade) bill towards −∞', () => {
    const r = prepaidRefund([{ amount: -10, periodStart: t0, periodEnd: at(3) }], at(1));
    // −10 × 2 / 3 = −6.67 → −7
    expect(r.total).toBe(-7);
  });

  it('knows the time left', () => {
    expect(remainingMs(at(5000), at(1000))).toBe(4000);
    expect(remainingMs(at(1000), at(5000))).toBe(0);
    expect(remainingMs(null, t0)).toBe(0);
  });
});

describe('differences for the time left', () => {
  it('charges an upgrade rounded up and refunds a downgrade rounded down', () => {
    // ¥1,800/month per GPU, 10 days left: 18,000,000 × 10 / 30 = 6,000,000 per GPU.
    expect(gpuChangeDifference(18_000_000, 30, 1, 3, 10 * DAY_MS)).toBe(12_000_000);
    expect(gpuChangeDifference(18_000_000, 30, 3, 1, 10 * DAY_MS)).toBe(-12_000_000);
    // 1 ms left: 18,000,000 / 2,592,000,000 = 0.0069… → charge 1, refund 0
    expect(gpuChangeDifference(18_000_000, 30, 1, 2, 1)).toBe(1);
    expect(gpuChangeDifference(18_000_000, 30, 2, 1, 1)).toBe(0);
    expect(gpuChangeDifference(18_000_000, 30, 2, 2, DAY_MS)).toBe(0);
    expect(gpuChangeDifference(18_000_000, 30, 1, 2, 0)).toBe(0);
  });

  it('prices extra disk per GB per day', () => {
    // 20 GB more at ¥0.01/GB/day for 1.5 days = 3,000 units
    expect(diskChangeDifference(100, 0, 20, 1.5 * DAY_MS)).toBe(3_000);
    expect(diskChangeDifference(100, 20, 0, 1.5 * DAY_MS)).toBe(-3_000);
    // 1 GB for 1 s: 100 / 86,400 → 1 up, 0 down
    expect(diskChangeDifference(100, 0, 1, 1000)).toBe(1);
    expect(diskChangeDifference(100, 1, 0, 1000)).toBe(0);
  });

  it('keeps exact integers where floats would not', () => {
    // 2^53-ish products stay exact in BigInt.
    expect(gpuChangeDifference(180_000_000, 365, 0, 8, 365 * DAY_MS)).toBe(1_440_000_000);
  });
});

describe('smallest data disk', () => {
  it('is the free size or what the disk holds rounded up plus one GB', () => {
    expect(minDataDiskGb(50, 0)).toBe(50);
    expect(minDataDiskGb(50, 60 * 1024 ** 3)).toBe(61);
    expect(minDataDiskGb(50, 60 * 1024 ** 3 + 1)).toBe(62);
  });
});

describe('duration text', () => {
  it('reads in days, hours and minutes', () => {
    expect(durationText(DAY_MS + 3 * 3_600_000 + 4 * 60_000)).toBe('1 天 3 小时 4 分');
    expect(durationText(30_000)).toBe('0 分');
    expect(durationText(2 * DAY_MS)).toBe('2 天');
  });
});
