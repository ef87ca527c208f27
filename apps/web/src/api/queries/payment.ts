import { useCallback } from 'react';
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import type { CreatePaymentBody, Payment, PaymentMethod } from '@suanli/contract/payment';
import { http } from '../client.ts';
import { userKeys } from './user.ts';
import { walletKeys } from './wallet.ts';

export type PaymentMethodItem = { method: PaymentMethod; name: string };

/** How often an open payment is asked for its status. */
export const PAYMENT_POLL_MS = 3_000;

export const paymentKeys = {
  all: ['payment'] as const,
  methods: () => [...paymentKeys.all, 'methods'] as const,
  detail: (id: string) => [...paymentKeys.all, 'detail', id] as const,
};

/** GET /api/v1/payments/methods. */
export const paymentMethodsQuery = () =>
  queryOptions({
    queryKey: paymentKeys.methods(),
    queryFn: () => http.get<PaymentMethodItem[]>('/api/v1/payments/methods', undefined, { silent: true }),
    staleTime: 5 * 60_000,
  });

/** GET /api/v1/payments/:id, asked again every 3 s while the payment is still pending. */
export const paymentQuery = (id: string) =>
  queryOptions({
    queryKey: paymentKeys.detail(id),
    queryFn: ({ signal }) => http.get<Payment>(`/api/v1/payments/${encodeURIComponent(id)}`, undefined, { silent: true, signal }),
    // A failed poll keeps the last answer, so polling goes on through a network blip.
    refetchInterval: (query) => (query.state.data?.status === 'pending' ? PAYMENT_POLL_MS : false),
    refetchIntervalInBackground: true,
  });

/**
 * POST /api/v1/payments with an Idempotency-Key. The caller passes the key it made when the user
 * clicked, and the same key again when the same submission is retried, so a lost answer never
 * makes a second payment.
 */
export const useCreatePayment = () =>
  useMutation({
    mutationFn: ({ body, idempotencyKey }: { body: CreatePaymentBody; idempotencyKey: string }) =>
      http.post<Payment>('/api/v1/payments', body, { silent: true, headers: { 'Idempotency-Key': idempotencyKey } }),
  });

/** After money arrives: the dropdown's balance, the balance card and the ledger are stale. */
export function useRefreshBalances() {
  const qc = useQueryClient();
  return useCallback(
    () =>
      Promise.all([
        qc.invalidateQueries({ queryKey: userKeys.detail() }),
        qc.invalidateQueries({ queryKey: walletKeys.balance() }),
        qc.invalidateQueries({ queryKey: walletKeys.transactions() }),
      ]),
    [qc],
  );
}
