import fs from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { eq } from 'drizzle-orm';
import { users } from '../../server/src/db/schema/user.ts';
import { startHarness, type Harness } from './harness.ts';
import { registerUser } from './fixtures.ts';
import { findRoute, notFoundRoute } from '../src/route-table.ts';
import { en } from '../src/locales/en-US/index.ts';
import zhCommon from '../src/locales/zh-CN/common.ts';
import zhNav from '../src/locales/zh-CN/nav.ts';
import zhAuth from '../src/locales/zh-CN/auth.ts';
import zhCaptcha from '../src/locales/zh-CN/captcha.ts';
import zhPages from '../src/locales/zh-CN/pages.ts';

const zh = { common: zhCommon, nav: zhNav, auth: zhAuth, captcha: zhCaptcha, ...zhPages };

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** #23–#28 acceptance: the main pages, both languages, desktop and phone (24 pages: each run takes a few minutes on a busy machine). */
const PAGES: { path: string; host?: 'starlake' | 'partner'; signedOut?: boolean }[] = [
  { path: '/page' },
  { path: '/pagehome', host: 'starlake' },
  { path: '/pagehtml', host: 'partner' },
  { path: '/login', signedOut: true },
  { path: '/register', signedOut: true },
  { path: '/help' },
  { path: '/about' },
  { path: '/contact' },
  { path: '/reservationForm' },
  { path: '/center/home' },
  { path: '/center/user/safe' },
  { path: '/center/expense/incomeExpend' },
  { path: '/recharge/index' },
  { path: '/operate/home' },
  // Issue #8: the compute rental pages (the ids need not exist: each shows its empty or error state).
  { path: '/market/index' },
  { path: '/market/create' },
  { path: '/market/orderdetail' },
  { path: '/center/control/index' },
  { path: '/center/ssh/control' },
  { path: '/center/expense/check' },
  { path: '/center/expense/order/order' },
  { path: '/center/expense/order/orderDetail' },
  { path: '/shell' },
  // Issue #9: the large-model pages (the harness seeds the embedded model, so the square has a card).
  { path: '/largeModel/modelSquare' },
  { path: '/largeModel/textChat' },
  { path: '/largeModel/apiKey' },
  { path: '/largeModel/usageChart' },
  { path: '/center/ai-apiKey' },
  // Issue #10: instance operations, disks, images and the community (without ids: their missing-id states).
  { path: '/center/control/changeContract' },
  { path: '/center/control/changeContractPreview' },
  { path: '/center/control/renewal' },
  { path: '/center/control/changeOrderdetail' },
  { path: '/center/control/expand/control' },
  { path: '/center/system' },
  { path: '/center/image/index' },
  { path: '/center/image/detail' },
  { path: '/images/index' },
  { path: '/images/detail' },
  { path: '/control/clone' },
  { path: '/no-such-page' },
];
const DICTS = { 'zh-CN': zh, 'en-US': en } as const;
const lookup = (lang: Lang, key: string) => key.split('.').reduce<unknown>((n, k) => (n && typeof n === 'object' ? (n as Record<string, unknown>)[k] : undefined), DICTS[lang]) as string;

type Lang = 'zh-CN' | 'en-US';
type Finding = { page: string; lang: Lang; width: number; problem: string };

const CJK = /[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]/;

/** Waits for the app to have drawn the page: boot mask gone, no request in flight, fonts in. */
async function settle(page: Page) {
  await page.waitForFunction(() => !document.getElementById('boot-mask'));
  await page.waitForLoadState('networkidle');
  await page.evaluate(() => document.fonts.ready.then(() => undefined));
  // antd's motion (menus, tabs, button hover) finishes in 0.3 s and axe reads colours as they are
  // drawn: with the four passes running at once a transition could still be under way after the
  // wait (a button's text read half-faded), so transitions end at once, then the wait.
  await page.addStyleTag({ content: '*, *::before, *::after { transition: none !important; animation-duration: 0s !important; animation-delay: 0s !important; }' });
  await page.waitForTimeout(350);
}

async function axeProblems(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP (nonce-only scripts) doesn't
  // govern; a <script> tag would be refused, as it should be.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(`${axeSource}\n;void 0`);
  const result = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: { id: string; impact: string | null; nodes: { target: unknown[]; failureSummary?: string }[] }[] }> } }).axe;
    const r = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }, resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => `${JSON.stringify(n.target)} ${n.failureSummary?.split('\n').slice(1, 2).join(' ') ?? ''}`) }));
  });
  return result.filter((v) => v.impact === 'critical' || v.impact === 'serious').map((v) => `${v.impact} ${v.id}: ${v.nodes.join(' | ')}`);
}

/** Visible text of the page with CJK in it, leaving out the tenant's own copy and text marked as Chinese (lang="zh…"). */
async function chineseText(page: Page, tenantCopy: string[]): Promise<string[]> {
  const texts = await page.evaluate(() => {
    const out: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      const text = n.textContent?.trim();
      if (!el || !text) continue;
      if (el.closest('[lang^="zh"]')) continue;
      const style = getComputedStyle(el);
      const box = el.getBoundingClientRect();
      if (style.visibility === 'hidden' || style.display === 'none' || box.width === 0 || box.height === 0) continue;
      out.push(text);
    }
    // Accessible names too: a screen reader reads them.
    for (const el of document.querySelectorAll('[aria-label],[title],img[alt]')) {
      for (const attr of ['aria-label', 'title', 'alt']) {
        const v = el.getAttribute(attr);
        if (v) out.push(v);
      }
    }
    return out;
  });
  return texts.filter((t) => {
    if (!CJK.test(t)) return false;
    let rest = t;
    // Longest first: a tenant's title inside its company name must not hide the company name.
    for (const copy of [...tenantCopy].sort((x, y) => y.length - x.length)) if (copy) rest = rest.split(copy).join('');
    return CJK.test(rest);
  });
}

