import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { App as AntApp } from 'antd';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { FlaggedPaymentsPage } from '@suanli/contract/payment';
import { LatePaymentsCard } from './LatePaymentsCard.tsx';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../api/client.ts', () => ({ http }));

const page: FlaggedPaymentsPage = {
  list: [
    {
      id: '6f1c2d3e-0000-4000-8000-000000000001',
      amount: 70_000,
      method: 'alipay',
      status: 'paid',
      payUrl: null,
      qrCode: null,
      createdAt: '2026-11-01T08:00:00+08:00',
      expiresAt: '2026-11-01T08:15:00+08:00',
      paidAt: '2026-11-01T08:20:00+08:00',
      userId: 4,
      userPhone: '13700001111',
      gatewayTradeNo: '2026110122001400001',
      flag: 'late',
    },
  ],
  total: 1,
};

describe('LatePaymentsCard', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
  });

  it('#13 lists the payments credited after their expiry for the operator', async () => {
    http.get.mockResolvedValue(page);
    render(
      <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
        <AntApp>
          <LatePaymentsCard />
        </AntApp>
      </QueryClientProvider>,
    );
    expect(await screen.findByText('13700001111')).toBeTruthy();
    expect(http.get).toHaveBeenCalledWith('/api/v1/operate/payments', { flag: 'late', page: 1, pageSize: 10 }, { silent: true });
    const card = screen.getByTestId('operate-late-payments').textContent ?? '';
    expect(card).toContain('¥7.00');
    expect(card).toContain('支付宝');
    expect(card).toContain('2026110122001400001');
    expect(card).toContain('共 1 笔');
  });
});
