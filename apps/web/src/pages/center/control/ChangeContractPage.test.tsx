import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { ApiError } from '../../../api/errors.ts';
import { ChangeContractPage } from './ChangeContractPage.tsx';
import { RenewalPage } from './RenewalPage.tsx';
import { INST_ID, inst, listAnswer, order, prepaidInst, preview, renderAt } from './ops-test-utils.tsx';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../../api/client.ts', () => ({ http }));

function serve(instances = [inst()]) {
  http.get.mockImplementation(async (url: string, params: { keyword?: string }) => {
    if (url === '/api/v1/instance/list') return listAnswer(instances.filter((i) => i.id === params.keyword));
    throw new Error(`unexpected GET ${url}`);
  });
}

describe('ChangeContractPage (pay-as-you-go → prepaid)', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.post.mockReset();
  });

  it('prices the chosen period and quantity, creates the order and goes to the check page', async () => {
    serve();
    http.post.mockImplementation(async (url: string, body: { period: string; quantity: number }) => {
      if (url === '/api/v1/order/charge_type/prepay/preview') return preview({ amount: 1_900_000 * body.quantity, lines: [{ label: `包月 × ${body.quantity}`, amount: 1_900_000 * body.quantity }] });
      if (url === '/api/v1/order/charge_type/prepay') return order();
      throw new Error(`unexpected POST ${url}`);
    });
    renderAt(`/center/control/changeContract?instanceId=${INST_ID}`, '/center/control/changeContract', <ChangeContractPage />);
    expect((await screen.findByTestId('change-contract-total')).textContent).toBe('¥190.00');
    expect(http.post).toHaveBeenCalledWith('/api/v1/order/charge_type/prepay/preview', { instanceId: INST_ID, period: 'month', quantity: 1 }, expect.objectContaining({ silent: true }));
    fireEvent.change(screen.getByTestId('change-contract-quantity'), { target: { value: '3' } });
    await waitFor(() => expect(screen.getByTestId('change-contract-total').textContent).toBe('¥570.00'));
    fireEvent.click(screen.getByTestId('change-contract-submit'));
    await screen.findByTestId('check-here');
    expect(http.post).toHaveBeenCalledWith('/api/v1/order/charge_type/prepay', { instanceId: INST_ID, period: 'month', quantity: 3 }, { silent: true });
  });

  it('shows the server’s reason when the order is refused', async () => {
    serve([inst({ status: 'stopped' })]);
    http.post.mockImplementation(async (url: string) => {
      if (url.endsWith('/preview')) return preview();
      throw new ApiError(409, '该机器的 GPU 已被占用，剩余 0 卡');
    });
    renderAt(`/center/control/changeContract?instanceId=${INST_ID}`, '/center/control/changeContract', <ChangeContractPage />);
    await screen.findByTestId('change-contract-total');
    fireEvent.click(screen.getByTestId('change-contract-submit'));
    expect((await screen.findByTestId('change-contract-error')).textContent).toContain('剩余 0 卡');
  });

  it('a prepaid instance is not offered the conversion; a missing id says where to go', async () => {
    serve([prepaidInst()]);
    renderAt(`/center/control/changeContract?instanceId=${INST_ID}`, '/center/control/changeContract', <ChangeContractPage />);
    await screen.findByTestId('change-contract-not-payg');
    cleanup();
    renderAt('/center/control/changeContract', '/center/control/changeContract', <ChangeContractPage />);
    await screen.findByTestId('ops-missing-instance');
    expect(http.post).not.toHaveBeenCalled();
  });

  it('an unknown instance answers not found; a failed load offers a retry', async () => {
    serve([]);
    renderAt(`/center/control/changeContract?instanceId=${INST_ID}`, '/center/control/changeContract', <ChangeContractPage />);
    await screen.findByTestId('ops-not-found');
    cleanup();
    http.get.mockRejectedValue(new ApiError(0, '网络不稳定，请稍后重试'));
    renderAt(`/center/control/changeContract?instanceId=${INST_ID}`, '/center/control/changeContract', <ChangeContractPage />);
    expect((await screen.findByTestId('ops-load-error')).textContent).toContain('网络不稳定');
  });
});

describe('RenewalPage', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.post.mockReset();
  });

  it('renews an expired, unreleased prepaid instance: period, price, order, check page', async () => {
    const expired = new Date(Date.now() - 86_400_000).toISOString();
    serve([prepaidInst({ status: 'stopped', expiresAt: expired, releaseAt: new Date(Date.now() + 6 * 86_400_000).toISOString() })]);
    http.post.mockImplementation(async (url: string, body: { period: string }) => {
      if (url === '/api/v1/order/instance/renewal/preview') return preview({ amount: body.period === 'week' ? 500_000 : 1_900_000, expiresAt: '2026-12-30T00:00:00Z' });
      if (url === '/api/v1/order/instance/renewal') return order({ kind: 'renewal' });
      throw new Error(`unexpected POST ${url}`);
    });
    renderAt(`/center/control/renewal?instanceId=${INST_ID}`, '/center/control/renewal', <RenewalPage />);
    expect((await screen.findByTestId('renewal-expired')).textContent).toContain('到期');
    expect((await screen.findByTestId('renewal-total')).textContent).toBe('¥190.00');
    fireEvent.click(screen.getByText('包周'));
    await waitFor(() => expect(screen.getByTestId('renewal-total').textContent).toBe('¥50.00'));
    expect(screen.getByTestId('renewal-expiry').textContent).toMatch(/^2026-12-30/);
    fireEvent.click(screen.getByTestId('renewal-submit'));
    await screen.findByTestId('check-here');
    expect(http.post).toHaveBeenCalledWith('/api/v1/order/instance/renewal', { instanceId: INST_ID, period: 'week', quantity: 1 }, { silent: true });
  });

  it('a pay-as-you-go instance needs no renewal', async () => {
    serve([inst()]);
    renderAt(`/center/control/renewal?instanceId=${INST_ID}`, '/center/control/renewal', <RenewalPage />);
    await screen.findByTestId('renewal-not-prepaid');
  });
});

