import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { formatMoney } from '@suanli/domain/format';
import { screenshotPath, startHarness, type Harness } from './harness.ts';
import { registerUser, signInWithToken, rechargeBySandbox } from './fixtures.ts';

/**
 * Issue #9 acceptance in Chromium, on the embedded model (LLM_MODEL_PATH: the bundled
 * SmolLM2-135M-Instruct, model id smollm2-135m-instruct): from the model square into the text chat,
 * an answer streamed in, another stopped mid-way, tokens and cost on each reply and the balance
 * they took; then an API key, a call through the OpenAI-compatible gateway with it, and that call
 * on the usage page.
 */
const MODEL = 'smollm2-135m-instruct';

/** '¥1.2345' / '-¥0.50' → units (the inverse of formatMoney). */
function units(text: string | null): number {
  const m = /^(-?)¥(\d+)\.(\d{2,4})$/.exec((text ?? '').trim());
  if (!m) throw new Error(`not a money figure: ${JSON.stringify(text)}`);
  return (m[1] ? -1 : 1) * (Number(m[2]) * 10_000 + Number(m[3]!.padEnd(4, '0')));
}

describe('large models: square, streamed chat, API key, gateway, usage', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({}, { llm: true });
  });
  afterAll(() => h?.close());


  /** Sends a message with Enter (Shift+Enter would add a line). */
  async function ask(page: Page, text: string) {
    const input = page.getByTestId('chat-input');
    await input.fill(text);
    await input.press('Enter');
  }

  /** The text of the answer being streamed. */
  const liveText = async (page: Page) => ((await page.getByTestId('msg-live').getByTestId('msg-text').textContent()) ?? '').trim();

  /** Waits until the answer being streamed has grown at least twice while the stop button shows. */
  async function seeItStream(page: Page): Promise<void> {
    await page.getByTestId('chat-stop').waitFor({ timeout: 30_000 });
    let first = '';
    await expect.poll(async () => (first = await liveText(page)).length, { timeout: 60_000, interval: 50 }).toBeGreaterThan(0);
    // The text grew since, seen while the stop button still shows (the answer is still coming).
    await expect
      .poll(
        async () => {
          const length = (await liveText(page)).length;
          return (await page.getByTestId('chat-stop').isVisible()) ? length : -1;
        },
        { timeout: 30_000, interval: 50 },
      )
      .toBeGreaterThan(first.length);
  }

  async function replyFigures(reply: Locator) {
    const tokens = (await reply.getByTestId('msg-tokens').textContent()) ?? '';
    const [inTokens, outTokens] = (tokens.match(/\d[\d,]*/g) ?? []).map((n) => Number(n.replace(/,/g, '')));
    return { inTokens: inTokens ?? 0, outTokens: outTokens ?? 0, cost: units(await reply.getByTestId('msg-cost').textContent()) };
  }

  it('chats with the embedded model, stops an answer, pays for both, and calls it with an API key', { timeout: 360_000 }, async () => {
    const { token } = await registerUser(h);
    const { context, page } = await h.newPage({ width: 1440, height: 900 });
    try {
      await signInWithToken(page, h, 'demo', token);
      await rechargeBySandbox(page, h);

      // The model square lists the embedded model with its prices; 对话 opens the chat with it.
      await page.goto(h.url('demo', '/largeModel/modelSquare'));
      const card = page.locator(`[data-testid=model-card][data-model-id="${MODEL}"]`);
      await card.waitFor({ timeout: 30_000 });
      expect(await card.getByTestId('model-input-price').textContent()).toMatch(/^¥\d+\.\d{2,4} /);
      expect(await card.getByTestId('model-output-price').textContent()).toMatch(/^¥\d+\.\d{2,4} /);
      await page.screenshot({ path: screenshotPath('llm-square-1440') });
      await card.getByTestId('model-chat').click();
      await page.waitForURL((u) => u.pathname === '/largeModel/textChat' && u.searchParams.get('model') === MODEL);
      await expect.poll(() => page.getByTestId('chat-balance').textContent(), { timeout: 10_000 }).toBe('¥100.00');

      // A first question: the answer streams in token by token, then shows its tokens and cost.
      await ask(page, 'Tell me about the sea in three paragraphs.');
      await seeItStream(page);
      await page.screenshot({ path: screenshotPath('llm-chat-streaming-1440') });
      const first = page.locator('[data-testid=msg-assistant]').first();
      await first.getByTestId('msg-cost').waitFor({ timeout: 120_000 });
      expect(['done', 'length']).toContain(await first.getAttribute('data-status'));
      const a = await replyFigures(first);
      expect(a.inTokens).toBeGreaterThan(0);
      expect(a.outTokens).toBeGreaterThan(0);
      // The embedded model is priced (a reply that cost nothing could not show the balance move).
      expect(a.cost).toBeGreaterThan(0);
      expect((await first.getByTestId('msg-text').textContent())?.trim().length).toBeGreaterThan(0);

      // A second one, stopped while it streams: saved as stopped and charged for what came.
      await ask(page, 'Count slowly from one to five hundred, writing every number as a word.');
      await seeItStream(page);
      await page.getByTestId('chat-stop').click();
      const stopped = page.locator('[data-testid=msg-assistant][data-status=stopped]');
      await stopped.getByTestId('msg-cost').waitFor({ timeout: 30_000 });
      const b = await replyFigures(stopped);
      expect(b.outTokens).toBeGreaterThan(0);
      expect(b.cost).toBeGreaterThan(0);
      expect(await page.getByTestId('chat-stop').count()).toBe(0);
      await page.getByTestId('chat-send').waitFor();
      await page.screenshot({ path: screenshotPath('llm-chat-stopped-1440') });

      // The balance is what the two replies cost less (the page asks for it again after each).
      await expect.poll(async () => units(await page.getByTestId('chat-balance').textContent()), { timeout: 15_000 }).toBe(1_000_000 - a.cost - b.cost);
      expect(await page.getByTestId('chat-balance').textContent()).toBe(formatMoney(1_000_000 - a.cost - b.cost));

      // The conversation is kept: after a reload it lists both replies.
      await page.reload();
      await page.getByTestId('conv-item').first().waitFor();
      await page.getByTestId('conv-item').first().locator('button').first().click();
      await expect.poll(() => page.locator('[data-testid=msg-assistant]').count(), { timeout: 10_000 }).toBe(2);

      // An API key: the secret shows once.
      await page.goto(h.url('demo', '/largeModel/apiKey'));
      expect(await page.getByTestId('api-base-url').textContent()).toBe(h.url('demo', '/v1'));
      await page.getByTestId('key-create').click();
      await page.getByTestId('key-name').fill('e2e-key');
      await page.getByTestId('key-create-ok').click();
      const secretBox = page.getByTestId('key-secret');
      await secretBox.waitFor();
      const secret = await secretBox.inputValue();
      expect(secret).toMatch(/^sk-[A-Za-z0-9]{48}$/);
      await page.screenshot({ path: screenshotPath('llm-key-secret-1440') });
      await page.getByTestId('key-secret-done').click();
      const keyRow = page.getByTestId('api-keys-table').locator('tr.ant-table-row', { hasText: 'e2e-key' });
      await keyRow.waitFor();
      const masked = (await keyRow.getByTestId('key-masked').textContent()) ?? '';
      expect(masked.startsWith('sk-') && masked.endsWith(secret.slice(-4))).toBe(true);
      expect(masked).not.toContain(secret.slice(7, -4));
      expect(await keyRow.getByTestId('key-status').getAttribute('data-status')).toBe('active');

      // The gateway answers an OpenAI client's call with that key.
      const res = await fetch(h.url('demo', '/v1/chat/completions'), {
        method: 'POST',
        headers: { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 16 }),
      });
      expect(res.status).toBe(200);
      const completion = (await res.json()) as { object: string; choices: { message: { content: string } }[]; usage: { prompt_tokens: number; completion_tokens: number } };
      expect(completion.object).toBe('chat.completion');
      expect(completion.usage.prompt_tokens).toBeGreaterThan(0);
      expect(completion.usage.completion_tokens).toBeGreaterThan(0);

      // The usage page counts it under the key (and the chat under 网页对话).
      await page.goto(h.url('demo', '/largeModel/usageChart'));
      const usageRow = page.getByTestId('usage-table').locator('tr.ant-table-row', { hasText: 'e2e-key' });
      await expect
        .poll(
          async () => {
            if ((await usageRow.count()) > 0) return true;
            await page.getByTestId('usage-refresh').click();
            await page.waitForTimeout(500);
            return (await usageRow.count()) > 0;
          },
          { timeout: 30_000, interval: 1_000 },
        )
        .toBe(true);
      expect(await usageRow.getByTestId('usage-row-model').textContent()).toBe(MODEL);
      expect(await usageRow.getByTestId('usage-row-requests').textContent()).toBe('1');
      expect(units(await usageRow.getByTestId('usage-row-cost').textContent())).toBeGreaterThan(0);
      const chatRow = page.getByTestId('usage-table').locator('tr.ant-table-row', { hasText: '网页对话' });
      expect(await chatRow.getByTestId('usage-row-requests').textContent()).toBe('2');
      await page.getByTestId('usage-chart-tokens').waitFor();
      await page.screenshot({ path: screenshotPath('llm-usage-1440'), fullPage: true });

      // The console's copy of the key page lists the same key.
      await page.goto(h.url('demo', '/center/ai-apiKey'));
      await page.getByTestId('api-keys-table').locator('tr.ant-table-row', { hasText: 'e2e-key' }).waitFor();
    } finally {
      await (context as BrowserContext).close();
    }
  });

  it('keeps the chat usable on a phone: the conversations in a drawer', { timeout: 60_000 }, async () => {
    const { token } = await registerUser(h);
    const { context, page } = await h.newPage({ width: 390, height: 844 });
    try {
      await signInWithToken(page, h, 'demo', token);
      await page.goto(h.url('demo', `/largeModel/textChat?model=${MODEL}`));
      await page.getByTestId('chat-input').waitFor();
      expect(await page.getByTestId('conv-list').count()).toBe(0);
      await page.getByTestId('conv-drawer').click();
      await page.getByTestId('conv-new').waitFor();
      await page.screenshot({ path: screenshotPath('llm-chat-drawer-390') });
      // No sideways scrolling at 390 px.
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    } finally {
      await (context as BrowserContext).close();
    }
  });
});
