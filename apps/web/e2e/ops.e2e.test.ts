import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { screenshotPath, startHarness, type Harness } from './harness.ts';
import { openRowMenuItem, rechargeBySandbox, registerUser, rentFromMarket, runInShell, signInWithToken } from './fixtures.ts';

/**
 * Issue #10 acceptance in Chromium, on the real `local` driver: contracts both ways with the refund
 * in 收支明细, renewal, a data disk grown and seen with `df -h` inside, an image saved with a file,
 * shared, used from the community by another user, and a clone — both finding the file.
 */
describe('instance operations: contracts, renewal, data disk, images, clone', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h?.close());

  const money = (s: string | null) => Number((s ?? '').replace(/[^\d.]/g, ''));

  async function powerOff(page: Page, row: Locator) {
    await row.getByTestId('instance-power-off').click();
    await page.getByRole('dialog').getByRole('button', { name: /关\s*机/ }).click();
    await row.locator('[data-testid=instance-status][data-status=stopped]').waitFor({ timeout: 60_000 });
  }

  it('converts a running pay-as-you-go instance to monthly, renews it, converts it back with the refund in 收支明细, and grows its data disk', { timeout: 360_000 }, async () => {
    const { token } = await registerUser(h);
    const { context, page } = await h.newPage({ width: 1440, height: 900 });
    try {
      await signInWithToken(page, h, 'demo', token);
      await rechargeBySandbox(page, h, 5000);
      const { row } = await rentFromMarket(page, h, 'ops-box');

      // 转包周期: a month from now, priced, paid on the change's check page.
      await openRowMenuItem(page, row, '转包周期', page.getByTestId('change-contract-page'));
      await page.getByTestId('change-contract-total').waitFor();
      expect(await page.getByTestId('change-contract-total').textContent()).toMatch(/^¥[\d,]+\.\d{2}/);
      await page.screenshot({ path: screenshotPath('ops-change-contract-1440') });
      await page.getByTestId('change-contract-submit').click();
      await page.waitForURL((u) => u.pathname === '/center/control/changeOrderdetail');
      await page.getByTestId('change-check-balance').waitFor();
      await page.screenshot({ path: screenshotPath('ops-change-check-1440') });
      await page.getByTestId('change-check-pay').click();
      await page.waitForURL((u) => u.pathname === '/center/control/index');
      await row.getByTestId('instance-expires-at').waitFor();
      const firstExpiry = await row.getByTestId('instance-expires-at').textContent();

      // 续费: another month on top.
      await openRowMenuItem(page, row, '续费', page.getByTestId('renewal-page'));
      await page.getByTestId('renewal-total').waitFor();
      await page.getByTestId('renewal-submit').click();
      await page.waitForURL((u) => u.pathname === '/center/control/changeOrderdetail');
      await page.getByTestId('change-check-pay').click();
      await page.waitForURL((u) => u.pathname === '/center/control/index');
      await expect.poll(async () => row.getByTestId('instance-expires-at').textContent(), { timeout: 15_000 }).not.toBe(firstExpiry);

      // 转按量: the refund of the unused time, shown before confirming, then in 收支明细.
      await openRowMenuItem(page, row, '转按量', page.getByTestId('change-contract-preview-page'));
      await page.getByTestId('payg-preview-refund').waitFor();
      const refund = money(await page.getByTestId('payg-preview-refund').textContent());
      expect(refund).toBeGreaterThan(0);
      await page.screenshot({ path: screenshotPath('ops-to-payg-1440') });
      await page.getByTestId('payg-confirm').click();
      await page.getByTestId('payg-confirm-ok').click();
      await page.getByTestId('payg-refunded').waitFor({ timeout: 30_000 });
      await page.getByTestId('payg-to-income').click();
      await page.waitForURL((u) => u.pathname === '/center/expense/incomeExpend');
      const refundRow = page.getByTestId('income-expend-table').locator('tr.ant-table-row', { hasText: '退款' }).first();
      await refundRow.waitFor({ timeout: 30_000 });
      const credited = money(await refundRow.getByTestId('income-expend-amount').textContent());
      // The list shows yuan to the cent; the preview may show four decimals.
      expect(Math.abs(credited - refund)).toBeLessThan(0.01 + 1e-9);
      await page.screenshot({ path: screenshotPath('ops-refund-income-1440') });

      // 扩缩容数据盘: 50 → 60 GB while it runs, then `df -h` inside shows it.
      await page.goto(h.url('demo', '/center/control/index'));
      await row.locator('[data-testid=instance-status][data-status=running]').waitFor({ timeout: 30_000 });
      await openRowMenuItem(page, row, '扩缩容数据盘', page.getByTestId('expand-disk'));
      const size = page.getByTestId('expand-disk-input');
      const input = (await size.evaluate((e) => e.tagName)) === 'INPUT' ? size : size.locator('input');
      await input.fill('60');
      await input.blur();
      await page.getByTestId('expand-disk-submit').waitFor();
      await page.screenshot({ path: screenshotPath('ops-expand-disk-1440') });
      await page.getByTestId('expand-disk-submit').click();
      const confirm = page.getByTestId('expand-confirm-ok');
      if (await confirm.waitFor({ timeout: 5_000 }).then(() => true, () => false)) await confirm.click();
      await page.waitForURL((u) => u.pathname === '/center/control/index' || u.pathname === '/center/control/changeOrderdetail', { timeout: 30_000 });
      await row.locator('[data-testid=instance-status][data-status=running]').waitFor({ timeout: 60_000 });
      // A host that withholds CAP_SYS_RESOURCE (this one) can't grow a mounted ext4: the row then
      // says the size applies at the next start. Restart it either way, then look inside.
      await powerOff(page, row);
      await row.getByTestId('instance-power-on').click();
      await row.locator('[data-testid=instance-status][data-status=running]').waitFor({ timeout: 60_000 });
      await page.screenshot({ path: screenshotPath('ops-disk-grown-1440') });
      const df = await runInShell(context, row, 'df -h /root/data | tail -n 1', /\/root\/data$/);
      expect(df.some((r) => /\s(59|60)G\s.*\/root\/data$/.test(r)), df.filter(Boolean).join('\n')).toBe(true);
      // /center/system: the grown disk's usage.
      await page.goto(h.url('demo', '/center/system'));
      await page.getByTestId('system-disk-table').locator('tr.ant-table-row').first().waitFor({ timeout: 30_000 });
      await page.screenshot({ path: screenshotPath('ops-system-disk-1440') });
    } finally {
      await context.close();
    }
  });

  it('saves an image with a file, shares it; a clone and another user’s instance from the community both find the file', { timeout: 420_000 }, async () => {
    const owner = await registerUser(h);
    const { context, page } = await h.newPage({ width: 1440, height: 900 });
    try {
      await signInWithToken(page, h, 'demo', owner.token);
      await rechargeBySandbox(page, h);
      const { row } = await rentFromMarket(page, h, 'img-src');
      // A file on the system disk (goes into the image) and one on the data disk (goes into a clone).
      await runInShell(context, row, 'echo suanli-marker > /root/marker.txt && echo data-marker > /root/data/d.txt && sync && echo written-$((6*7))', /^written-42$/);
      await powerOff(page, row);

      // 保存镜像: a private image of the system disk, with progress.
      await openRowMenuItem(page, row, '保存镜像', page.locator('#snapshot-name'));
      await page.locator('#snapshot-name').fill('e2e镜像');
      await page.getByTestId('snapshot-submit').click();
      await page.getByTestId('snapshot-done').waitFor({ timeout: 180_000 });
      await page.screenshot({ path: screenshotPath('ops-snapshot-done-1440') });
      await page.getByTestId('snapshot-close').click();

      // 我的镜像: share it to the community.
      await page.goto(h.url('demo', '/center/image/index'));
      const imageRow = page.locator('[data-testid=image-row]', { hasText: 'e2e镜像' });
      await imageRow.locator('[data-testid=image-status][data-status=ready]').waitFor({ timeout: 30_000 });
      const imageId = Number(await imageRow.getAttribute('data-image-id'));
      await imageRow.getByTestId('image-share').click();
      await page.getByTestId('image-share-ok').click();
      await imageRow.locator('[data-testid=image-shared][data-shared=true]').waitFor({ timeout: 30_000 });
      await page.screenshot({ path: screenshotPath('ops-my-images-1440') });

      // 克隆实例: a new instance with both disks copied, on a chosen machine.
      await page.goto(h.url('demo', '/center/control/index'));
      await row.locator('[data-testid=instance-status][data-status=stopped]').waitFor({ timeout: 30_000 });
      await openRowMenuItem(page, row, '克隆实例', page.getByTestId('clone-page'));
      await page.getByTestId('clone-form').waitFor();
      await page.locator('#clone-machine').click();
      await page.locator('.ant-select-item-option').first().click();
      await page.locator('#clone-name').fill('img-clone');
      await page.getByTestId('clone-total').waitFor();
      await page.screenshot({ path: screenshotPath('ops-clone-1440') });
      await page.getByTestId('clone-submit').click();
      await page.waitForURL((u) => u.pathname === '/market/orderdetail');
      await page.getByTestId('check-pay').click();
      await page.waitForURL((u) => u.pathname === '/center/control/index');
      const clone = page.getByTestId('instances-table').locator('tr.ant-table-row', { hasText: 'img-clone' });
      await clone.locator('[data-testid=instance-status][data-status=running]').waitFor({ timeout: 120_000 });
      const inClone = await runInShell(context, clone, 'cat /root/marker.txt /root/data/d.txt', /^data-marker$/);
      expect(inClone).toContain('suanli-marker');

      // Another user of the tenant: the community, 使用此镜像, the create page with it chosen.
      const other = await registerUser(h);
      const second = await h.newPage({ width: 1440, height: 900 });
      try {
        await signInWithToken(second.page, h, 'demo', other.token);
        await rechargeBySandbox(second.page, h);
        await second.page.goto(h.url('demo', '/images/index'));
        const card = second.page.locator(`[data-testid=community-card][data-image-id="${imageId}"]`);
        await card.waitFor({ timeout: 30_000 });
        await second.page.screenshot({ path: screenshotPath('ops-community-1440') });
        await card.getByTestId('community-name').click();
        await second.page.getByTestId('community-use').click();
        await second.page.waitForURL((u) => u.pathname === '/market/index' && u.searchParams.get('imageId') === String(imageId));
        const fromImage = await rentFromMarket(second.page, h, 'from-community', { imageId, onMarket: true });
        const rows = await runInShell(second.context, fromImage.row, 'cat /root/marker.txt; test -e /root/data/d.txt || echo no-data-file', /^no-data-file$/);
        expect(rows).toContain('suanli-marker');
        await second.page.goto(h.url('demo', `/images/detail?id=${imageId}`));
        await expect.poll(async () => second.page.getByTestId('community-uses').textContent(), { timeout: 15_000 }).toBe('1');
      } finally {
        await second.context.close();
      }
    } finally {
      await context.close();
    }
  });
});
