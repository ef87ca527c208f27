import { describe, expect, it } from 'vitest';
import { sandboxCashierUrl } from '../../modules/payment/payment-urls.ts';
import { PaymentGatewayError } from './port.ts';
import { createSandboxGateway, generateSandboxKeys, type SandboxTrade, type SandboxTradeStore } from './sandbox.ts';

// Refund and close of the sandbox (item 20), kept apart from sandbox.test.ts.
const NOW = new Date('2026-11-01T00:00:00.000Z');

async function gatewayWith(trades: SandboxTrade[]) {
  const byNo = new Map(trades.map((t) => [t.outTradeNo, t]));
  const store: SandboxTradeStore = { recordOnce: async (t) => byNo.get(t.outTradeNo) ?? t, find: async (no) => byNo.get(no) };
  return createSandboxGateway({ keys: await generateSandboxKeys(), trades: store, clock: () => NOW, cashierUrl: sandboxCashierUrl });
}
const trade = (outTradeNo: string, status: SandboxTrade['status']): SandboxTrade => ({ outTradeNo, tradeNo: `SBX-${outTradeNo}`, amount: 1_000_000, status, notifyUrl: 'http://localhost/n', settledAt: NOW.toISOString() });

describe('sandbox refund and close', () => {
  it('refunds a paid trade in parts up to its amount, idempotently per refund number', async () => {
    const g = await gatewayWith([trade('P1', 'paid')]);
    expect(await g.refund({ outTradeNo: 'P1', outRefundNo: 'RF1', amount: 600_000, totalAmount: 1_000_000 })).toMatchObject({ outRefundNo: 'RF1', status: 'succeeded', amount: 600_000 });
    expect(await g.refund({ outTradeNo: 'P1', outRefundNo: 'RF1', amount: 600_000, totalAmount: 1_000_000 })).toMatchObject({ outRefundNo: 'RF1', amount: 600_000 });
    await expect(g.refund({ outTradeNo: 'P1', outRefundNo: 'RF2', amount: 500_000, totalAmount: 1_000_000 })).rejects.toThrow(/more than is left/);
    expect(await g.refund({ outTradeNo: 'P1', outRefundNo: 'RF3', amount: 400_000, totalAmount: 1_000_000 })).toMatchObject({ status: 'succeeded' });
    expect(await g.queryRefund('P1', 'RF3')).toMatchObject({ status: 'succeeded', amount: 400_000 });
    expect(await g.queryRefund('P1', 'RF9')).toEqual({ outRefundNo: 'RF9', status: 'not_found' });
  });

  it('refuses to refund an unpaid trade and to close a paid one', async () => {
    const g = await gatewayWith([trade('P1', 'paid'), trade('F1', 'failed')]);
    await expect(g.refund({ outTradeNo: 'F1', outRefundNo: 'RF1', amount: 100, totalAmount: 1_000_000 })).rejects.toBeInstanceOf(PaymentGatewayError);
    await expect(g.closePayment('P1')).rejects.toThrow(/is paid/);
    await expect(g.closePayment('F1')).resolves.toBeUndefined();
    await expect(g.closePayment('NEVER-SEEN')).resolves.toBeUndefined();
  });
});