/** The tenant's own copy that has no English variant: it may stay Chinese in English mode. */
async function tenantCopy(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const t = (window as unknown as { __TENANT__: { title: string; hash_rate_slogan_title: string; hash_rate_slogan: string; config: { companyName: string; icp: string }; en?: Record<string, string | undefined> } }).__TENANT__;
    const en = t.en ?? {};
    return [
      en.title ? '' : t.title,
      en.hash_rate_slogan_title ? '' : t.hash_rate_slogan_title,
      en.hash_rate_slogan ? '' : t.hash_rate_slogan,
      en.companyName ? '' : t.config.companyName,
      t.config.icp,
    ].filter(Boolean);
  });
}

describe('accessibility of the main pages (#23–#28)', () => {
  let h: Harness;
  let token = '';
  /** Every seeded tenant's copy without an English variant (the page's own is read from it too). */
  const allTenantCopy: string[] = [];

  beforeAll(async () => {
    h = await startHarness({}, { llm: true });
    const user = await registerUser(h, 'demo', 'a11y');
    token = user.token;
    await h.container.db.update(users).set({ role: 'operator' }).where(eq(users.phone, user.phone));
    const { tenants } = await import('../../server/src/db/schema/tenant.ts');
    for (const t of await h.container.db.select().from(tenants)) {
      const en = t.settings.en ?? {};
      allTenantCopy.push(...[en.title ? '' : t.title, en.sloganTitle ? '' : t.sloganTitle, en.slogan ? '' : t.slogan, en.companyName ? '' : t.settings.companyName, t.settings.icp].filter(Boolean));
    }
    await h.container.ledger.post({ tenantId: user.tenantId, userId: (await h.container.db.select({ id: users.id }).from(users).where(eq(users.phone, user.phone)))[0]!.id, kind: 'recharge', amount: 1_000_000, ref: 'a11y:1' });
  });
  afterAll(() => h?.close());

  async function contextFor(width: number, lang: Lang, signedIn: boolean): Promise<{ context: BrowserContext; page: Page }> {
    const context = await h.browser.newContext({ viewport: { width, height: 900 }, locale: lang });
    await context.addInitScript(
      ([l, t]) => {
        localStorage.setItem('lang', l);
        if (t) localStorage.setItem('Admin-Token', t);
        else localStorage.removeItem('Admin-Token');
      },
      [lang, signedIn ? token : ''] as const,
    );
    return { context, page: await context.newPage() };
  }

  for (const width of [1280, 390]) {
    for (const lang of ['zh-CN', 'en-US'] as const) {
      // Speed: the four width × language runs are independent (own browser contexts, read-only
      // pages) and run at once, so one's waits for the network to go idle overlap another's work.
      it.concurrent(`${width} px, ${lang}: 0 critical/serious axe violations, one visible h1 and one main, titles set${width === 390 ? ', no sideways scroll' : ''}${lang === 'en-US' ? ', no console-written Chinese' : ''}`, { timeout: 480_000 }, async ({ expect }) => {
        const findings: Finding[] = [];
        const signedIn = await contextFor(width, lang, true);
        const signedOut = await contextFor(width, lang, false);
        try {
          for (const p of PAGES) {
            const { page } = p.signedOut ? signedOut : signedIn;
            await page.goto(h.url(p.host ?? 'demo', p.path));
            await settle(page);
            const add = (problem: string) => findings.push({ page: p.path, lang, width, problem });
            for (const problem of await axeProblems(page)) add(problem);
            const title = await page.title();
            const want = `${lookup(lang, (findRoute(p.path) ?? notFoundRoute).title)} - `;
            if (!title.startsWith(want) || title.length <= want.length) add(`title "${title}" is not "${want}<tenant>"`);
            // #24: one h1 that a reader of this width can see, and one main landmark.
            const { h1s, mains } = await page.evaluate(() => ({
              h1s: [...document.querySelectorAll('h1')].filter((e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden').length,
              mains: document.querySelectorAll('main, [role="main"]').length,
            }));
            if (h1s !== 1) add(`${h1s} visible h1 (want 1)`);
            if (mains !== 1) add(`${mains} main landmarks (want 1)`);
            if (width === 390) {
              const scrollWidth = await page.evaluate(() => document.scrollingElement?.scrollWidth ?? 0);
              if (scrollWidth > 390) add(`page is ${scrollWidth} px wide`);
            }
            if (lang === 'en-US') for (const text of await chineseText(page, [...(await tenantCopy(page)), ...allTenantCopy])) add(`Chinese in English mode: "${text.slice(0, 60)}"`);
          }
        } finally {
          await signedIn.context.close();
          await signedOut.context.close();
        }
        expect(findings.map((f) => `${f.page}: ${f.problem}`)).toEqual([]);
      });
    }
  }
});
