import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSandboxGateway,
  generateSandboxKeys,
  loadSandboxKeys,
  parseSandboxTrade,
  SANDBOX_SIGNATURE_HEADER,
  sandboxTradePayload,
  type SandboxGateway,
  type SandboxKeys,
  type SandboxTrade,
  type SandboxTradeStore,
} from './sandbox.ts';
import { sandboxCashierUrl } from '../../modules/payment/payment-urls.ts';

const NOW = new Date('2026-11-01T00:00:00.000Z');
const ORDER = '0f1e2d3c4b5a69788796a5b4c3d2e1f0';

/** The jobs table, in memory: first trade per order wins, like the real store. */
function memoryStore() {
  const trades = new Map<string, SandboxTrade>();
  const store: SandboxTradeStore & { trades: typeof trades } = {
    trades,
    async recordOnce(trade) {
      const existing = trades.get(trade.outTradeNo);
      if (existing) return existing;
      trades.set(trade.outTradeNo, trade);
      return trade;
    },
    async find(outTradeNo) {
      return trades.get(outTradeNo);
    },
  };
  return store;
}

type Call = { url: string; init: RequestInit };

describe('sandbox gateway', () => {
  let keys: SandboxKeys;
  let now = NOW;
  const calls: Call[] = [];
  let answer = () => new Response('success', { status: 200 });
  let store: ReturnType<typeof memoryStore>;
  let gateway: SandboxGateway;

  beforeAll(async () => {
    keys = await generateSandboxKeys();
    store = memoryStore();
    gateway = createSandboxGateway({
      keys,
      trades: store,
      clock: () => now,
      cashierUrl: sandboxCashierUrl,
      fetch: async (url, init) => {
        calls.push({ url, init });
        return answer();
      },
    });
  });

  const notification = (fields: Record<string, unknown> = {}) => ({ out_trade_no: ORDER, trade_no: 'SBX1', amount: 1_000_000, status: 'paid', timestamp: now.toISOString(), nonce: 'abc', ...fields });
  const signedBy = (key: crypto.KeyObject, body: string) => crypto.sign('sha256', Buffer.from(body), key).toString('base64');
  const verify = (body: string, signature: string | undefined) => gateway.verifyNotify({ headers: signature === undefined ? {} : { [SANDBOX_SIGNATURE_HEADER]: signature }, rawBody: body });

  it('sends the payer to a cashier on the notify URL’s origin, with an HMAC of the order', async () => {
    const { payUrl, qrCode } = await gateway.createPayment({ outTradeNo: ORDER, amount: 1_000_000, subject: 's', notifyUrl: 'https://pay.example.com/api/v1/payments/notify/sandbox', returnUrl: 'https://pay.example.com/recharge/success?id=x', expiresAt: NOW });
    expect(qrCode).toBeUndefined();
    const url = new URL(payUrl ?? '');
    expect(url.origin + url.pathname).toBe(`https://pay.example.com/sandbox/cashier/${ORDER}`);
    const sig = url.searchParams.get('sig') ?? '';
    expect(gateway.verifyCashierSignature(ORDER, sig)).toBe(true);
    expect(gateway.verifyCashierSignature('ffffffffffffffffffffffffffffffff', sig)).toBe(false);
    expect(gateway.verifyCashierSignature(ORDER, `${sig}x`)).toBe(false);
    expect(gateway.verifyCashierSignature(ORDER, '')).toBe(false);
    await expect(gateway.createPayment({ outTradeNo: ORDER, amount: 1_000_050, subject: 's', notifyUrl: 'https://x/n', returnUrl: 'https://x/r', expiresAt: NOW })).rejects.toThrow(/whole number of fen/);
  });

  it('accepts its own signature and refuses everything else', async () => {
    const body = JSON.stringify(notification());
    expect(await verify(body, signedBy(keys.privateKey, body))).toEqual({
      ok: true,
      notify: { outTradeNo: ORDER, amount: 1_000_000, gatewayTradeNo: 'SBX1', status: 'paid', raw: notification() },
    });
    const other = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    expect(await verify(body, signedBy(other.privateKey, body))).toEqual({ ok: false, reason: 'bad signature' });
    expect(await verify(body, undefined)).toEqual({ ok: false, reason: 'missing signature header' });
    expect(await verify(body, '!!!')).toEqual({ ok: false, reason: 'bad signature' });
    const altered = body.replace('1000000', '9000000');
    expect(await verify(altered, signedBy(keys.privateKey, body))).toEqual({ ok: false, reason: 'bad signature' });
  });

  it('refuses signed bodies that are malformed or outside the five-minute window', async () => {
    const check = async (fields: Record<string, unknown>) => {
      const body = JSON.stringify(notification(fields));
      const r = await verify(body, signedBy(keys.privateKey, body));
      return r.ok ? 'ok' : r.reason;
    };
    expect(await check({ amount: 1.5 })).toBe('malformed amount 1.5');
    expect(await check({ amount: '100' })).toBe('malformed amount "100"');
    expect(await check({ status: 'TRADE_SUCCESS' })).toBe('unknown status "TRADE_SUCCESS"');
    expect(await check({ out_trade_no: '' })).toMatch(/missing out_trade_no/);
    expect(await check({ timestamp: 'yesterday' })).toBe('malformed timestamp');
    expect(await check({ timestamp: new Date(NOW.getTime() - 5 * 60_000).toISOString() })).toBe('ok');
    expect(await check({ timestamp: new Date(NOW.getTime() - 5 * 60_000 - 1).toISOString() })).toMatch(/^stale timestamp/);
    expect(await check({ timestamp: new Date(NOW.getTime() + 6 * 60_000).toISOString() })).toMatch(/^stale timestamp/);
    const array = '[1,2]';
    expect(await verify(array, signedBy(keys.privateKey, array))).toEqual({ ok: false, reason: 'body is not an object' });
  });

  it('records the payer’s first choice once and answers queries from it', async () => {
    expect(await gateway.queryPayment('a'.repeat(32))).toEqual({ status: 'not_found' });
    const paid = await gateway.settle({ outTradeNo: 'a'.repeat(32), amount: 500_000, notifyUrl: 'https://x/notify' }, 'paid');
    expect(paid).toMatchObject({ status: 'paid', amount: 500_000, settledAt: NOW.toISOString() });
    expect(paid.tradeNo).toMatch(/^SBX20261101\d{18}$/);
    const again = await gateway.settle({ outTradeNo: 'a'.repeat(32), amount: 500_000, notifyUrl: 'https://x/notify' }, 'failed');
    expect(again).toEqual(paid);
    expect(await gateway.queryPayment('a'.repeat(32))).toEqual({ status: 'paid', amount: 500_000, gatewayTradeNo: paid.tradeNo });
    await gateway.settle({ outTradeNo: 'b'.repeat(32), amount: 500_000, notifyUrl: 'https://x/notify' }, 'failed');
    expect(await gateway.queryPayment('b'.repeat(32))).toMatchObject({ status: 'closed' });
  });

  it('delivers a freshly signed notification and counts only a 2xx "success" as acknowledged', async () => {
    const trade: SandboxTrade = { outTradeNo: ORDER, tradeNo: 'SBX2', amount: 1_000_000, status: 'paid', notifyUrl: 'https://pay.example.com/notify', settledAt: NOW.toISOString() };
    const payload = sandboxTradePayload(trade);
    expect(parseSandboxTrade(payload)).toEqual(trade);
    expect(parseSandboxTrade({ ...payload, amount: -1 })).toBeUndefined();

    now = new Date(NOW.getTime() + 60_000);
    await gateway.deliver(payload);
    const call = calls.at(-1);
    expect(call?.url).toBe('https://pay.example.com/notify');
    expect(call?.init.method).toBe('POST');
    const headers = new Headers(call?.init.headers);
    const body = String(call?.init.body);
    expect(JSON.parse(body)).toMatchObject({ out_trade_no: ORDER, trade_no: 'SBX2', amount: 1_000_000, status: 'paid', timestamp: now.toISOString() });
    // Verifiable with the public key alone, as a merchant would.
    expect(crypto.verify('sha256', Buffer.from(body), keys.publicKey, Buffer.from(headers.get(SANDBOX_SIGNATURE_HEADER) ?? '', 'base64'))).toBe(true);

    answer = () => new Response('fail', { status: 400 });
    await expect(gateway.deliver(payload)).rejects.toThrow(/not acknowledged: HTTP 400 fail/);
    answer = () => new Response('ok', { status: 200 });
    await expect(gateway.deliver(payload)).rejects.toThrow(/not acknowledged: HTTP 200 ok/);
    answer = () => {
      throw new TypeError('fetch failed');
    };
    await expect(gateway.deliver(payload)).rejects.toThrow(/failed: fetch failed/);
    await expect(gateway.deliver({ out_trade_no: ORDER })).rejects.toThrow(/bad payload/);
    answer = () => new Response('success\n', { status: 200 });
    await expect(gateway.deliver(payload)).resolves.toBeUndefined();
  });
});

describe('sandbox gateway keys', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-keys-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keeps the key pair in DATA_DIR/keys, private to the owner, and reuses it', async () => {
    const first = await loadSandboxKeys(dir);
    expect(first.source).toBe('data-dir');
    const file = path.join(dir, 'keys', 'sandbox-gateway.pem');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const second = await loadSandboxKeys(dir);
    expect(second.publicKey.export({ type: 'spki', format: 'pem' })).toBe(first.publicKey.export({ type: 'spki', format: 'pem' }));
  });

  it('falls back to memory when DATA_DIR does not exist', async () => {
    expect((await loadSandboxKeys(path.join(dir, 'missing'))).source).toBe('memory');
  });
});
