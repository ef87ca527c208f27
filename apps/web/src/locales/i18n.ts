import { useSyncExternalStore } from 'react';
import zhCommon from './zh-CN/common.ts';
import zhNav from './zh-CN/nav.ts';
import zhAuth from './zh-CN/auth.ts';
import zhHome from './zh-CN/home.ts';
import zhHelp from './zh-CN/help.ts';
import zhCenter from './zh-CN/center.ts';
import zhDatahub from './zh-CN/datahub.ts';
import zhCaptcha from './zh-CN/captcha.ts';
import zhSafe from './zh-CN/safe.ts';
import zhSite from './zh-CN/site.ts';
import enCommon from './en-US/common.ts';
import enNav from './en-US/nav.ts';
import enAuth from './en-US/auth.ts';
import enHome from './en-US/home.ts';
import enHelp from './en-US/help.ts';
import enCenter from './en-US/center.ts';
import enDatahub from './en-US/datahub.ts';
import enCaptcha from './en-US/captcha.ts';
import enSafe from './en-US/safe.ts';
import enSite from './en-US/site.ts';

/** One namespace per area; each area owns its pair of files under zh-CN/ and en-US/. */
const zh = {
  common: zhCommon,
  nav: zhNav,
  auth: zhAuth,
  home: zhHome,
  help: zhHelp,
  center: zhCenter,
  datahub: zhDatahub,
  captcha: zhCaptcha,
  safe: zhSafe,
  site: zhSite,
};
const en = {
  common: enCommon,
  nav: enNav,
  auth: enAuth,
  home: enHome,
  help: enHelp,
  center: enCenter,
  datahub: enDatahub,
  captcha: enCaptcha,
  safe: enSafe,
  site: enSite,
};

export type Language = 'zh-CN' | 'en-US';
export const languages: Language[] = ['zh-CN', 'en-US'];
type Messages = typeof zh;

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

export function setLanguage(lang: Language): void {
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
  const value = lookup(current === 'en-US' ? en : zh, key) ?? lookup(zh, key);
  const text = typeof value === 'string' ? value : key;
  return vars ? text.replace(/\{(\w+)\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m)) : text;
}

/** A list or object of messages (help articles, menus), in the current language. */
export function tm<T = unknown>(key: MessageKey): T {
  return (lookup(current === 'en-US' ? en : zh, key) ?? lookup(zh, key)) as T;
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
