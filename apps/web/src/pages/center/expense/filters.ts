import type { Dayjs } from 'dayjs';
import type { TransactionFilter } from '../../../api/queries/wallet.ts';

/** China time: the business day of the ledger, whatever the viewer's clock says. */
export const CHINA_OFFSET = '+08:00';

/** The picked calendar days as instants in China time: from the first day's 00:00 to the last day's end. */
export function rangeToTimes(range: [Dayjs, Dayjs] | null): Pick<TransactionFilter, 'startTime' | 'endTime'> {
  if (!range) return {};
  return { startTime: `${range[0].format('YYYY-MM-DD')}T00:00:00${CHINA_OFFSET}`, endTime: `${range[1].format('YYYY-MM-DD')}T23:59:59.999${CHINA_OFFSET}` };
}
