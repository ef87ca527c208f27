import { z } from 'zod';
import zhCN from 'zod/v4/locales/zh-CN.js';

/**
 * Zod's built-in messages are marked so an error formatter can tell them from the Chinese
 * messages our schemas spell out: a built-in one gets the field name put in front of it, a
 * schema's own message is already a whole sentence naming the field.
 */
export const DEFAULT_MESSAGE_MARK = '\u2063';

let installed = false;
export function installZodLocale(): void {
  if (installed) return;
  installed = true;
  const { localeError } = zhCN();
  z.config({
    localeError: (issue) => {
      const base = localeError?.(issue);
      const text = typeof base === 'string' ? base : (base?.message ?? '参数不合法');
      return `${DEFAULT_MESSAGE_MARK}${text}`;
    },
  });
}

type IssueLike = { code?: string; path: PropertyKey[] | string; message: string; keys?: string[] };

/** One Chinese sentence for the first problem, naming the field. */
export function formatIssue(issue: IssueLike): string {
  const path = Array.isArray(issue.path) ? issue.path.map(String).join('.') : issue.path.replace(/^\//, '').replaceAll('/', '.');
  if (issue.code === 'unrecognized_keys' && issue.keys?.length) {
    return `不支持的参数：${issue.keys.join('、')}`;
  }
  if (!issue.message.startsWith(DEFAULT_MESSAGE_MARK)) return issue.message;
  const text = issue.message.slice(DEFAULT_MESSAGE_MARK.length);
  return path ? `参数 ${path} 不合法：${text}` : `请求参数不合法：${text}`;
}
