import type { BillItem } from '@suanli/contract/bill';
import type { BillRow } from './metering.repository.ts';

export function presentBill(b: BillRow): BillItem {
  return {
    id: String(b.id),
    instanceId: b.instanceId,
    instanceName: b.instanceName,
    chargeType: b.chargeType,
    orderId: b.orderId,
    periodStart: b.periodStart.toISOString(),
    periodEnd: b.periodEnd.toISOString(),
    seconds: b.seconds,
    amount: Number(b.amount),
    createdAt: b.createdAt.toISOString(),
  };
}
