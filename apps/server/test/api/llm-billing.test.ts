import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmCost, type LimitRule } from '@suanli/contract/llm';
import { completionTokensFor, HOLD_STALE_MS } from '../../src/modules/llm/billing.service.ts';
import { LlmError } from '../../src/modules/llm/errors.ts';
import type { ResolvedModel } from '../../src/modules/llm/types.ts';
import { fakeTokens } from '../fakes/llm-upstream.ts';
import { createTestClock } from '../helpers/clock.ts';
import { engines } from '../helpers/db.ts';
import { buildGatewayApp, sseFrames, type GatewayWorld } from '../helpers/llm-gateway.ts';

const IN = 1_000_000; // 1 unit per prompt token
const OUT = 3_000_000; // 3 units per completion token
const HELLO = [{ role: 'user' as const, content: 'hello' }]; // 9 prompt tokens with the fake
const HOUR = 3_600_000;

describe('completionTokensFor', () => {
  it('is the largest completion whose rounded-up cost fits the budget', () => {
    for (const [budget, p, i, o] of [
      [30, 9, 1_234_567, 2_345_678],
      [1, 1, 1, 1],
      [1_000, 100, 999_999, 1_000_001],
      [5, 3, 0, 7],
      [1e15, 1000, 1e12, 1e12],
    ] as const) {
      const c = completionTokensFor(budget, p, i, o);
      expect(llmCost(p, c, i, o)).toBeLessThanOrEqual(budget);
      expect(llmCost(p, c + 1, i, o)).toBeGreaterThan(budget);
    }
    expect(completionTokensFor(0, 1, 1, 1)).toBe(-1);
    expect(completionTokensFor(-5, 0, 1, 1)).toBe(-1);
    expect(completionTokensFor(3, 2, 1_000_000, 0)).toBe(Infinity);
  });
});

