import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { eq } from 'drizzle-orm';
import { captchaChallenges } from '../../server/src/db/schema/captcha.ts';
import { screenshotPath, startHarness, type Harness } from './harness.ts';
import { freshPhone, lastCode, PASSWORD } from './fixtures.ts';

/** Sign-up and sign-in through the UI, with captchas on as `npm start` runs them. */
describe('accounts through the UI', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ CAPTCHA: 'on' });
  });
  afterAll(() => h?.close());

  /** Solves the slide captcha the page shows by dragging its slider to where the server hid the piece. */
  async function solveSlideCaptcha(page: Page, challengeKey: string) {
    const [row] = await h.container.db.select({ answer: captchaChallenges.answer }).from(captchaChallenges).where(eq(captchaChallenges.id, challengeKey));
    const secret = row?.answer as { type: string; x: number } | undefined;
    if (secret?.type !== 'slide') throw new Error(`expected a slide challenge, got ${secret?.type}`);
    const handle = page.getByTestId('captcha-slider');
    await page.getByTestId('captcha-piece').waitFor();
    const box = await handle.boundingBox();
    const track = await handle.evaluate((el) => el.parentElement!.getBoundingClientRect().width);
    const { width, thumbWidth, thumbX } = await page.evaluate(() => (window as unknown as { __lastCaptcha: { width: number; thumbWidth: number; thumbX: number } }).__lastCaptcha);
    if (!box) throw new Error('slider not visible');
    const span = track - box.width;
    // The piece starts at thumbX and the slider spans the whole row: left or right, as far as the hole.
    const ratio = (secret.x - thumbX) / (width - thumbWidth);
    const startX = box.x + box.width / 2;
    const y = box.y + box.height / 2;
    await page.mouse.move(startX, y);
    await page.mouse.down();
    // Like a hand: quick in the middle, slow at the end (the server refuses an even, instant drag).
    const ease = (p: number) => p * p * (3 - 2 * p);
    for (let i = 1; i <= 12; i++) {
      await page.mouse.move(startX + ratio * span * ease(i / 12), y + (i % 2));
      await page.waitForTimeout(35);
    }
    await page.mouse.up();
  }

  it('signs up with a real captcha and SMS code, then sees name, ID and ¥0.00 in the dropdown', async () => {
    const { context, page } = await h.newPage();
    const phone = freshPhone();
    await page.goto(h.url('demo', '/register'));
    await page.getByTestId('register-phone').fill(phone);
    const challenge = page.waitForResponse((r) => r.url().includes('/user/captcha/slide'));
    await page.getByTestId('register-send-code').click();
    const body = (await (await challenge).json()) as { data: { key: string; width: number; thumbWidth: number; thumbX: number } };
    await page.evaluate((d) => ((window as unknown as { __lastCaptcha: unknown }).__lastCaptcha = d), body.data);
    await page.getByTestId('captcha-modal').waitFor();
    await page.screenshot({ path: screenshotPath('register-captcha-1440') });
    await solveSlideCaptcha(page, body.data.key);
    await expect.poll(() => h.container.smsInbox?.().some((m) => m.phone === phone), { timeout: 15_000 }).toBe(true);
    await page.getByTestId('register-code').fill(lastCode(h, phone));
    await page.getByTestId('register-password').fill(PASSWORD);
    await page.getByTestId('register-confirm').fill(PASSWORD);
    await page.getByTestId('register-agree').check();
    await page.screenshot({ path: screenshotPath('register-filled-1440') });
    await page.getByTestId('register-submit').click();
    await page.waitForURL((u) => u.pathname === '/center/home');

    await page.getByTestId('user-dropdown').hover();
    const panel = page.getByTestId('user-dropdown-panel');
    await panel.waitFor();
    expect(await page.getByTestId('dropdown-username').textContent()).toBe(`用户${phone.slice(-4)}`); // a default from the locale: the server stores no name;
    expect(await page.getByTestId('dropdown-balance').textContent()).toBe('¥0.00');
    expect(await page.getByTestId('dropdown-frozen').textContent()).toBe('¥0.00');
    const user = await h.container.db.query.users.findFirst({ where: (u, { eq: eqq }) => eqq(u.phone, phone) });
    expect(await page.getByTestId('dropdown-uuid').textContent()).toContain(user!.uuid);
    await page.screenshot({ path: screenshotPath('center-home-dropdown-1440') });

    // sign out, then back in with the password
    await page.getByTestId('logout').click();
    await page.locator('.ant-popconfirm').getByRole('button', { name: /确\s*定/ }).click();
    await page.waitForURL((u) => u.pathname === '/login');
    expect(await page.evaluate(() => localStorage.getItem('Admin-Token'))).toBeNull();
    await page.getByTestId('login-phone').fill(phone);
    await page.getByTestId('login-password').fill(PASSWORD);
    await page.getByTestId('login-submit').click();
    await page.waitForURL((u) => u.pathname === '/center/home');
    await context.close();
  });

  it('shows the server’s reason when the password is wrong', async () => {
    const { context, page } = await h.newPage({ width: 1280 });
    await page.goto(h.url('demo', '/login'));
    await page.getByTestId('login-phone').fill(freshPhone());
    await page.getByTestId('login-password').fill('Wrong12345');
    await page.getByTestId('login-submit').click();
    await page.getByText('手机号或密码错误').first().waitFor();
    await page.screenshot({ path: screenshotPath('login-error-1280') });
    expect(new URL(page.url()).pathname).toBe('/login');
    await context.close();
  });
});
