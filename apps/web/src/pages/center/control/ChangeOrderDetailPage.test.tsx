import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import type { Order } from '@suanli/contract/order';
import { ApiError } from '../../../api/errors.ts';
import { ChangeOrderDetailPage } from './ChangeOrderDetailPage.tsx';
import { ORDER_ID, order, renderAt } from './ops-test-utils.tsx';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../../api/client.ts', () => ({ http }));

const URL = `/center/control/changeOrderdetail?id=${ORDER_ID}`;
const PATH = '/center/control/changeOrderdetail';

function serve(o: Order, balance: number) {
  http.get.mockImplementation(async (url: string) => {
    if (url === `/api/v1/order/${ORDER_ID}`) return o;
    if (url === '/api/v1/account/balance') return { balance, frozenBalance: 0 };
    throw new Error(`unexpected GET ${url}`);
  });
}

describe('ChangeOrderDetailPage', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.post.mockReset();
    http.put.mockReset();
  });

  it('shows the kind, lines, total and countdown; pays with an Idempotency-Key and goes back to the instances', async () => {
    serve(order({ kind: 'renewal' }), 5_000_000);
    renderAt(URL, PATH, <ChangeOrderDetailPage />);
    expect((await screen.findByTestId('change-check-kind')).textContent).toBe('续费');
    expect(screen.getByTestId('order-total').textContent).toBe('¥190.00');
    expect(screen.getByTestId('order-lines').textContent).toContain('包月 × 1');
    expect((await screen.findByTestId('change-check-balance')).textContent).toBe('¥500.00');
    expect(screen.getByTestId('change-check-countdown').textContent).toMatch(/00:1[45]:\d\d/);
    http.post.mockResolvedValue(order({ status: 'paid' }));
    fireEvent.click(screen.getByTestId('change-check-pay'));
    await screen.findByTestId('instances-here');
    const [url, body, opts] = http.post.mock.calls[0] as [string, unknown, { headers: Record<string, string> }];
    expect(url).toBe('/api/v1/order/pay');
    expect(body).toEqual({ orderId: ORDER_ID });
    expect(opts.headers['Idempotency-Key']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('with too little balance: the shortfall, a recharge link, and no payment', async () => {
    serve(order({ kind: 'spec_change', amount: 300_000, lines: [{ label: 'GPU 1 → 2 卡差价', amount: 300_000 }] }), 100_000);
    renderAt(URL, PATH, <ChangeOrderDetailPage />);
    expect((await screen.findByTestId('change-check-short')).textContent).toContain('¥20.00');
    expect((screen.getByTestId('change-check-pay') as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByTestId('change-check-recharge'));
    await screen.findByTestId('recharge-here');
    expect(http.post).not.toHaveBeenCalled();
  });

  it('a refusal while paying shows the server’s reason; a lost answer keeps the key for the retry', async () => {
    serve(order(), 5_000_000);
    renderAt(URL, PATH, <ChangeOrderDetailPage />);
    await screen.findByTestId('change-check-balance');
    http.post.mockRejectedValueOnce(new ApiError(0, '网络不稳定，请稍后重试'));
    fireEvent.click(screen.getByTestId('change-check-pay'));
    await screen.findByTestId('change-check-pay-error');
    http.post.mockRejectedValueOnce(new ApiError(409, '该机器的 GPU 已被占用，剩余 0 卡'));
    fireEvent.click(screen.getByTestId('change-check-pay'));
    await waitFor(() => expect(screen.getByTestId('change-check-pay-error').textContent).toContain('剩余 0 卡'));
    const keys = http.post.mock.calls.map((c) => (c[2] as { headers: Record<string, string> }).headers['Idempotency-Key']);
    expect(keys[0]).toBe(keys[1]);
  });

  it('cancels only after confirming', async () => {
    serve(order(), 5_000_000);
    renderAt(URL, PATH, <ChangeOrderDetailPage />);
    await screen.findByTestId('change-check-balance');
    http.put.mockResolvedValue(order({ status: 'cancelled' }));
    fireEvent.click(screen.getByTestId('change-check-cancel'));
    expect(http.put).not.toHaveBeenCalled();
    const confirm = (await screen.findAllByText(/^取消订单$/)).map((e) => e.closest('button')).find((b) => b && !b.dataset.testid);
    fireEvent.click(confirm!);
    await waitFor(() => expect(http.put).toHaveBeenCalledWith(`/api/v1/order/${ORDER_ID}/cancel`, undefined, { silent: true }));
  });

  it('an applied refund order shows as done with the refund, and offers no payment', async () => {
    serve(order({ kind: 'charge_type', status: 'paid', amount: -500_000, chargeType: 'payg', paidAt: new Date().toISOString() }), 5_000_000);
    renderAt(URL, PATH, <ChangeOrderDetailPage />);
    expect((await screen.findByTestId('change-check-closed')).textContent).toContain('¥50.00');
    expect(screen.queryByTestId('change-check-pay')).toBeNull();
    fireEvent.click(screen.getByTestId('change-check-income'));
    await screen.findByTestId('income-here');
  });

  it('a missing id or a failed load says so', async () => {
    renderAt(PATH, PATH, <ChangeOrderDetailPage />);
    await screen.findByTestId('change-check-missing');
    cleanup();
    http.get.mockRejectedValue(new ApiError(404, '订单不存在'));
    renderAt(URL, PATH, <ChangeOrderDetailPage />);
    await screen.findByTestId('change-check-error');
  });
});

describe('checkPathOf', () => {
  it('sends changes to their check page and new instances to the market’s', async () => {
    const { checkPathOf } = await import('./check-path.ts');
    expect(checkPathOf('renewal', ORDER_ID)).toBe(`/center/control/changeOrderdetail?id=${ORDER_ID}`);
    expect(checkPathOf('data_disk', ORDER_ID)).toBe(`/center/control/changeOrderdetail?id=${ORDER_ID}`);
    expect(checkPathOf('new', ORDER_ID)).toBe(`/market/orderdetail?id=${ORDER_ID}`);
  });
});
