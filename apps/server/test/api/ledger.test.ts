import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser, signInSeededOperator } from '../helpers/factories.ts';

const YUAN = 10_000;

describe.each(engines)('ledger on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ engine });
  });
  afterAll(() => t.close());

  const post = (userId: number, tenantId: number, amount: number, ref: string, kind: 'adjustment' | 'order_payment' | 'recharge' | 'refund' = 'adjustment', allowNegative = false) =>
    t.container.ledger.post({ tenantId, userId, amount, ref, kind, allowNegative });
  const balance = async (token: string) => (await t.request({ method: 'GET', url: '/api/v1/account/balance', token })).json().data.balance as number;

  it('credits and debits with the ledger and balance moving together, once per reference', async () => {
    const { user, token } = await createUser(t);
    await post(user.id, user.tenantId, 100 * YUAN, 'test:credit-1');
    const again = await post(user.id, user.tenantId, 100 * YUAN, 'test:credit-1');
    expect(again.replayed).toBe(true);
    await post(user.id, user.tenantId, -30 * YUAN, 'order:1', 'order_payment');
    t.container.wallet.forgetBalance(user.id);
    expect(await balance(token)).toBe(70 * YUAN);
    await expect(post(user.id, user.tenantId, -50 * YUAN, 'test:credit-1')).rejects.toThrow(/was posted with/);
    expect(await t.container.ledger.check(user.tenantId)).toEqual([]);
  });

  it('posts inside a caller’s transaction, where a replay doesn’t abort the caller’s other writes', async () => {
    const { user, token } = await createUser(t);
    await post(user.id, user.tenantId, 5 * YUAN, 'test:tx');
    await t.container.db.transaction(async (tx) => {
      const replay = await t.container.ledger.post({ tenantId: user.tenantId, userId: user.id, kind: 'adjustment', amount: 5 * YUAN, ref: 'test:tx' }, tx);
      expect(replay.replayed).toBe(true);
      const fresh = await t.container.ledger.post({ tenantId: user.tenantId, userId: user.id, kind: 'adjustment', amount: 1 * YUAN, ref: 'test:tx2' }, tx);
      expect(fresh).toMatchObject({ replayed: false, entry: { balanceAfter: 6 * YUAN } });
    });
    t.container.wallet.forgetBalance(user.id);
    expect(await balance(token)).toBe(6 * YUAN);
    // a transaction that fails after posting takes the posting back with it
    await t.container.db
      .transaction(async (tx) => {
        await t.container.ledger.post({ tenantId: user.tenantId, userId: user.id, kind: 'adjustment', amount: 1 * YUAN, ref: 'test:tx3' }, tx);
        throw new Error('caller failed');
      })
      .catch(() => undefined);
    t.container.wallet.forgetBalance(user.id);
    expect(await balance(token)).toBe(6 * YUAN);
    expect(await t.container.ledger.check(user.tenantId)).toEqual([]);
  });

  it('never lets a user action overdraw; metering may, into arrears', async () => {
    const { user } = await createUser(t);
    await post(user.id, user.tenantId, 10 * YUAN, 'test:c');
    const err = await post(user.id, user.tenantId, -12.5 * YUAN, 'order:2', 'order_payment').catch((e: unknown) => e as { status: number; message: string; reason: string });
    expect(err).toMatchObject({ status: 409, message: '余额不足，还差 ¥2.50，请先充值', reason: 'INSUFFICIENT_BALANCE' });
    const arrears = await post(user.id, user.tenantId, -12.5 * YUAN, 'payg:1', 'order_payment', true);
    expect(arrears.entry.balanceAfter).toBe(-2.5 * YUAN);
  });

  it('lists income and expense with filters, totals over the range, and only the user’s own entries', async () => {
    const { user, token } = await createUser(t);
    const other = await createUser(t);
    await post(other.user.id, other.user.tenantId, 999 * YUAN, 'test:other');
    for (let i = 1; i <= 5; i++) await post(user.id, user.tenantId, i * YUAN, `test:in-${i}`, 'recharge');
    await post(user.id, user.tenantId, -2 * YUAN, 'order:3', 'order_payment');
    const list = (body: object) => t.request({ method: 'POST', url: '/api/v1/transactions/list', token, payload: body });
    const all = (await list({ page: 1, pageSize: 4 })).json().data;
    expect(all.total).toBe(6);
    expect(all.list).toHaveLength(4);
    expect(all.list[0]).toMatchObject({ kind: 'order_payment', amount: -2 * YUAN, balanceAfter: 13 * YUAN });
    expect(all.totals).toEqual({ income: 15 * YUAN, expense: -2 * YUAN });
    const expense = (await list({ direction: 'expense' })).json().data;
    expect(expense.total).toBe(1);
    const recharges = (await list({ kind: 'recharge' })).json().data;
    expect(recharges.total).toBe(5);
    const future = (await list({ startTime: '2099-01-01T00:00:00+08:00' })).json().data;
    expect(future).toMatchObject({ total: 0, list: [], totals: { income: 0, expense: 0 } });
  });

  it('refuses bad filters with the reason', async () => {
    const { token } = await createUser(t);
    const list = (body: object) => t.request({ method: 'POST', url: '/api/v1/transactions/list', token, payload: body });
    expect((await list({ startTime: 'yesterday' })).json().msg).toBe('开始时间格式不正确，应为 ISO 8601（带时区），如 2025-01-31T08:00:00+08:00');
    expect((await list({ startTime: '2026-02-01T00:00:00+08:00', endTime: '2026-01-01T00:00:00+08:00' })).json().msg).toBe('开始时间不能晚于结束时间');
    expect((await list({ pageSize: 101 })).json().msg).toBe('每页最多 100 条');
    expect((await list({ kind: 'gift' })).json().msg).toBe('交易类型不正确');
    expect((await list({ userId: 1 })).json().msg).toBe('不支持的参数：userId');
    expect((await t.request({ method: 'POST', url: '/api/v1/transactions/list', payload: {} })).statusCode).toBe(401);
  });

  it('ledger check finds a tampered balance and a tampered entry; operators see only their tenant', async () => {
    const { user } = await createUser(t);
    await post(user.id, user.tenantId, 5 * YUAN, 'test:t1');
    await post(user.id, user.tenantId, 5 * YUAN, 'test:t2');
    const op = await signInSeededOperator(t);
    const check = () => t.request({ method: 'GET', url: '/api/v1/operate/ledger/check', token: op.token });
    expect((await check()).json().data).toEqual({ ok: true, mismatches: [] });
    await t.container.db.execute(sql`update wallets set balance = balance + 1 where user_id = ${user.id}`);
    const bad = (await check()).json().data;
    expect(bad.ok).toBe(false);
    expect(bad.mismatches).toEqual([expect.objectContaining({ userId: user.id, problem: 'balance' })]);
    // another tenant's operator doesn't see it
    const op2 = await signInSeededOperator(t, '127.0.0.1');
    expect((await t.request({ method: 'GET', url: '/api/v1/operate/ledger/check', token: op2.token, host: '127.0.0.1' })).json().data.ok).toBe(true);
    await t.container.db.execute(sql`update wallets set balance = balance - 1 where user_id = ${user.id}`);
    await t.container.db.execute(sql`update ledger_entries set amount = amount + 1 where ref = 'test:t1' and user_id = ${user.id}`);
    const problems = new Set((await check()).json().data.mismatches.map((m: { problem: string }) => m.problem));
    expect([...problems].sort()).toEqual(['balance', 'chain']);
    await t.container.db.execute(sql`update ledger_entries set amount = amount - 1 where ref = 'test:t1' and user_id = ${user.id}`);
    expect((await check()).json().data.ok).toBe(true);
    const { token } = await createUser(t);
    expect((await t.request({ method: 'GET', url: '/api/v1/operate/ledger/check', token })).statusCode).toBe(403);
  });

  it('keeps ledger == balance through a random mix of operations, and notices tampering', async () => {
    const n = engine === 'postgres' ? 10_000 : 1_000;
    const people = await Promise.all(Array.from({ length: 8 }, () => createUser(t)));
    let seed = 42;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const ops = Array.from({ length: n }, (_, i) => {
      const who = people[Math.floor(rand() * people.length)]!.user;
      const roll = rand();
      const amount = Math.max(1, Math.floor(rand() * 50 * YUAN));
      // credits, debits that may be refused, metered charges into arrears, and replays of earlier refs
      if (roll < 0.4) return () => post(who.id, who.tenantId, amount, `mix:c${i}`, 'recharge');
      if (roll < 0.75) return () => post(who.id, who.tenantId, -amount, `mix:d${i}`, 'order_payment').catch(() => undefined);
      if (roll < 0.85) return () => post(who.id, who.tenantId, -amount, `mix:m${i}`, 'order_payment', true);
      return () => post(who.id, who.tenantId, 1, `mix:replay${i % 50}`, 'refund');
    });
    const workers = engine === 'postgres' ? 16 : 1;
    let next = 0;
    await Promise.all(Array.from({ length: workers }, async () => {
      while (next < ops.length) await ops[next++]!();
    }));
    expect(await t.container.ledger.check()).toEqual([]);
    const victim = people[0]!.user;
    await t.container.db.execute(sql`update ledger_entries set balance_after = balance_after + 7 where id = (select max(id) from ledger_entries where user_id = ${victim.id})`);
    expect((await t.container.ledger.check()).some((m) => m.userId === victim.id && m.problem === 'chain')).toBe(true);
    await t.container.db.execute(sql`update ledger_entries set balance_after = balance_after - 7 where id = (select max(id) from ledger_entries where user_id = ${victim.id})`);
  }, 180_000);

  it('200 concurrent debits never overdraw and leave ledger == balance', async () => {
    const { user, token } = await createUser(t);
    await post(user.id, user.tenantId, 100 * YUAN, 'test:fund');
    // 200 debits of ¥1: exactly 100 can succeed
    const results = await Promise.allSettled(Array.from({ length: 200 }, (_, i) => post(user.id, user.tenantId, -1 * YUAN, `order:c${i}`, 'order_payment')));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(100);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused.every((r) => (r.reason as { status?: number }).status === 409)).toBe(true);
    t.container.wallet.forgetBalance(user.id);
    expect(await balance(token)).toBe(0);
    expect(await t.container.ledger.check(user.tenantId)).toEqual([]);
  }, 120_000);
});
