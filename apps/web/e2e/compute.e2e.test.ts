import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { screenshotPath, startHarness, type Harness } from './harness.ts';
import { registerUser, signInWithToken, rechargeBySandbox, openRowMenuItem } from './fixtures.ts';

/**
 * Issue #8 acceptance in Chromium: recharge, rent pay-as-you-go from the market, see it running,
 * open the web shell and run a command, stop it, see the bill, release it. Runs on the real
 * `local` compute driver (root, bubblewrap): nothing here is faked.
 */
describe('compute: rent, shell, stop, bill, release', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h?.close());


  /** The text of the terminal's rows (xterm's DOM renderer), one string per row. */
  async function terminalRows(shell: Page): Promise<string[]> {
    const rows = await shell.locator('[data-testid=shell-terminal] .xterm-rows > div').allTextContents();
    return rows.map((r) => r.replace(/\u00a0/g, ' ').trimEnd());
  }

  it('from the market to a running instance, its web shell, its bill and its release', { timeout: 360_000 }, async () => {
    const { token } = await registerUser(h);
    const { context, page } = await h.newPage({ width: 1440, height: 900 });
    let shell: Page | undefined;
    try {
      await signInWithToken(page, h, 'demo', token);
      await rechargeBySandbox(page, h);

      // The market: a rentable machine's 租用 goes to the create page with its id.
      await page.goto(h.url('demo', '/market/index'));
      const machine = page.locator('[data-testid=market-machine][data-rentable=true]').first();
      await machine.waitFor();
      await page.screenshot({ path: screenshotPath('compute-market-1440') });
      const machineId = await machine.getAttribute('data-machine-id');
      await machine.getByTestId('market-rent').click();
      await page.waitForURL((u) => u.pathname === '/market/create' && u.searchParams.get('machineId') === machineId);

      // Pay-as-you-go (the default), one GPU, the first ready image; the price comes from the server.
      await page.getByTestId('create-name').fill('e2e-box');
      await page.getByTestId('create-hourly').waitFor();
      expect(await page.getByTestId('create-hourly').textContent()).toMatch(/^¥\d+\.\d{2,4}/);
      await page.screenshot({ path: screenshotPath('compute-create-1440') });
      await page.getByTestId('create-submit').click();
      await page.waitForURL((u) => u.pathname === '/market/orderdetail' && /^\d{8,32}$/.test(u.searchParams.get('id') ?? ''));

      // Check order: lines, countdown, the balance is enough, pay.
      await page.getByTestId('order-lines').waitFor();
      await page.getByTestId('check-countdown').waitFor();
      expect(await page.getByTestId('check-balance').textContent()).toBe('¥100.00');
      expect(await page.getByTestId('check-short').count()).toBe(0);
      await page.screenshot({ path: screenshotPath('compute-check-1440') });
      await page.getByTestId('check-pay').click();
      await page.waitForURL((u) => u.pathname === '/center/control/index');

      // Running within seconds, with live status (the page polls while it is creating).
      const row = page.getByTestId('instances-table').locator('tr.ant-table-row', { hasText: 'e2e-box' });
      await row.locator('[data-testid=instance-status][data-status=running]').waitFor({ timeout: 60_000 });
      const instanceId = ((await row.getByTestId('instance-id').textContent()) ?? '').trim();
      expect(instanceId).toMatch(/^i-[a-z0-9]{10}$/);
      expect(await row.getByTestId('instance-ssh-command').textContent()).toContain(instanceId);
      await page.screenshot({ path: screenshotPath('compute-instances-1440') });

      // The web shell in a new tab: run the command and read its output.
      const opened = context.waitForEvent('page');
      await row.getByTestId('instance-shell').click();
      shell = await opened;
      await shell.waitForURL((u) => u.pathname === '/shell' && u.searchParams.get('instanceId') === instanceId);
      await shell.locator('[data-testid=shell-state][data-state=open]').waitFor({ timeout: 30_000 });
      await shell.getByTestId('shell-terminal').click();
      await shell.keyboard.type('echo hello && hostname && df -h /root/data');
      await shell.keyboard.press('Enter');
      await expect.poll(async () => (await terminalRows(shell!)).some((r) => r.trim() === 'hello'), { timeout: 20_000 }).toBe(true);
      const rows = await terminalRows(shell);
      const hello = rows.findIndex((r) => r.trim() === 'hello');
      expect(rows[hello + 1]?.trim()).toBe(instanceId);
      await expect.poll(async () => (await terminalRows(shell!)).some((r) => /\s\/root\/data$/.test(r)), { timeout: 10_000 }).toBe(true);
      await shell.screenshot({ path: screenshotPath('compute-shell-1440') });

      // Stop it (confirmed); the shell says the instance stopped.
      await page.bringToFront();
      await row.getByTestId('instance-power-off').click();
      await page.getByRole('dialog').getByRole('button', { name: /关\s*机/ }).click();
      await row.locator('[data-testid=instance-status][data-status=stopped]').waitFor({ timeout: 60_000 });
      await shell.getByTestId('shell-ended').waitFor({ timeout: 20_000 });
      expect(await shell.getByTestId('shell-ended').getAttribute('data-reason')).toMatch(/^(exited|notRunning|closed)$/);
      await shell.screenshot({ path: screenshotPath('compute-shell-stopped-1440') });
      await shell.close();
      shell = undefined;

      // The bill of the time it ran.
      await page.goto(h.url('demo', '/center/expense/check'));
      const bill = page.getByTestId('bills-table').locator('tr.ant-table-row', { hasText: instanceId });
      await expect
        .poll(
          async () => {
            if ((await bill.count()) > 0) return true;
            await page.reload();
            await page.locator('[data-testid=bills-table] .ant-table-row, [data-testid=bills-empty]').first().waitFor();
            return (await bill.count()) > 0;
          },
          { timeout: 120_000, interval: 3_000 },
        )
        .toBe(true);
      expect(await bill.first().getByTestId('bill-amount').textContent()).toMatch(/^¥\d+\.\d{2,4}$/);
      expect(await page.getByTestId('bills-total').textContent()).toMatch(/¥\d+\.\d{2,4}/);
      await page.screenshot({ path: screenshotPath('compute-bills-1440') });

      // Release: only once its name is typed.
      await page.goto(h.url('demo', '/center/control/index'));
      await row.locator('[data-testid=instance-status][data-status=stopped]').waitFor({ timeout: 30_000 });
      const ok = page.getByTestId('release-ok');
      await openRowMenuItem(page, row, '释放', ok);
      expect(await ok.isDisabled()).toBe(true);
      await page.getByTestId('release-name').fill('e2e-box');
      await ok.click();
      await expect.poll(async () => row.count(), { timeout: 60_000 }).toBe(0);
      await page.getByTestId('instances-empty').waitFor({ timeout: 30_000 });
    } finally {
      await shell?.close().catch(() => {});
      await (context as BrowserContext).close();
    }
  });
});