describe.each(engines)('llm billing on %s', (engine) => {
  const clock = createTestClock();
  let w: GatewayWorld;
  let model: ResolvedModel;
  beforeAll(async () => {
    w = await buildGatewayApp({ engine, clock, script: { tokens: fakeTokens(5) } });
    model = await w.model({ inputPrice: IN, outputPrice: OUT, contextLength: 8192 });
  });
  afterAll(() => w.t.close());

  const run = (caller: ReturnType<GatewayWorld['caller']>, opts: { maxTokens?: number; signal?: AbortSignal; onDelta?: (t: string) => void; model?: ResolvedModel } = {}) =>
    w.t.container.llmCompletions.run(
      caller,
      { model: opts.model ?? model, messages: HELLO, stream: true, ...(opts.maxTokens !== undefined ? { maxTokens: opts.maxTokens } : {}) },
      { signal: opts.signal ?? new AbortController().signal, onDelta: opts.onDelta },
    );
  const refusal = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LlmError);
    return err as LlmError;
  };

  it('holds rolling token windows exactly at the boundary (not fixed buckets)', async () => {
    const m = await w.model({ inputPrice: IN, outputPrice: OUT });
    w.fake.setScript(m.upstreamModel, { tokens: fakeTokens(41) }); // 9 + 41 = 50 tokens a call
    const limits: LimitRule[] = [{ window: '5h', unit: 'tokens', limit: 100 }];
    const { user } = await w.fundedUser(1_000_000);
    const key = await w.key(user.id, { limits });
    const caller = w.caller(user.id, { id: key.id, limits });
    const t0 = clock().getTime();
    expect((await run(caller, { model: m, maxTokens: 41 })).completionTokens).toBe(41);
    clock.advance(HOUR);
    expect((await run(caller, { model: m, maxTokens: 41 })).completionTokens).toBe(41);
    clock.advance(HOUR);
    const e = await refusal(run(caller, { model: m, maxTokens: 41 }));
    expect([e.status, e.code]).toEqual([429, 'window_limit_exceeded']);
    expect(e.message).toContain('5h');
    expect((await refusal(run(caller, { model: m }))).code).toBe('window_limit_exceeded');
    // One millisecond before the first call leaves the window it still counts; at the instant it is gone.
    clock.advance(t0 + 5 * HOUR - 1 - clock().getTime());
    expect((await refusal(run(caller, { model: m, maxTokens: 1 }))).code).toBe('window_limit_exceeded');
    clock.advance(1);
    expect((await run(caller, { model: m, maxTokens: 41 })).completionTokens).toBe(41);
    // Without max_tokens the hold shrinks to what the window leaves: 100 − 50 (second call) − 50 (this one) = 0 → refused;
    // an hour on, the second call is out too: 100 − 50 − 9 = 41 tokens.
    expect((await refusal(run(caller, { model: m }))).code).toBe('window_limit_exceeded');
    clock.advance(HOUR);
    const shrunk = await run(caller, { model: m });
    expect(w.fake.calls.at(-1)?.request.maxTokens).toBe(41);
    expect(shrunk.finishReason).toBe('stop');
    expect(await w.holds(user.id)).toEqual([]);
    expect((await w.keyRow(key.id)).held).toBe(0);
  });

  it('holds money windows and names the window that binds', async () => {
    const { user } = await w.fundedUser(1_000_000);
    // A call: 9 + 3 × 5 = 24 units.
    const limits: LimitRule[] = [
      { window: 'month', unit: 'money', limit: 1_000 },
      { window: 'day', unit: 'money', limit: 50 },
    ];
    const key = await w.key(user.id, { limits });
    const caller = w.caller(user.id, { id: key.id, limits });
    expect((await run(caller, { maxTokens: 5 })).cost).toBe(24);
    expect((await run(caller, { maxTokens: 5 })).cost).toBe(24);
    const e = await refusal(run(caller, { maxTokens: 5 }));
    expect(e.message).toContain('day');
    // 2 units left in the day: not even the prompt (9).
    expect((await refusal(run(caller))).code).toBe('window_limit_exceeded');
    clock.advance(24 * HOUR);
    expect((await run(caller, { maxTokens: 5 })).cost).toBe(24);
    expect((await w.wallet(user.id)).balance).toBe(1_000_000 - 72);
  });

  it('settles once: a second settle of the same hold changes nothing', async () => {
    const { user } = await w.fundedUser(10_000);
    const caller = w.caller(user.id);
    const billing = w.t.container.llmBilling;
    const hold = await billing.hold({ caller, model, promptTokens: 9, maxCompletionTokens: 10, exact: true });
    expect(hold).toMatchObject({ amount: 39, promptTokens: 9, completionTokens: 10 });
    expect(await w.wallet(user.id)).toEqual({ balance: 10_000, held: 39 });
    const s = { promptTokens: 9, completionTokens: 4, status: 200, errorCode: '', latencyMs: 5, ttftMs: 1, stream: false };
    const first = await billing.settle(hold, caller, model, s);
    expect(first).toEqual({ cost: 21, balanceAfter: 10_000 - 21 });
    const second = await billing.settle(hold, caller, model, s);
    expect(second.cost).toBe(0);
    expect(await w.wallet(user.id)).toEqual({ balance: 10_000 - 21, held: 0 });
    expect(await w.usage(user.id)).toHaveLength(1);
    expect(await w.charged(user.id)).toBe(-21);
    expect((await w.usage(user.id))[0]).toMatchObject({ source: 'chat', keyId: null });
  });

  it('never charges more than the hold (an upstream that reports more is clamped)', async () => {
    const m = await w.model({ inputPrice: IN, outputPrice: OUT });
    w.fake.setScript(m.upstreamModel, { tokens: fakeTokens(5), usageExtra: 100 });
    const { user } = await w.fundedUser(10_000);
    const r = await run(w.caller(user.id), { model: m, maxTokens: 5 });
    expect(r.completionTokens).toBe(105);
    expect(r.cost).toBe(llmCost(9, 5, IN, OUT));
    expect(await w.wallet(user.id)).toEqual({ balance: 10_000 - 24, held: 0 });
  });

  it('records a free call without a ledger entry', async () => {
    const free = await w.model({ inputPrice: 0, outputPrice: 0 });
    const { user } = await w.fundedUser(0);
    const r = await run(w.caller(user.id), { model: free });
    expect(r.cost).toBe(0);
    expect(await w.charged(user.id)).toBe(0);
    expect((await w.usage(user.id))[0]).toMatchObject({ cost: 0, completionTokens: 5, status: 200 });
  });

  it('charges the tokens delivered before the client aborted, and cancels the upstream', async () => {
    const m = await w.model({ inputPrice: IN, outputPrice: OUT });
    w.fake.setScript(m.upstreamModel, { tokens: fakeTokens(200), delayMs: 1 });
    const { user } = await w.fundedUser(10_000);
    const ac = new AbortController();
    let seen = 0;
    const r = await run(w.caller(user.id), {
      model: m,
      signal: ac.signal,
      onDelta: () => {
        if (++seen === 3) ac.abort();
      },
    });
    expect(r).toMatchObject({ finishReason: 'aborted', completionTokens: 3, promptTokens: 9, cost: llmCost(9, 3, IN, OUT) });
    expect(w.fake.calls.at(-1)).toMatchObject({ aborted: true, delivered: 3, ended: false });
    expect(await w.wallet(user.id)).toEqual({ balance: 10_000 - 18, held: 0 });
    expect((await w.usage(user.id))[0]).toMatchObject({ status: 499, errorCode: 'client_closed', completionTokens: 3, cost: 18 });

    // Gone before the first token: nothing is charged.
    const early = new AbortController();
    early.abort();
    const r2 = await run(w.caller(user.id), { model: m, signal: early.signal });
    expect(r2).toMatchObject({ finishReason: 'aborted', completionTokens: 0, cost: 0 });
    expect(await w.wallet(user.id)).toEqual({ balance: 10_000 - 18, held: 0 });
  });

  it('sweeps holds older than 30 minutes and only those', async () => {
    const { user } = await w.fundedUser(10_000);
    const key = await w.key(user.id);
    const caller = w.caller(user.id, { id: key.id });
    const billing = w.t.container.llmBilling;
    const old = await billing.hold({ caller, model, promptTokens: 9, maxCompletionTokens: 10, exact: true });
    clock.advance(HOLD_STALE_MS - 1000);
    const fresh = await billing.hold({ caller, model, promptTokens: 9, maxCompletionTokens: 1, exact: true });
    clock.advance(2000);
    expect(await w.wallet(user.id)).toEqual({ balance: 10_000, held: 39 + 12 });
    expect((await w.keyRow(key.id)).held).toBe(51);
    // Other users' stale holds may be swept by the same call (the suite shares one database).
    expect(await billing.sweep(HOLD_STALE_MS)).toBeGreaterThanOrEqual(1);
    expect(await w.wallet(user.id)).toEqual({ balance: 10_000, held: 12 });
    expect((await w.keyRow(key.id)).held).toBe(12);
    expect((await w.holds(user.id)).map((h) => h.id)).toEqual([fresh.id]);
    // Settling the swept hold now changes nothing; the fresh one settles normally.
    expect((await billing.settle(old, caller, model, { promptTokens: 9, completionTokens: 10, status: 200, errorCode: '', latencyMs: 1, ttftMs: 1, stream: false })).cost).toBe(0);
    expect((await billing.settle(fresh, caller, model, { promptTokens: 9, completionTokens: 1, status: 200, errorCode: '', latencyMs: 1, ttftMs: 1, stream: false })).cost).toBe(12);
    expect(await w.wallet(user.id)).toEqual({ balance: 10_000 - 12, held: 0 });
    expect(await w.t.container.ledger.check()).toEqual([]);
  });

  it('50 concurrent streamed calls from a key whose balance covers about 10 never overdraw', async () => {
    const m = await w.model({ inputPrice: IN, outputPrice: OUT });
    w.fake.setScript(m.upstreamModel, { tokens: fakeTokens(20), delayMs: 1 });
    const perCall = llmCost(9, 20, IN, OUT); // 69
    const { user } = await w.fundedUser(perCall * 10 + 35);
    const key = await w.key(user.id);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        w.t.app.inject({
          method: 'POST',
          url: '/v1/chat/completions',
          headers: { host: 'localhost', authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ model: m.modelId, messages: HELLO, stream: true, max_tokens: 20, stream_options: { include_usage: true } }),
        }),
      ),
    );
    const ok = answers.filter((a) => a.statusCode === 200);
    expect(ok).toHaveLength(10);
    expect(answers.filter((a) => a.statusCode === 402)).toHaveLength(40);
    for (const a of ok) expect(sseFrames(a.body).at(-1)).toBe('[DONE]');
    const wallet = await w.wallet(user.id);
    expect(wallet).toEqual({ balance: 35, held: 0 });
    const rows = await w.usage(user.id);
    expect(rows.reduce((s, r) => s + r.cost, 0)).toBe(-(await w.charged(user.id)));
    expect(rows.reduce((s, r) => s + r.cost, 0)).toBe(10 * perCall);
    expect(await w.holds(user.id)).toEqual([]);
    expect(await w.t.container.ledger.check()).toEqual([]);
  });

  it('holds a window limit exactly under 20 concurrent calls', async () => {
    const m = await w.model({ inputPrice: IN, outputPrice: OUT });
    w.fake.setScript(m.upstreamModel, { tokens: fakeTokens(41), delayMs: 1 });
    const limits: LimitRule[] = [{ window: 'day', unit: 'tokens', limit: 250 }];
    const { user } = await w.fundedUser(1_000_000);
    const key = await w.key(user.id, { limits });
    const caller = w.caller(user.id, { id: key.id, limits });
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => run(caller, { model: m, maxTokens: 41 })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as LlmError).code).toBe('window_limit_exceeded');
    const rows = await w.usage(user.id);
    expect(rows.reduce((s, r) => s + r.promptTokens + r.completionTokens, 0)).toBe(250);
    expect((await w.keyRow(key.id)).held).toBe(0);
    expect(await w.t.container.ledger.check()).toEqual([]);
  });
});
