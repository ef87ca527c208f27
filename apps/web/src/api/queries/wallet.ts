import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import type { TransactionItem, TransactionsPage, TransactionsQuery } from '@suanli/contract/wallet';
import { http } from '../client.ts';

export type Balance = { balance: number; frozenBalance: number };
/** The filters of the income and expense page, without paging. */
export type TransactionFilter = Omit<TransactionsQuery, 'page' | 'pageSize'>;

export const walletKeys = {
  all: ['wallet'] as const,
  balance: () => [...walletKeys.all, 'balance'] as const,
  transactions: () => [...walletKeys.all, 'transactions'] as const,
  transactionPage: (q: TransactionsQuery) => [...walletKeys.transactions(), q] as const,
};

/** GET /api/v1/account/balance. */
export const balanceQuery = () =>
  queryOptions({
    queryKey: walletKeys.balance(),
    queryFn: () => http.get<Balance>('/api/v1/account/balance', undefined, { silent: true }),
    staleTime: 10_000,
  });

/** Only the filters that are set: the contract is strict and an empty string is not a time. */
function compact(q: TransactionsQuery): TransactionsQuery {
  return Object.fromEntries(Object.entries(q).filter(([, v]) => v !== undefined && v !== null && v !== '')) as TransactionsQuery;
}

const listTransactions = (q: TransactionsQuery, signal?: AbortSignal) =>
  // A read, not a submission: it is neither recorded for repeat-submit nor toasted (the page shows it).
  http.post<TransactionsPage>('/api/v1/transactions/list', compact(q), { repeatSubmit: false, silent: true, signal });

/** POST /api/v1/transactions/list: one page; the previous page stays on screen while the next loads. */
export const transactionsPageQuery = (q: TransactionsQuery) =>
  queryOptions({
    queryKey: walletKeys.transactionPage(q),
    queryFn: ({ signal }) => listTransactions(q, signal),
    placeholderData: keepPreviousData,
  });

/** The most rows an export fetches. */
export const EXPORT_CAP = 10_000;
const EXPORT_PAGE_SIZE = 100;

/**
 * Every transaction of a filtered range, newest first, page by page (the server's largest page),
 * up to `cap` rows. `onProgress` hears how many rows have arrived out of how many there are.
 */
export async function fetchAllTransactions(
  filter: TransactionFilter,
  opts: { cap?: number; signal?: AbortSignal; onProgress?: (done: number, total: number) => void } = {},
): Promise<{ rows: TransactionItem[]; total: number; capped: boolean }> {
  const cap = opts.cap ?? EXPORT_CAP;
  const rows: TransactionItem[] = [];
  // An entry posted during the export shifts later pages by one: never write a row twice.
  const seen = new Set<string>();
  for (let page = 1; ; page += 1) {
    const res = await listTransactions({ ...filter, page, pageSize: EXPORT_PAGE_SIZE }, opts.signal);
    for (const row of res.list) if (!seen.has(row.id) && seen.add(row.id)) rows.push(row);
    opts.onProgress?.(Math.min(rows.length, cap), Math.min(res.total, cap));
    if (res.list.length < EXPORT_PAGE_SIZE || rows.length >= res.total || rows.length >= cap) {
      return { rows: rows.slice(0, cap), total: res.total, capped: res.total > cap };
    }
  }
}
