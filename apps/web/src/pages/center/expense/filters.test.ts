import { describe, expect, it } from 'vitest';
import dayjs from 'dayjs';
import { transactionsQuery } from '@suanli/contract/wallet';
import { rangeToTimes } from './filters.ts';

describe('rangeToTimes', () => {
  it('covers the whole picked days in China time, in a form the contract accepts', () => {
    const times = rangeToTimes([dayjs('2024-05-01'), dayjs('2024-05-31')]);
    expect(times).toEqual({ startTime: '2024-05-01T00:00:00+08:00', endTime: '2024-05-31T23:59:59.999+08:00' });
    expect(transactionsQuery.safeParse({ page: 1, pageSize: 20, ...times }).success).toBe(true);
  });
  it('sends no bounds without a range', () => {
    expect(rangeToTimes(null)).toEqual({});
  });
});
