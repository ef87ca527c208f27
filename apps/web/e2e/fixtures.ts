import type { Locator, Page } from 'playwright-core';
import { eq } from 'drizzle-orm';
import { tenants } from '../../server/src/db/schema/tenant.ts';
import type { Harness, HOSTS } from './harness.ts';

let seq = 0;
export const freshPhone = () => `135${String(process.pid % 1e4).padStart(4, '0')}${String(seq++).padStart(4, '0')}`;
export const PASSWORD = 'E2ePassw0rd';

/** A user registered through the real account service (codes from the console SMS inbox). */
export async function registerUser(h: Harness, tenantCode: keyof typeof HOSTS = 'demo', userName = '测试用户') {
  const [tenant] = await h.container.db.select({ id: tenants.id }).from(tenants).where(eq(tenants.code, tenantCode));
  if (!tenant) throw new Error(`no tenant ${tenantCode}`);
  const phone = freshPhone();
  await h.container.accounts.sendCode(tenant.id, { phone, purpose: 'register' });
  const code = lastCode(h, phone);
  const { token } = await h.container.accounts.register(tenant.id, { phone, code, password: PASSWORD, userName }, { ip: '127.0.0.1', userAgent: 'e2e' });
  return { phone, token, tenantId: tenant.id };
}

export function lastCode(h: Harness, phone: string): string {
  const hit = h.container.smsInbox?.().find((m) => m.phone === phone);
  if (!hit) throw new Error(`no SMS code for ${phone}`);
  return hit.code;
}

/** Puts a session token where the web app keeps it (SPEC §3: Admin-Token). */
export async function signInWithToken(page: Page, h: Harness, host: keyof typeof HOSTS, token: string) {
  await page.goto(h.url(host, '/login'));
  await page.evaluate((t) => localStorage.setItem('Admin-Token', t), token);
}

/** ¥100 through the sandbox cashier, as a user does it (wallet.e2e covers the details). */
export async function rechargeBySandbox(page: Page, h: Harness): Promise<void> {
  await page.goto(h.url('demo', '/recharge/index'));
  await page.getByTestId('recharge-method-sandbox').click();
  await page.getByTestId('recharge-preset-100').click();
  await page.getByTestId('recharge-submit').click();
  await page.waitForURL((u) => u.pathname.startsWith('/sandbox/cashier/'));
  await page.getByRole('button', { name: '确认支付' }).click();
  await page.locator('[data-testid=recharge-result][data-status=paid]').waitFor({ timeout: 30_000 });
}

/**
 * Opens a row's 更多 dropdown and picks an item until `opened` (what the item shows) is there.
 * A click that lands while the dropdown is still moving into place, or while the list re-renders
 * under it, can be lost on a loaded machine; the user would simply click again, and so does this.
 */
export async function openRowMenuItem(page: Page, row: Locator, item: string, opened: Locator, timeout = 60_000): Promise<void> {
  const until = Date.now() + timeout;
  for (;;) {
    if (await opened.isVisible()) return;
    const menuItem = page.getByRole('menuitem', { name: item });
    if (!(await menuItem.isVisible())) await row.getByTestId('instance-more').click();
    await menuItem.click({ timeout: 5_000 }).catch(() => {});
    if (await opened.waitFor({ timeout: 5_000 }).then(() => true, () => false)) return;
    if (Date.now() > until) throw new Error(`the row's menu item ${item} did not open what it should within ${timeout} ms`);
  }
}
