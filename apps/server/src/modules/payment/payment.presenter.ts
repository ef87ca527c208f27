import type { Payment } from '@suanli/contract/payment';
import type { PaymentRow } from './payment.repository.ts';

/** Row -> contract DTO: the owner's view. Gateway trade numbers and the operator's flag stay inside. */
export function presentPayment(row: PaymentRow): Payment {
  return {
    id: row.id,
    amount: row.amount,
    method: row.method,
    status: row.status,
    payUrl: row.payUrl,
    qrCode: row.qrCode,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    paidAt: row.paidAt ? row.paidAt.toISOString() : null,
  };
}
