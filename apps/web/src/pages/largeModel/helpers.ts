import type { LimitRule, LimitUnit, LimitWindow, ModelItem, UsageRow } from '@suanli/contract/llm';
import { formatMoney } from '@suanli/domain/format';
import { parseTypedYuan } from '@suanli/domain/money';

/**
 * Pure helpers of the large-model pages (tested in helpers.test.ts). The contract's constants are
 * restated here as types-checked literals: importing values from the contract would bring zod into
 * the page's chunk.
 */

export const LIMIT_WINDOWS = ['5h', 'day', 'week', 'month'] as const satisfies readonly LimitWindow[];
export const LIMIT_UNITS = ['tokens', 'money'] as const satisfies readonly LimitUnit[];

/** Models whose name, id, provider or description holds the keyword (any case), carrying the tag. */
export function filterModels(list: readonly ModelItem[], keyword: string, tag: string | null): ModelItem[] {
  const k = keyword.trim().toLowerCase();
  return list.filter(
    (m) =>
      (!tag || m.tags.includes(tag)) &&
      (!k || [m.name, m.id, m.provider, m.description].some((s) => s.toLowerCase().includes(k))),
  );
}

/** Every tag among the models, in first-seen order. */
export function tagsOf(list: readonly ModelItem[]): string[] {
  return [...new Set(list.flatMap((m) => m.tags))];
}

/** 128000 → "128K", 1048576 → "1M", 2048 → "2K", 300 → "300". */
export function formatContext(tokens: number): string {
  if (tokens >= 1_000_000 && tokens % 1_000_000 === 0) return `${tokens / 1_000_000}M`;
  if (tokens >= 1_048_576 && tokens % 1_048_576 === 0) return `${tokens / 1_048_576}M`;
  if (tokens >= 1_000 && tokens % 1_000 === 0) return `${tokens / 1_000}K`;
  if (tokens >= 1_000 && tokens % 1_024 === 0) return `${tokens / 1_024}K`;
  if (tokens >= 10_000) return `${Math.round(tokens / 1_000)}K`;
  return String(tokens);
}

/** 1234567 → "1,234,567" (token counts; money uses formatMoney). */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/**
 * A money quota typed in yuan → integer units (×10000), exactly from the digits. null when empty;
 * 'invalid' when it is not a positive amount with at most four decimals.
 */
export function quotaUnits(input: string | number | null | undefined): number | null | 'invalid' {
  if (input === null || input === undefined || String(input).trim() === '') return null;
  const parsed = parseTypedYuan(input);
  if (!parsed || !Number.isSafeInteger(parsed.units) || parsed.units < 1) return 'invalid';
  return parsed.units;
}

/** The IP allow-list textarea: one address or CIDR per line, blanks and duplicates dropped. */
export function ipLines(text: string): string[] {
  return [...new Set(text.split(/[\r\n,]+/).map((s) => s.trim()).filter(Boolean))];
}

/** One limit rule as the table shows it, e.g. "5h ≤ 100,000 tokens" or "day ≤ ¥10.00". */
export function limitText(rule: LimitRule, windowLabel: (w: LimitWindow) => string, tokensLabel: string): string {
  const amount = rule.unit === 'money' ? formatMoney(rule.limit) : `${formatCount(rule.limit)} ${tokensLabel}`;
  return `${windowLabel(rule.window)} ≤ ${amount}`;
}

/** A limit row of the create form → the contract's rule (money typed in yuan), or null if incomplete/invalid. */
export function limitRuleOf(row: { window?: LimitWindow; unit?: LimitUnit; amount?: string | number | null }): LimitRule | null {
  if (!row.window || !row.unit || row.amount === null || row.amount === undefined || String(row.amount).trim() === '') return null;
  if (row.unit === 'money') {
    const units = quotaUnits(row.amount);
    return typeof units === 'number' ? { window: row.window, unit: 'money', limit: units } : null;
  }
  const n = Number(String(row.amount).trim());
  return Number.isSafeInteger(n) && n >= 1 ? { window: row.window, unit: 'tokens', limit: n } : null;
}

/* ---------------------------------------------------------------- usage */

export type UsageFigures = { requests: number; errors: number; promptTokens: number; completionTokens: number; cost: number };
export type UsageGroup = UsageFigures & { key: string; label: string };

const zero = (): UsageFigures => ({ requests: 0, errors: 0, promptTokens: 0, completionTokens: 0, cost: 0 });
const add = (a: UsageFigures, r: UsageFigures) => {
  a.requests += r.requests;
  a.errors += r.errors;
  a.promptTokens += r.promptTokens;
  a.completionTokens += r.completionTokens;
  a.cost += r.cost;
};

/** Every day from `start` to `end` inclusive ("YYYY-MM-DD", calendar arithmetic in UTC). */
export function daysBetween(start: string, end: string): string[] {
  const out: string[] = [];
  const last = Date.parse(`${end}T00:00:00Z`);
  for (let d = Date.parse(`${start}T00:00:00Z`); d <= last && out.length <= 400; d += 86_400_000) out.push(new Date(d).toISOString().slice(0, 10));
  return out;
}

/** The rows summed per day, with every day of the range present (zeros where nothing was called). */
export function usageByDay(rows: readonly UsageRow[], days: readonly string[]): UsageGroup[] {
  const map = new Map<string, UsageGroup>(days.map((d) => [d, { key: d, label: d, ...zero() }]));
  for (const r of rows) {
    let g = map.get(r.day);
    if (!g) map.set(r.day, (g = { key: r.day, label: r.day, ...zero() }));
    add(g, r);
  }
  return [...map.values()].sort((a, b) => a.key.localeCompare(b.key));
}

/** The rows summed per model or per key (the console's chat under `chatLabel`), most costly first. */
export function usageBy(rows: readonly UsageRow[], by: 'model' | 'key', chatLabel: string): UsageGroup[] {
  const map = new Map<string, UsageGroup>();
  for (const r of rows) {
    const key = by === 'model' ? r.model : (r.keyId ?? '');
    const label = by === 'model' ? r.model : r.keyId === null ? chatLabel : (r.keyName ?? r.keyId);
    let g = map.get(key);
    if (!g) map.set(key, (g = { key, label, ...zero() }));
    add(g, r);
  }
  return [...map.values()].sort((a, b) => b.cost - a.cost || b.requests - a.requests || a.label.localeCompare(b.label));
}

/* ---------------------------------------------------------------- API how-to */

/** The gateway's base URL for OpenAI clients. */
export const gatewayBaseUrl = (origin: string) => `${origin.replace(/\/+$/, '')}/v1`;

export function curlExample(origin: string, model: string): string {
  return [
    `curl ${gatewayBaseUrl(origin)}/chat/completions \\`,
    `  -H "Authorization: Bearer $API_KEY" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '${JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello!' }], stream: false })}'`,
  ].join('\n');
}

export function pythonExample(origin: string, model: string): string {
  return [
    'from openai import OpenAI',
    '',
    `client = OpenAI(base_url="${gatewayBaseUrl(origin)}", api_key="sk-...")`,
    'resp = client.chat.completions.create(',
    `    model=${JSON.stringify(model)},`,
    '    messages=[{"role": "user", "content": "Hello!"}],',
    ')',
    'print(resp.choices[0].message.content)',
  ].join('\n');
}

/** A new conversation's title from its first message: one line, at most 24 characters. */
export function titleFrom(content: string): string {
  const line = content.replace(/\s+/g, ' ').trim();
  return Array.from(line).length > 24 ? `${Array.from(line).slice(0, 24).join('')}…` : line;
}
