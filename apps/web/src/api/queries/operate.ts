import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import type { QuestionItem } from '@suanli/contract/question';
import type { FlaggedPaymentsPage } from '@suanli/contract/payment';
import { http } from '../client.ts';

export const operateKeys = {
  all: ['operate'] as const,
  questions: (page: number, pageSize: number) => [...operateKeys.all, 'questions', { page, pageSize }] as const,
  latePayments: (page: number, pageSize: number) => [...operateKeys.all, 'payments', 'late', { page, pageSize }] as const,
};

/** GET /api/v1/operate/questions: the tenant's contact-sales requests, newest first. Errors show in the page. */
export const operateQuestionsQuery = (page: number, pageSize: number) =>
  queryOptions({
    queryKey: operateKeys.questions(page, pageSize),
    queryFn: () => http.get<{ list: QuestionItem[]; total: number }>('/api/v1/operate/questions', { page, pageSize }, { silent: true }),
    // Keep the current page on screen while the next one loads: the table doesn't jump.
    placeholderData: keepPreviousData,
  });

/** GET /api/v1/operate/payments?flag=late: payments credited after they had expired, newest first. */
export const operateLatePaymentsQuery = (page: number, pageSize: number) =>
  queryOptions({
    queryKey: operateKeys.latePayments(page, pageSize),
    queryFn: () => http.get<FlaggedPaymentsPage>('/api/v1/operate/payments', { flag: 'late', page, pageSize }, { silent: true }),
    placeholderData: keepPreviousData,
  });
