import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { MemoryRouter, Route, Routes } from 'react-router';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { Order } from '@suanli/contract/order';
import { FeedbackHost } from '../../modules/FeedbackHost.tsx';
import { ApiError } from '../../api/errors.ts';
import { OrderCheckPage } from './OrderCheckPage.tsx';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../api/client.ts', () => ({ http }));

const ORDER_ID = '2026112300000001';
const order = (over: Partial<Order> = {}): Order => ({
  id: ORDER_ID,
  kind: 'new',
  status: 'unpaid',
  chargeType: 'prepaid',
  period: 'month',
  quantity: 1,
  machineId: 7,
  hostName: 'gpu-07',
  datacenterName: '华东一区',
  gpuTypeName: 'RTX 4090',
  gpuCount: 2,
  imageId: 2,
  imageName: 'Debian 12',
  dataDiskGb: 50,
  instanceName: 'train',
  lines: [{ label: 'RTX 4090 × 2，按月 × 1', amount: 3_800_000 }],
  amount: 3_800_000,
  hourly: 0,
  instanceId: null,
  sourceInstanceId: null,
  createdAt: new Date().toISOString(),
  expiresAt: new Date(Date.now() + 15 * 60_000).toISOString(),
  paidAt: null,
  closedAt: null,
  ...over,
});

function renderPage(o: Order, balance: number) {
  http.get.mockImplementation(async (url: string) => {
    if (url === `/api/v1/order/${ORDER_ID}`) return o;
    if (url === '/api/v1/account/balance') return { balance, frozenBalance: 0 };
    throw new Error(`unexpected GET ${url}`);
  });
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <FeedbackHost />
      <MemoryRouter initialEntries={[`/market/orderdetail?id=${ORDER_ID}`]}>
        <Routes>
          <Route path="/market/orderdetail" element={<OrderCheckPage />} />
          <Route path="/center/control/index" element={<div data-testid="instances-here" />} />
          <Route path="/recharge/index" element={<div data-testid="recharge-here" />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

describe('OrderCheckPage', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.post.mockReset();
    http.put.mockReset();
  });

  it('shows the lines and total, pays with an Idempotency-Key and goes to the instances', async () => {
    renderPage(order(), 5_000_000);
    expect((await screen.findByTestId('order-total')).textContent).toBe('¥380.00');
    expect(screen.getByTestId('order-lines').textContent).toContain('RTX 4090 × 2，按月 × 1');
    expect((await screen.findByTestId('check-balance')).textContent).toBe('¥500.00');
    expect(screen.getByTestId('check-countdown').textContent).toMatch(/00:1[45]:\d\d/);
    expect(screen.queryByTestId('check-short')).toBeNull();
    http.post.mockResolvedValue(order({ status: 'paid' }));
    fireEvent.click(screen.getByTestId('check-pay'));
    await screen.findByTestId('instances-here');
    expect(http.post).toHaveBeenCalledTimes(1);
    const [url, body, opts] = http.post.mock.calls[0] as [string, unknown, { headers: Record<string, string> }];
    expect(url).toBe('/api/v1/order/pay');
    expect(body).toEqual({ orderId: ORDER_ID });
    expect(opts.headers['Idempotency-Key']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('with too little balance: says how much is missing, links to recharge and does not pay', async () => {
    renderPage(order(), 1_000_000);
    const short = await screen.findByTestId('check-short');
    expect(short.textContent).toContain('¥280.00');
    expect((screen.getByTestId('check-pay') as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByTestId('check-recharge'));
    await screen.findByTestId('recharge-here');
    expect(http.post).not.toHaveBeenCalled();
  });

  it('pay-as-you-go needs one hour of running in the balance', async () => {
    renderPage(order({ chargeType: 'payg', period: null, quantity: null, amount: 0, hourly: 72_000, lines: [{ label: 'RTX 4090 × 2，按量', amount: 72_000 }] }), 50_000);
    const short = await screen.findByTestId('check-short');
    expect(short.textContent).toContain('¥7.20');
    expect(short.textContent).toContain('¥2.20');
  });

  it('when the server answers short balance, the same message shows and the next click gets a new key; a lost answer keeps it', async () => {
    renderPage(order(), 5_000_000);
    await screen.findByTestId('check-balance');
    http.post.mockRejectedValueOnce(new ApiError(0, '网络不稳定，请稍后重试'));
    fireEvent.click(screen.getByTestId('check-pay'));
    await screen.findByTestId('check-pay-error');
    http.post.mockRejectedValueOnce(new ApiError(409, '余额不足', 'INSUFFICIENT_BALANCE'));
    fireEvent.click(screen.getByTestId('check-pay'));
    await screen.findByTestId('check-short');
    const keys = http.post.mock.calls.map((c) => (c[2] as { headers: Record<string, string> }).headers['Idempotency-Key']);
    // The lost answer's retry reused its key.
    expect(keys[0]).toBe(keys[1]);
  });

  it('cancels only after confirming', async () => {
    renderPage(order(), 5_000_000);
    await screen.findByTestId('check-balance');
    http.put.mockResolvedValue(order({ status: 'cancelled' }));
    fireEvent.click(screen.getByTestId('check-cancel'));
    expect(http.put).not.toHaveBeenCalled();
    const confirm = (await screen.findAllByText(/^取消订单$/)).map((e) => e.closest('button')).find((b) => b && !b.dataset.testid);
    if (!confirm) throw new Error('no confirm button');
    fireEvent.click(confirm);
    await waitFor(() => expect(http.put).toHaveBeenCalledWith(`/api/v1/order/${ORDER_ID}/cancel`, undefined, { silent: true }));
  });

  it('an order already closed offers no payment', async () => {
    renderPage(order({ status: 'expired' }), 5_000_000);
    expect((await screen.findByTestId('check-closed')).textContent).toContain('已过期');
    expect(screen.queryByTestId('check-pay')).toBeNull();
  });
});
