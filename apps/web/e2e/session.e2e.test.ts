import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshotPath, startHarness, type Harness } from './harness.ts';
import { registerUser, signInWithToken } from './fixtures.ts';

describe('session expiry and datahub', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h?.close());

  it('shows the expired-session dialog once, clears the session and lands on /login', async () => {
    const { token, tenantId } = await registerUser(h);
    const { context, page } = await h.newPage();
    await signInWithToken(page, h, 'demo', token);
    await page.goto(h.url('demo', '/center/user/safe'));
    await page.getByTestId('user-dropdown').waitFor();
    // the server forgets the session (e.g. revoked from another device)
    await h.container.accounts.logout(await h.container.accounts.authenticate(tenantId, token));
    // the page's calls (user detail, devices) all fail at once: one dialog, not one per call
    await page.reload();
    const dialog = page.locator('.ant-modal-confirm');
    await dialog.first().waitFor();
    await page.waitForTimeout(500);
    expect(await dialog.count()).toBe(1);
    expect(await dialog.textContent()).toContain('登录状态已过期');
    expect(await page.evaluate(() => localStorage.getItem('Admin-Token'))).toBeNull();
    await dialog.getByRole('button', { name: '重新登录' }).click();
    await page.waitForURL((u) => u.pathname === '/login');
    await context.close();
  });

  it('activates a datahub from the tools menu and reaches 已激活', async () => {
    const { token } = await registerUser(h);
    const { context, page } = await h.newPage();
    await signInWithToken(page, h, 'demo', token);
    await page.goto(h.url('demo', '/center/home'));
    await page.getByTestId('nav-tools').click();
    await page.getByText('北京 A 区').click();
    const dialog = page.getByTestId('datahub-dialog');
    await dialog.waitFor();
    await expect.poll(() => page.getByTestId('datahub-status').textContent()).toContain('待激活');
    await page.getByTestId('datahub-activate').click();
    // the dialog may ask to confirm; accept when it does
    const confirm = page.locator('.ant-popconfirm, .ant-modal-confirm').getByRole('button', { name: /确\s*定|确认|激\s*活/ });
    if (await confirm.count()) await confirm.first().click();
    await expect.poll(() => page.getByTestId('datahub-status').textContent(), { timeout: 20_000 }).toContain('已激活');
    await page.getByText('操作成功').first().waitFor();
    await page.screenshot({ path: screenshotPath('datahub-activated-1440') });
    await context.close();
  });
});
