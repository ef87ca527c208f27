import { MAX_PREPAID_QUANTITY, type PrepaidPeriod } from '@suanli/contract/order';
import { quotePayg, quotePrepaid, type MachinePricing, type PriceQuote } from '@suanli/domain/pricing';
import { badRequest } from '../../lib/errors.ts';
import type { MachineView } from './order.repository.ts';

/** A machine row's prices as the domain's pricing functions take them. */
export const pricingOf = (m: MachineView): MachinePricing => ({
  gpuTypeName: m.gpuTypeName,
  prices: { hour: m.priceHour, day: m.priceDay, week: m.priceWeek, month: m.priceMonth, year: m.priceYear },
  dataDiskFreeGb: m.dataDiskFreeGb,
  dataDiskPricePerGbDay: m.dataDiskPricePerGbDay,
});

/** 400 past the most periods one prepaid order may buy (MAX_PREPAID_QUANTITY). */
export function checkPrepaidQuantity(period: PrepaidPeriod, quantity: number): void {
  const max = MAX_PREPAID_QUANTITY[period];
  if (quantity > max) throw badRequest(`该时长最多可购买 ${max} 个周期`);
}

/** The quote of an instance of `gpuCount` GPUs and a `dataDiskGb` data disk on `machine` (new and clone orders). */
export function quoteInstance(machine: MachineView, gpuCount: number, dataDiskGb: number, charge: { chargeType: 'payg' | 'prepaid'; period?: PrepaidPeriod; quantity?: number }): PriceQuote {
  if (charge.chargeType === 'payg') return quotePayg(pricingOf(machine), gpuCount, dataDiskGb);
  const period = charge.period ?? 'month';
  const quantity = charge.quantity ?? 1;
  checkPrepaidQuantity(period, quantity);
  return quotePrepaid(pricingOf(machine), gpuCount, dataDiskGb, period, quantity);
}
