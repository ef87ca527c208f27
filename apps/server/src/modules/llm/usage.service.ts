import { and, asc, eq, gte, lte, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type { UsageRow, UsageStats, usageQuery } from '@suanli/contract/llm';
import type { Db } from '../../db/client.ts';
import { apiKeys, llmUsage } from '../../db/schema/llm.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { sqlStateOf } from '../../http/plugins/error-handler.ts';
import type { Owner } from './chat.repository.ts';

export const DEFAULT_USAGE_TIME_ZONE = 'Asia/Shanghai';
/** What the statistics and the CSV call the console chat's calls (no key). */
export const CHAT_KEY_NAME = '控制台对话';

export const UsageMessages = {
  badZone: (zone: string) => `时区 ${zone} 无效，应为 IANA 时区名，如 Asia/Shanghai`,
  keyMissing: '密钥不存在',
} as const;

/** An IANA zone name both ICU and PostgreSQL know (PostgreSQL is asked too: see stats). No POSIX strings or offsets. */
export function checkTimeZone(zone: string): string {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/.test(zone)) throw badRequest(UsageMessages.badZone(zone));
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    throw badRequest(UsageMessages.badZone(zone));
  }
  return zone;
}

/**
 * A call ended in an error: refused after acceptance or failed upstream (4xx/5xx), not the client
 * closing it (499, a stop in the chat).
 */
const isError = sql`(${llmUsage.status} >= 400 and ${llmUsage.status} <> 499)`;

/** The usage statistics of a user's calls (schema llm_usage, written by the gateway's settlement). */
export function createUsageService(deps: { db: Db }) {
  const { db } = deps;

  async function rows(o: Owner, q: z.output<typeof usageQuery>): Promise<UsageRow[]> {
    const zone = checkTimeZone(q.timeZone ?? DEFAULT_USAGE_TIME_ZONE);
    if (q.keyId !== undefined) {
      // Deleted keys of the user count (their usage stays); another user's key is missing.
      const [key] = await db
        .select({ id: apiKeys.id })
        .from(apiKeys)
        .where(and(eq(apiKeys.id, q.keyId), eq(apiKeys.tenantId, o.tenantId), eq(apiKeys.userId, o.userId)));
      if (!key) throw notFound(UsageMessages.keyMissing);
    }
    const filters = [
      eq(llmUsage.tenantId, o.tenantId),
      eq(llmUsage.userId, o.userId),
      gte(llmUsage.createdAt, new Date(q.startTime)),
      lte(llmUsage.createdAt, new Date(q.endTime)),
      ...(q.model ? [eq(llmUsage.model, q.model)] : []),
      ...(q.keyId !== undefined ? [eq(llmUsage.keyId, q.keyId)] : []),
    ];
    // The day is computed once in a subquery, so the outer GROUP BY names a column (a parameter
    // repeated in SELECT and GROUP BY would be two different expressions to PostgreSQL).
    const u = db
      .select({
        day: sql<string>`to_char(${llmUsage.createdAt} at time zone ${zone}, 'YYYY-MM-DD')`.as('day'),
        model: llmUsage.model,
        keyId: llmUsage.keyId,
        promptTokens: llmUsage.promptTokens,
        completionTokens: llmUsage.completionTokens,
        cost: llmUsage.cost,
        failed: sql<number>`case when ${isError} then 1 else 0 end`.as('failed'),
      })
      .from(llmUsage)
      .where(and(...filters))
      .as('u');
    try {
      const grouped = await db
        .select({
          day: u.day,
          model: u.model,
          keyId: u.keyId,
          keyName: apiKeys.name,
          requests: sql<number>`count(*)::int`.mapWith(Number),
          errors: sql<number>`coalesce(sum(${u.failed}), 0)::int`.mapWith(Number),
          promptTokens: sql<number>`coalesce(sum(${u.promptTokens}), 0)::bigint`.mapWith(Number),
          completionTokens: sql<number>`coalesce(sum(${u.completionTokens}), 0)::bigint`.mapWith(Number),
          cost: sql<number>`coalesce(sum(${u.cost}), 0)::bigint`.mapWith(Number),
        })
        .from(u)
        .leftJoin(apiKeys, eq(apiKeys.id, u.keyId))
        .groupBy(u.day, u.model, u.keyId, apiKeys.name)
        .orderBy(asc(u.day), asc(u.model), sql`${u.keyId} asc nulls first`);
      return grouped.map((r) => ({ ...r, keyName: r.keyId === null ? CHAT_KEY_NAME : (r.keyName ?? '') }));
    } catch (err) {
      // 22023: a zone ICU knows and PostgreSQL doesn't.
      if (sqlStateOf(err) === '22023') throw badRequest(UsageMessages.badZone(zone));
      throw err;
    }
  }

  return {
    /** Rows per (day in the zone, model, key) and their totals. */
    async stats(o: Owner, q: z.output<typeof usageQuery>): Promise<UsageStats> {
      const list = await rows(o, q);
      const totals = { requests: 0, errors: 0, promptTokens: 0, completionTokens: 0, cost: 0 };
      for (const r of list) {
        totals.requests += r.requests;
        totals.errors += r.errors;
        totals.promptTokens += r.promptTokens;
        totals.completionTokens += r.completionTokens;
        totals.cost += r.cost;
      }
      return { rows: list, totals };
    },

    /** The same rows as CSV: UTF-8 with a BOM (Excel), Chinese header, cost in yuan (4 decimals), a totals line. */
    async csv(o: Owner, q: z.output<typeof usageQuery>): Promise<string> {
      const { rows: list, totals } = await this.stats(o, q);
      const lines = [
        ['日期', '模型', '密钥', '请求数', '错误数', '输入 tokens', '输出 tokens', '费用（元）'],
        ...list.map((r) => [r.day, r.model, r.keyName ?? '', r.requests, r.errors, r.promptTokens, r.completionTokens, yuan(r.cost)]),
        ['合计', '', '', totals.requests, totals.errors, totals.promptTokens, totals.completionTokens, yuan(totals.cost)],
      ];
      return `\ufeff${lines.map((l) => l.map(csvField).join(',')).join('\r\n')}\r\n`;
    },
  };
}
export type UsageService = ReturnType<typeof createUsageService>;

/** Units of 0.0001 yuan as yuan with four decimals. */
export function yuan(units: number): string {
  const sign = units < 0 ? '-' : '';
  const a = Math.abs(units);
  return `${sign}${Math.floor(a / 10_000)}.${String(a % 10_000).padStart(4, '0')}`;
}

/** One CSV field: quoted when needed; a text starting like a formula is prefixed with ' (CSV injection). */
export function csvField(v: string | number): string {
  if (typeof v === 'number') return String(v);
  const s = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
