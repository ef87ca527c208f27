import { useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { Order } from '@suanli/contract/order';
import { ErrorReason } from '@suanli/contract/errors';
import { useCancelOrder, usePayOrder } from '../../api/queries/compute.ts';
import { balanceQuery } from '../../api/queries/wallet.ts';
import { ApiError } from '../../api/errors.ts';
import { newIdempotencyKey } from '../recharge/idempotency-key.ts';
import { useNow } from '../recharge/useNow.ts';

/**
 * What paying needs in the balance: the amount; a new (or cloned) pay-as-you-go instance starts
 * running once paid, so it needs one hour of running. A change of an instance (issue #10) needs
 * its amount only.
 */
export function neededBalance(order: Pick<Order, 'kind' | 'chargeType' | 'amount' | 'hourly'>): number {
  const starts = order.kind === 'new' || order.kind === 'clone';
  return starts && order.chargeType === 'payg' ? Math.max(order.amount, order.hourly) : Math.max(0, order.amount);
}

/**
 * The state of paying an unpaid order, shared by the market's check page and the change check
 * page: the balance, the countdown, whether it is short (by the balance, or by the server's answer)
 * and by how much, and `payNow` — one Idempotency-Key per click, reused when an answer was lost,
 * so a retry never pays twice.
 */
export function useOrderPayment(order: Order, onPaid: () => void) {
  const balance = useQuery(balanceQuery());
  const pay = usePayOrder();
  const cancel = useCancelOrder();
  const now = useNow(true);
  const attempt = useRef<string | null>(null);
  const [serverShort, setServerShort] = useState(false);

  const left = Math.max(0, Math.floor((Date.parse(order.expiresAt) - now) / 1000));
  const needed = neededBalance(order);
  const short = serverShort || (balance.data !== undefined && balance.data.balance < needed);
  const missing = balance.data ? Math.max(0, needed - balance.data.balance) : needed;
  const insufficient = pay.error instanceof ApiError && pay.error.reason === ErrorReason.InsufficientBalance;

  const payNow = () => {
    attempt.current ??= newIdempotencyKey();
    pay.mutate(
      { orderId: order.id, idempotencyKey: attempt.current },
      {
        onSuccess: () => {
          attempt.current = null;
          onPaid();
        },
        onError: (err) => {
          // An answer came back: the next click is a new attempt. No answer: the same one again.
          if (err instanceof ApiError && err.status > 0) attempt.current = null;
          if (err instanceof ApiError && err.reason === ErrorReason.InsufficientBalance) setServerShort(true);
          void balance.refetch();
        },
      },
    );
  };

  return { balance, pay, cancel, left, expired: left === 0, needed, short, missing, insufficient, payNow };
}
