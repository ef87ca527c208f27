import type { BrowserContext, Locator, Page } from 'playwright-core';
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

/** ¥100 (or `yuan`) through the sandbox cashier, as a user does it (wallet.e2e covers the details). */
export async function rechargeBySandbox(page: Page, h: Harness, yuan = 100): Promise<void> {
  await page.goto(h.url('demo', '/recharge/index'));
  await page.getByTestId('recharge-method-sandbox').click();
  if (yuan === 100) await page.getByTestId('recharge-preset-100').click();
  else {
    const custom = page.getByTestId('recharge-custom');
    await (((await custom.evaluate((e) => e.tagName)) === 'INPUT' ? custom : custom.locator('input')).fill(String(yuan)));
  }
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

/** The text of a web shell's terminal rows (xterm's DOM renderer), one string per row. */
export async function terminalRows(shell: Page): Promise<string[]> {
  const rows = await shell.locator('[data-testid=shell-terminal] .xterm-rows > div').allTextContents();
  return rows.map((r) => r.replace(/\u00a0/g, ' ').trimEnd());
}

/**
 * Opens the web shell of a running instance's row in a new tab, runs `command`, and waits until a
 * terminal row matches `expect`; returns the rows. The tab is closed afterwards.
 */
export async function runInShell(context: BrowserContext, row: Locator, command: string, expect: RegExp, timeout = 20_000): Promise<string[]> {
  const opened = context.waitForEvent('page');
  await row.getByTestId('instance-shell').click();
  const shell = await opened;
  try {
    await shell.locator('[data-testid=shell-state][data-state=open]').waitFor({ timeout: 30_000 });
    await shell.getByTestId('shell-terminal').click();
    await shell.keyboard.type(command);
    await shell.keyboard.press('Enter');
    const until = Date.now() + timeout;
    for (;;) {
      const rows = await terminalRows(shell);
      if (rows.some((r) => expect.test(r))) return rows;
      if (Date.now() > until) throw new Error(`no terminal row matched ${expect} after ${command}:\n${rows.filter(Boolean).join('\n')}`);
      await shell.waitForTimeout(250);
    }
  } finally {
    await shell.close();
  }
}

/**
 * Rents a pay-as-you-go instance named `name` from the market's first rentable machine, as a user
 * does (compute.e2e covers each step), optionally with `imageId` chosen; returns its row once running.
 */
export async function rentFromMarket(page: Page, h: Harness, name: string, opts: { imageId?: number; onMarket?: boolean } = {}): Promise<{ row: Locator; instanceId: string }> {
  if (!opts.onMarket) await page.goto(h.url('demo', '/market/index'));
  const machine = page.locator('[data-testid=market-machine][data-rentable=true]').first();
  await machine.waitFor();
  await machine.getByTestId('market-rent').click();
  await page.waitForURL((u) => u.pathname === '/market/create');
  await page.getByTestId('create-name').fill(name);
  // An image chosen before (?imageId=, "use this image") arrives preselected.
  if (opts.imageId !== undefined) await page.locator(`[data-testid=create-image-${opts.imageId}] input`).or(page.locator(`input[data-testid=create-image-${opts.imageId}]`)).first().waitFor({ state: 'attached' });
  if (opts.imageId !== undefined && !(await page.locator(`[data-testid=create-image-${opts.imageId}] input, input[data-testid=create-image-${opts.imageId}]`).first().isChecked())) {
    throw new Error(`image ${opts.imageId} is not preselected on the create page`);
  }
  await page.getByTestId('create-hourly').waitFor();
  await page.getByTestId('create-submit').click();
  await page.waitForURL((u) => u.pathname === '/market/orderdetail');
  await page.getByTestId('check-pay').click();
  await page.waitForURL((u) => u.pathname === '/center/control/index');
  const row = page.getByTestId('instances-table').locator('tr.ant-table-row', { hasText: name });
  await row.locator('[data-testid=instance-status][data-status=running]').waitFor({ timeout: 60_000 });
  const instanceId = ((await row.getByTestId('instance-id').textContent()) ?? '').trim();
  return { row, instanceId };
}
