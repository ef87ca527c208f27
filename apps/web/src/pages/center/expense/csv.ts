import type { TransactionItem } from '@suanli/contract/wallet';
import { formatDateTime, formatMoney } from '@suanli/domain/format';
import { memoText } from './memo.ts';

/** Excel reads a UTF-8 CSV as the local code page unless it starts with a byte-order mark. */
export const BOM = '\uFEFF';

/** A money figure for a spreadsheet: the display amount without the yuan sign, so it stays a number. */
export const moneyCell = (units: number) => formatMoney(units).replace('¥', '');

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line break. Text that a
 * spreadsheet would run as a formula (=, +, -, @, tab, CR at the start) gets a leading apostrophe.
 */
export function csvField(value: string, { text = true }: { text?: boolean } = {}): string {
  const safe = text && /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export type CsvLabels = { header: string[]; kind: (k: TransactionItem['kind']) => string; income: string; expense: string };

/** The income and expense rows as a CSV document: BOM, header, CRLF line ends. */
export function transactionsCsv(rows: TransactionItem[], labels: CsvLabels): string {
  const lines = [labels.header.map((h) => csvField(h)).join(',')];
  for (const r of rows) {
    lines.push(
      [
        csvField(formatDateTime(r.createdAt)),
        csvField(labels.kind(r.kind)),
        csvField(r.amount >= 0 ? labels.income : labels.expense),
        csvField(moneyCell(r.amount), { text: false }),
        csvField(moneyCell(r.balanceAfter), { text: false }),
        csvField(memoText(r.memo)),
        csvField(r.ref),
        csvField(r.id),
      ].join(','),
    );
  }
  return `${BOM}${lines.join('\r\n')}\r\n`;
}

/** 收支明细-YYYYMMDD.csv, dated the day of the export. */
export const csvFileName = (prefix: string, now: Date = new Date()) => `${prefix}-${formatDateTime(now, 'YYYYMMDD')}.csv`;

/** Hands a text file to the browser's download. */
export function downloadText(name: string, text: string, type = 'text/csv;charset=utf-8'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.style.display = 'none';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1_000);
}
