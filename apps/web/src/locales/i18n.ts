import { useSyncExternalStore } from 'react';
import type { Dict } from './types.ts';
import zhCommon from './zh-CN/common.ts';
import zhNav from './zh-CN/nav.ts';
import zhAuth from './zh-CN/auth.ts';
import zhCaptcha from './zh-CN/captcha.ts';
import type zhPages from './zh-CN/pages.ts';

/**
 * One namespace per area; each area owns its pair of files under zh-CN/ and en-US/. The sign-in
 * screens need only the core four; the others load with the first other page (loadPageMessages),
 * so /login doesn't download every page's Chinese.
 */
const zhCore = { common: zhCommon, nav: zhNav, auth: zhAuth, captcha: zhCaptcha };
type Messages = typeof zhCore & typeof zhPages;
const zh: typeof zhCore & Partial<typeof zhPages> = { ...zhCore };
let pagesLoaded: Promise<void> | undefined;

/** The Chinese of every page but the sign-in screens (the router awaits it with such a page). */
export function loadPageMessages(): Promise<void> {
  pagesLoaded ??= import('./zh-CN/pages.ts').then((m) => {
    Object.assign(zh, m.default);
  });
  return pagesLoaded;
}

export type Language = 'zh-CN' | 'en-US';
export const languages: Language[] = ['zh-CN', 'en-US'];
/** The English dictionary once loaded; until then, and for any missing key, Chinese. */
let en: Dict<Messages> | undefined;

/** Loads a language's dictionary (English is a separate chunk). */
export async function loadLanguage(lang: Language): Promise<void> {
  if (lang === 'en-US' && !en) en = (await import('./en-US/index.ts')).en;
}

type Leaves<T, P extends string = ''> = {
  [K in keyof T & string]: T[K] extends string ? `${P}${K}` : T[K] extends readonly unknown[] ? `${P}${K}` : Leaves<T[K], `${P}${K}.`>;
}[keyof T & string];
export type MessageKey = Leaves<Messages>;

const STORAGE_KEY = 'lang';
const listeners = new Set<() => void>();
let current: Language = readStored();

function readStored(): Language {
  try {
    const v = globalThis.localStorage?.getItem(STORAGE_KEY);
    return v === 'en-US' ? 'en-US' : 'zh-CN';
  } catch {
    return 'zh-CN';
  }
}

export function getLanguage(): Language {
  return current;
}

export async function setLanguage(lang: Language): Promise<void> {
  await loadLanguage(lang);
  current = lang;
  try {
    localStorage.setItem(STORAGE_KEY, lang);
  } catch {
    /* private mode: the choice lasts for this page only */
  }
  document.documentElement.lang = lang;
  listeners.forEach((l) => l());
}

function lookup(dict: unknown, key: string): unknown {
  return key.split('.').reduce<unknown>((node, part) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined), dict);
}

/** Translates outside React too (the API client); `{name}` placeholders are filled from vars. */
export function t(key: MessageKey, vars?: Record<string, string | number>): string {
  const value = lookup(current === 'en-US' && en ? en : zh, key) ?? lookup(zh, key);
  const text = typeof value === 'string' ? value : key;
  return vars ? text.replace(/\{(\w+)\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m)) : text;
}

/** A list or object of messages (help articles, menus), in the current language. */
export function tm<T = unknown>(key: MessageKey): T {
  return (lookup(current === 'en-US' && en ? en : zh, key) ?? lookup(zh, key)) as T;
}

const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};

/** Re-renders the component when the language changes. */
export function useT() {
  const lang = useSyncExternalStore(subscribe, getLanguage, getLanguage);
  return { t, tm, lang };
}
