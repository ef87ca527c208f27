import { formatMoney } from './format.ts';

/**
 * Prices of compute (issue #8), in integer units of 0.0001 yuan — never floats.
 *
 * Rules (docs/orders-and-instances.md):
 * - Pay-as-you-go, per hour: GPU price per hour × GPU count, plus the data disk beyond the free
 *   size: extra GB × price per GB per day ÷ 24, rounded UP to a whole unit (the platform never
 *   charges a fraction of a unit; rounding up once per hour costs the user < 0.0001 yuan/h).
 * - Prepaid: period price per GPU × GPU count × quantity, plus extra GB × price per GB per day ×
 *   the period's days × quantity (exact, no rounding). A day is 1 day, a week 7, a month 30, a
 *   year 365 (also how long a prepaid instance runs).
 * - A pay-as-you-go start needs a balance of one hour: `requiredBalance` = `hourly`.
 */

export type PricedPeriod = 'day' | 'week' | 'month' | 'year';

export const PERIOD_DAYS: Record<PricedPeriod, number> = { day: 1, week: 7, month: 30, year: 365 };
export const PERIOD_LABELS: Record<PricedPeriod, string> = { day: '按天', week: '按周', month: '按月', year: '按年' };
export const PERIOD_UNITS: Record<PricedPeriod, string> = { day: '天', week: '周', month: '个月', year: '年' };

export type MachinePricing = {
  gpuTypeName: string;
  prices: { hour: number; day: number; week: number; month: number; year: number };
  dataDiskFreeGb: number;
  dataDiskPricePerGbDay: number;
};

export type PriceLine = { label: string; amount: number };
export type PriceQuote = { lines: PriceLine[]; total: number; hourly: number; requiredBalance: number };

function assertUnits(n: number, what: string): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${what} must be a non-negative safe integer, got ${n}`);
}

function checked(n: bigint, what: string): number {
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${what} is too large`);
  return Number(n);
}

/** GB of data disk beyond the free size (never negative). */
export function extraDiskGb(m: Pick<MachinePricing, 'dataDiskFreeGb'>, dataDiskGb: number): number {
  return Math.max(0, dataDiskGb - m.dataDiskFreeGb);
}

/** The extra data disk per hour: ceil(extraGb × perGbDay / 24). */
export function diskHourly(m: MachinePricing, dataDiskGb: number): number {
  assertUnits(m.dataDiskPricePerGbDay, 'dataDiskPricePerGbDay');
  const perDay = BigInt(extraDiskGb(m, dataDiskGb)) * BigInt(m.dataDiskPricePerGbDay);
  return checked((perDay + 23n) / 24n, 'disk price');
}

/** Pay-as-you-go price per hour of an instance. */
export function paygHourly(m: MachinePricing, gpuCount: number, dataDiskGb: number): number {
  assertUnits(m.prices.hour, 'price per hour');
  return checked(BigInt(m.prices.hour) * BigInt(gpuCount), 'GPU price') + diskHourly(m, dataDiskGb);
}

/** The quote of a pay-as-you-go order: nothing paid now, `hourly` while running. */
export function quotePayg(m: MachinePricing, gpuCount: number, dataDiskGb: number): PriceQuote {
  const gpu = checked(BigInt(m.prices.hour) * BigInt(gpuCount), 'GPU price');
  const disk = diskHourly(m, dataDiskGb);
  const lines: PriceLine[] = [{ label: `${m.gpuTypeName} × ${gpuCount}，按量计费（每小时）`, amount: gpu }];
  const extra = extraDiskGb(m, dataDiskGb);
  if (extra > 0) lines.push({ label: `数据盘扩容 ${extra} GB（每小时）`, amount: disk });
  const hourly = gpu + disk;
  return { lines, total: 0, hourly, requiredBalance: hourly };
}

/** The quote of a prepaid order: `total` is paid at once. */
export function quotePrepaid(m: MachinePricing, gpuCount: number, dataDiskGb: number, period: PricedPeriod, quantity: number): PriceQuote {
  const price = m.prices[period];
  assertUnits(price, `price per ${period}`);
  assertUnits(m.dataDiskPricePerGbDay, 'dataDiskPricePerGbDay');
  const gpu = checked(BigInt(price) * BigInt(gpuCount) * BigInt(quantity), 'GPU price');
  const extra = extraDiskGb(m, dataDiskGb);
  const days = PERIOD_DAYS[period] * quantity;
  const disk = checked(BigInt(extra) * BigInt(m.dataDiskPricePerGbDay) * BigInt(days), 'disk price');
  const lines: PriceLine[] = [{ label: `${m.gpuTypeName} × ${gpuCount}，${PERIOD_LABELS[period]} × ${quantity}（${quantity} ${PERIOD_UNITS[period]}）`, amount: gpu }];
  if (extra > 0) lines.push({ label: `数据盘扩容 ${extra} GB × ${days} 天`, amount: disk });
  return { lines, total: gpu + disk, hourly: 0, requiredBalance: gpu + disk };
}

/** How long a prepaid order runs, in milliseconds. */
export function prepaidDurationMs(period: PricedPeriod, quantity: number): number {
  return PERIOD_DAYS[period] * quantity * 86_400_000;
}

/** "还差 ¥12.50" for a short balance. */
export function shortfallText(balance: number, needed: number): string {
  return `还差 ${formatMoney(Math.max(0, needed - balance))}`;
}
