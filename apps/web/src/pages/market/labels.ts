import type { ChargeType, PrepaidPeriod } from '@suanli/contract/order';
import { t } from '../../locales/i18n.ts';

/** "按量计费" or "包月 × 2": the charge of an order or an instance, in the console's language. */
export function chargeLabel(chargeType: ChargeType, period: PrepaidPeriod | null, quantity?: number | null): string {
  if (chargeType === 'payg' || !period) return t('compute.chargeTypes.payg');
  return quantity ? `${t(`compute.periods.${period}`)} × ${quantity}` : t(`compute.periods.${period}`);
}

/** Seconds as "1h 02m 03s"-like text without words of either language: 01:02:03, or 2d 01:02:03. */
export function clockDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const days = Math.floor(s / 86_400);
  const pad = (n: number) => String(n).padStart(2, '0');
  const hms = `${pad(Math.floor((s % 86_400) / 3_600))}:${pad(Math.floor((s % 3_600) / 60))}:${pad(s % 60)}`;
  return days > 0 ? `${days}d ${hms}` : hms;
}
