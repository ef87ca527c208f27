import type { FlaggedPayment, Payment } from '@suanli/contract/payment';
import type { FlaggedPaymentRow, PaymentRow } from './payment.repository.ts';

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

/** The operator's view of a flagged payment: codes, not names (the console translates them). */
export function presentFlaggedPayment(row: FlaggedPaymentRow): FlaggedPayment {
  return { ...presentPayment(row), userId: row.userId, userPhone: row.userPhone, gatewayTradeNo: row.gatewayTradeNo, flag: 'late' };
}
