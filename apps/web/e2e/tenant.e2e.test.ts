import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTS, screenshotPath, startHarness, type Harness } from './harness.ts';

describe('white label: branding and guards per tenant host', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h?.close());

  it('sends / and other home paths to each tenant’s home, branded before the first paint', async () => {
    const { context, page } = await h.newPage();
    const cases = [
      { host: 'demo', home: '/page', title: '算力云' },
      { host: 'starlake', home: '/pagehome', title: '星湖智算' },
      { host: 'partner', home: '/pagehtml', title: '合作伙伴算力专区' },
    ] as const;
    for (const c of cases) {
      await page.goto(h.url(c.host, '/'));
      await page.waitForURL((u) => u.pathname === c.home);
      // #25: "<page> - <tenant>" once the page is drawn
      await page.waitForFunction((want) => document.title === want, `首页 - ${c.title}`);
      for (const other of ['/page', '/pagehome', '/pagehtml']) {
        await page.goto(h.url(c.host, other));
        await page.waitForURL((u) => u.pathname === c.home);
      }
    }
    // the title is in the served HTML itself, so even the first paint shows the brand
    const html = (await h.app.inject({ url: '/pagehome', headers: { host: HOSTS.starlake } })).body;
    expect(html).toContain('<title>星湖智算</title>');
    await page.goto(h.url('demo', '/page'));
    await page.getByTestId('promo-banner').waitFor();
    await page.screenshot({ path: screenshotPath('home-demo-1440'), fullPage: false });
    await context.close();
  });

  it('sends signed-out visitors of console pages to /login, keeping where they were going', async () => {
    const { context, page } = await h.newPage();
    await page.goto(h.url('demo', '/center/user/safe'));
    await page.waitForURL((u) => u.pathname === '/login');
    expect(new URL(page.url()).searchParams.get('redirect')).toBe('/center/user/safe');
    await context.close();
  });

  it('hides help on a restricted tenant and sends its help route to /contact', async () => {
    const { context, page } = await h.newPage();
    // a signed-in visitor, so the auth guard doesn't hide the effect
    await page.goto(h.url('partner', '/pagehtml'));
    await page.evaluate(() => localStorage.setItem('Admin-Token', 'not-checked-by-the-guard'));
    await page.goto(h.url('partner', '/help'));
    await page.waitForURL((u) => u.pathname === '/contact');
    await page.goto(h.url('partner', '/pagehtml'));
    await page.getByTestId('nav-menu').waitFor();
    expect(await page.getByTestId('nav-menu').getByText('帮助中心').count()).toBe(0);
    // the same check on a normal tenant finds the entry
    await page.goto(h.url('demo', '/page'));
    await page.getByTestId('nav-menu').waitFor();
    expect(await page.getByTestId('nav-menu').getByText('帮助中心').count()).toBe(1);
    await context.close();
  });
});
