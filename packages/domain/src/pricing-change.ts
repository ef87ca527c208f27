/**
 * Issue #10: the pro-rata arithmetic of changing an instance (docs/instance-operations.md), in
 * integer units of 0.0001 yuan with BigInt inside — never floats.
 *
 * - A charge for the time left is rounded UP (`ceil`), a refund DOWN (`floor`): the platform never
 *   gives back a fraction of a unit it did not take, nor charges one less than it should.
 * - Prepaid → pay-as-you-go refunds, per prepaid bill not yet refunded with `periodEnd > now`,
 *   floor(amount × (periodEnd − max(now, periodStart)) / (periodEnd − periodStart)). A bill may be
 *   negative (a downgrade's refund); its share is then floored too (towards −∞).
 */

export const DAY_MS = 86_400_000;

function safe(n: bigint, what: string): number {
  if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < BigInt(Number.MIN_SAFE_INTEGER)) throw new RangeError(`${what} is out of range`);
  return Number(n);
}

function int(n: number, what: string): bigint {
  if (!Number.isSafeInteger(n)) throw new RangeError(`${what} must be a safe integer, got ${n}`);
  return BigInt(n);
}

/** floor(a / b) for b > 0, also for negative a (BigInt division truncates towards zero). */
export function floorDiv(a: bigint, b: bigint): bigint {
  if (b <= 0n) throw new RangeError('divisor must be positive');
  const q = a / b;
  return a % b !== 0n && a < 0n ? q - 1n : q;
}

/** ceil(a / b) for b > 0. */
export function ceilDiv(a: bigint, b: bigint): bigint {
  return -floorDiv(-a, b);
}

/** Milliseconds of prepaid time left at `now` (0 when expired or none). */
export function remainingMs(expiresAt: Date | null, now: Date): number {
  return expiresAt ? Math.max(0, expiresAt.getTime() - now.getTime()) : 0;
}

export type PrepaidBill = { amount: number; periodStart: Date; periodEnd: Date };

/**
 * The unused part of each bill at `now` (0 for a bill whose period has ended), and their sum: what
 * turning prepaid into pay-as-you-go refunds.
 */
export function prepaidRefund(bills: readonly PrepaidBill[], now: Date): { total: number; perBill: number[] } {
  const t = now.getTime();
  const perBill = bills.map((b) => {
    const start = b.periodStart.getTime();
    const end = b.periodEnd.getTime();
    if (end <= t || end <= start) return 0;
    const unused = BigInt(end - Math.max(t, start));
    return safe(floorDiv(int(b.amount, 'bill amount') * unused, BigInt(end - start)), 'refund');
  });
  return { total: perBill.reduce((s, n) => s + n, 0), perBill };
}

/**
 * The signed difference for the time left of `units × price` over `unitMs`: a positive change
 * (more GPUs, more disk) costs ceil(Δ × price × remainingMs / unitMs); a negative one refunds
 * floor(|Δ| × price × remainingMs / unitMs), returned negative. 0 when nothing changes or no time
 * is left.
 */
export function differenceForTimeLeft(delta: number, price: number, remaining: number, unitMs: number): number {
  if (delta === 0 || remaining <= 0) return 0;
  if (price < 0 || unitMs <= 0) throw new RangeError('price must be ≥ 0 and the unit positive');
  const whole = int(Math.abs(delta), 'delta') * int(price, 'price') * int(remaining, 'remaining');
  const unit = int(unitMs, 'unit');
  return delta > 0 ? safe(ceilDiv(whole, unit), 'charge') : safe(-floorDiv(whole, unit), 'refund');
}

/** GPU count on a prepaid instance: perGpu = price[period] × remainingMs / periodMs, × Δ (ceil up, floor down). */
export function gpuChangeDifference(pricePerPeriod: number, periodDays: number, fromCount: number, toCount: number, remaining: number): number {
  return differenceForTimeLeft(toCount - fromCount, pricePerPeriod, remaining, periodDays * DAY_MS);
}

/** Data disk on a prepaid instance: ΔextraGb × perGbDay × remainingMs / 86,400,000 (ceil up, floor down). */
export function diskChangeDifference(perGbDay: number, fromExtraGb: number, toExtraGb: number, remaining: number): number {
  return differenceForTimeLeft(toExtraGb - fromExtraGb, perGbDay, remaining, DAY_MS);
}

/** Smallest data disk (GB) a disk holding `usedBytes` may shrink to: max(free size, ceil(used / GiB) + 1). */
export function minDataDiskGb(freeGb: number, usedBytes: number): number {
  const gib = 1024n ** 3n;
  const usedGb = safe(ceilDiv(int(Math.max(0, usedBytes), 'used bytes'), gib), 'used GB');
  return Math.max(freeGb, usedGb + 1);
}

/** "12 天 3 小时 4 分" of a duration, for order lines. */
export function durationText(ms: number): string {
  const totalMin = Math.floor(Math.max(0, ms) / 60_000);
  const d = Math.floor(totalMin / 1440);
  const h = Math.floor((totalMin % 1440) / 60);
  const m = totalMin % 60;
  const parts = [d > 0 ? `${d} 天` : '', h > 0 ? `${h} 小时` : '', m > 0 || (d === 0 && h === 0) ? `${m} 分` : ''].filter(Boolean);
  return parts.join(' ');
}
