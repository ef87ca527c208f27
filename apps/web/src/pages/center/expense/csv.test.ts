import { describe, expect, it } from 'vitest';
import type { TransactionItem } from '@suanli/contract/wallet';
import { BOM, csvField, csvFileName, moneyCell, transactionsCsv } from './csv.ts';

const row = (over: Partial<TransactionItem>): TransactionItem => ({
  id: 'e1',
  kind: 'recharge',
  amount: 1_000_000,
  balanceAfter: 1_000_000,
  ref: 'pay-1',
  memo: '充值',
  createdAt: '2024-05-01T10:00:00+08:00',
  ...over,
});

describe('csv', () => {
  it('quotes fields with commas, quotes and line breaks', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('plain')).toBe('plain');
  });
  it('defuses formulas in text but keeps negative amounts numeric', () => {
    expect(csvField('=HYPERLINK("x")')).toBe('"\'=HYPERLINK(""x"")"');
    expect(csvField('-0.50', { text: false })).toBe('-0.50');
    expect(moneyCell(-5_000)).toBe('-0.50');
    expect(moneyCell(12_345)).toBe('1.2345');
  });
  it('writes a BOM, a header and one CRLF line per row', () => {
    const csv = transactionsCsv([row({}), row({ id: 'e2', kind: 'order_payment', amount: -5_000, balanceAfter: 995_000, memo: '订单, 支付' })], {
      header: ['时间', '类型', '收支', '金额(元)', '余额(元)', '备注', '关联单号', '流水号'],
      kind: (k) => (k === 'recharge' ? '充值' : '订单支付'),
      income: '收入',
      expense: '支出',
    });
    expect(csv.startsWith(BOM)).toBe(true);
    const lines = csv.slice(1).split('\r\n');
    expect(lines[0]).toBe('时间,类型,收支,金额(元),余额(元),备注,关联单号,流水号');
    expect(lines[1]).toMatch(/,充值,收入,100\.00,100\.00,充值,pay-1,e1$/);
    expect(lines[2]).toMatch(/,订单支付,支出,-0\.50,99\.50,"订单, 支付",pay-1,e2$/);
    expect(lines[3]).toBe('');
  });
  it('names the file by the day', () => {
    expect(csvFileName('收支明细', new Date(2024, 4, 9, 13))).toBe('收支明细-20240509.csv');
  });
});
