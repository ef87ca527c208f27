import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { screenshotPath, startHarness, type Harness } from './harness.ts';
import { registerUser, signInWithToken } from './fixtures.ts';

/** Recharge through the sandbox cashier: the real order, redirect, signed notify, credit and result page. */
describe('wallet: recharge and income and expense', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h?.close());

  async function openDropdown(page: Page) {
    await page.getByTestId('user-dropdown').hover();
    const panel = page.getByTestId('user-dropdown-panel');
    await panel.waitFor();
    return panel;
  }

  /** From the console's dropdown to the sandbox cashier with a preset amount. */
  async function startRecharge(page: Page, yuan: number) {
    await page.goto(h.url('demo', '/center/home'));
    const panel = await openDropdown(page);
    const recharge = panel.getByRole('button', { name: /充\s*值/ });
    expect(await recharge.isEnabled()).toBe(true);
    await recharge.click();
    await page.waitForURL((u) => u.pathname === '/recharge/index');
    await page.getByTestId('recharge-method-sandbox').click();
    await page.getByTestId(`recharge-preset-${yuan}`).click();
    expect(await page.getByTestId('recharge-payable').textContent()).toBe(`¥${yuan}.00`);
    await page.getByTestId('recharge-submit').click();
    await page.waitForURL((u) => u.pathname.startsWith('/sandbox/cashier/'));
    await page.getByRole('button', { name: '确认支付' }).waitFor();
  }

  async function ledgerRows(page: Page) {
    await page.goto(h.url('demo', '/center/expense/incomeExpend'));
    const table = page.getByTestId('income-expend-table');
    await table.waitFor();
    // wait for the first answer: a row, or the empty state
    await page.locator('[data-testid=income-expend-table] .ant-table-row, [data-testid=income-expend-table] .ant-empty').first().waitFor();
    return table.locator('.ant-table-row');
  }

  it('recharges ¥100 from the dropdown through the sandbox cashier and shows it everywhere', async () => {
    const { token } = await registerUser(h);
    const { context, page } = await h.newPage();
    await signInWithToken(page, h, 'demo', token);
    await startRecharge(page, 100);
    expect(await page.locator('body').textContent()).toContain('¥100.00');
    await page.screenshot({ path: screenshotPath('wallet-cashier-1440') });

    await page.getByRole('button', { name: '确认支付' }).click();
    await page.waitForURL((u) => u.pathname === '/recharge/success');
    // honest: 'confirming' until the signed notification has credited the balance, then success
    const result = page.locator('[data-testid=recharge-result][data-status=paid]');
    await result.waitFor({ timeout: 30_000 });
    expect(await result.textContent()).toContain('充值成功');
    expect(await page.getByTestId('recharge-result-amount').textContent()).toBe('¥100.00');
    await page.screenshot({ path: screenshotPath('wallet-success-1440') });

    await openDropdown(page);
    await expect.poll(() => page.getByTestId('dropdown-balance').textContent(), { timeout: 10_000 }).toBe('¥100.00');
    await page.screenshot({ path: screenshotPath('wallet-dropdown-1440') });
    await page.mouse.move(700, 700);

    await page.getByTestId('recharge-details').click();
    await page.waitForURL((u) => u.pathname === '/center/expense/incomeExpend');
    const rows = page.getByTestId('income-expend-table').locator('.ant-table-row');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(1);
    const row = (await rows.first().textContent()) ?? '';
    expect(row).toContain('充值');
    expect(row).toContain('+¥100.00');
    expect(await page.getByTestId('income-expend-income-total').textContent()).toContain('¥100.00');
    expect(await page.getByTestId('income-expend-expense-total').textContent()).toContain('¥0.00');
    await page.screenshot({ path: screenshotPath('wallet-income-expend-1440') });

    // the expense filter hides the recharge; the income filter shows it
    await page.getByTestId('income-expend-direction').getByText('支出').click();
    await page.getByTestId('income-expend-table').locator('.ant-empty').waitFor();
    await page.getByTestId('income-expend-direction').getByText('收入').click();
    await rows.first().waitFor();

    // CSV export: UTF-8 with a BOM, named by the day
    const download = page.waitForEvent('download');
    await page.getByTestId('income-expend-export').click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/^收支明细-\d{8}\.csv$/);
    const csv = fs.readFileSync((await file.path())!, 'utf8');
    expect(csv.charCodeAt(0)).toBe(0xfeff);
    expect(csv).toContain('充值,收入,100.00,100.00');

    await page.setViewportSize({ width: 1280, height: 800 });
    await page.screenshot({ path: screenshotPath('wallet-income-expend-1280') });
    await page.goto(h.url('demo', '/recharge/index'));
    await page.getByTestId('recharge-balance').waitFor();
    expect(await page.getByTestId('recharge-balance').textContent()).toBe('¥100.00');
    await page.screenshot({ path: screenshotPath('wallet-recharge-1280') });
    await context.close();
  });

  it('a failed and an abandoned payment reach their pages and credit nothing', async () => {
    const { token } = await registerUser(h);
    const { context, page } = await h.newPage({ width: 1280, height: 800 });
    await signInWithToken(page, h, 'demo', token);

    await startRecharge(page, 50);
    await page.getByRole('button', { name: '模拟支付失败' }).click();
    await page.waitForURL((u) => u.pathname === '/recharge/failure');
    const failed = page.locator('[data-testid=recharge-result][data-status=failed]');
    await failed.waitFor({ timeout: 30_000 });
    expect(await failed.textContent()).toContain('支付失败');
    expect(await page.getByTestId('recharge-result-amount').textContent()).toBe('¥50.00');
    await page.screenshot({ path: screenshotPath('wallet-failure-1280') });

    await startRecharge(page, 200);
    await page.getByRole('button', { name: '放弃支付' }).click();
    await page.waitForURL((u) => u.pathname === '/recharge/index');
    await page.getByTestId('recharge-balance').waitFor();
    expect(await page.getByTestId('recharge-balance').textContent()).toBe('¥0.00');

    const panel = await openDropdown(page);
    await panel.getByTestId('dropdown-balance').waitFor();
    expect(await page.getByTestId('dropdown-balance').textContent()).toBe('¥0.00');
    await page.mouse.move(700, 700);
    const rows = await ledgerRows(page);
    await expect.poll(() => page.getByTestId('income-expend-count').textContent()).toContain('0 笔');
    expect(await rows.count()).toBe(0);
    expect(await page.getByTestId('income-expend-income-total').textContent()).toContain('¥0.00');

    // another user's payment id, and none at all, are errors, never a success
    await page.goto(h.url('demo', '/recharge/success?id=00000000-0000-4000-8000-000000000000'));
    await page.locator('[data-testid=recharge-result][data-status=error]').waitFor();
    await page.goto(h.url('demo', '/recharge/success'));
    await page.locator('[data-testid=recharge-result][data-status=error]').waitFor();
    await context.close();
  });
});
