import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { ApiError } from '../../../api/errors.ts';
import { ChangeContractPreviewPage } from './ChangeContractPreviewPage.tsx';
import { INST_ID, inst, listAnswer, order, prepaidInst, preview, renderAt } from './ops-test-utils.tsx';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../../api/client.ts', () => ({ http }));

const URL = `/center/control/changeContractPreview?instanceId=${INST_ID}`;
const PATH = '/center/control/changeContractPreview';

function serve(instances = [prepaidInst()]) {
  http.get.mockImplementation(async (url: string, params: { keyword?: string }) => {
    if (url === '/api/v1/instance/list') return listAnswer(instances.filter((i) => i.id === params.keyword));
    throw new Error(`unexpected GET ${url}`);
  });
}

const refundPreview = preview({ lines: [{ label: '退还未使用时长（按秒）', amount: -1_234_500 }], amount: -1_234_500, hourly: 36_000, remainingSeconds: 2 * 86_400 + 3_600 + 5, expiresAt: null });

async function confirmDialog() {
  // A dialog closed a moment ago may still be leaving: the newest one is last.
  const dialog = (await screen.findAllByRole('dialog')).at(-1)!;
  const ok = within(dialog).getAllByRole('button').find((b) => /确认转为按量/.test(b.textContent ?? ''));
  if (!ok) throw new Error('no confirm button');
  return { dialog, ok };
}

describe('ChangeContractPreviewPage (prepaid → pay-as-you-go)', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.post.mockReset();
  });

  it('shows the refund, time left and new hourly price; converts only after confirming and links to income and expense', async () => {
    serve();
    http.post.mockImplementation(async (url: string) => {
      if (url === '/api/v1/order/charge_type/payg/preview') return refundPreview;
      if (url === '/api/v1/order/charge_type/payg') return order({ status: 'paid', amount: -1_234_000, chargeType: 'payg' });
      throw new Error(`unexpected POST ${url}`);
    });
    renderAt(URL, PATH, <ChangeContractPreviewPage />);
    expect((await screen.findByTestId('payg-preview-refund')).textContent).toBe('¥123.45');
    expect(screen.getByTestId('payg-preview-remaining').textContent).toBe('2天1小时0分5秒');
    expect(screen.getByTestId('payg-preview-hourly').textContent).toBe('¥3.60/小时');
    fireEvent.click(screen.getByTestId('payg-confirm'));
    const { dialog, ok } = await confirmDialog();
    expect(dialog.textContent).toContain('¥123.45');
    expect(http.post).not.toHaveBeenCalledWith('/api/v1/order/charge_type/payg', expect.anything(), expect.anything());
    fireEvent.click(ok);
    expect((await screen.findByTestId('payg-refunded')).textContent).toContain('¥123.40');
    expect(http.post).toHaveBeenCalledWith('/api/v1/order/charge_type/payg', { instanceId: INST_ID }, { silent: true });
    fireEvent.click(screen.getByTestId('payg-to-income'));
    await screen.findByTestId('income-here');
  });

  it('cancelling the dialog converts nothing; a refusal shows the server’s reason', async () => {
    serve([prepaidInst({ status: 'running' })]);
    http.post.mockImplementation(async (url: string) => {
      if (url.endsWith('/preview')) return refundPreview;
      throw new ApiError(409, '余额不足：转为按量计费后需至少够 1 小时费用');
    });
    renderAt(URL, PATH, <ChangeContractPreviewPage />);
    await screen.findByTestId('payg-preview-refund');
    fireEvent.click(screen.getByTestId('payg-confirm'));
    const { dialog } = await confirmDialog();
    const cancel = within(dialog).getAllByRole('button').find((b) => /取\s*消/.test(b.textContent ?? ''));
    fireEvent.click(cancel!);
    await waitFor(() => expect(http.post).toHaveBeenCalledTimes(1));
    fireEvent.click(screen.getByTestId('payg-confirm'));
    const { ok } = await confirmDialog();
    fireEvent.click(ok);
    expect((await screen.findByTestId('payg-error')).textContent).toContain('至少够 1 小时');
    expect(screen.queryByTestId('payg-success')).toBeNull();
  });

  it('a failed preview shows why and offers no conversion; a pay-as-you-go instance is not offered it', async () => {
    serve();
    http.post.mockRejectedValue(new ApiError(409, '实例正在克隆，暂不能操作'));
    renderAt(URL, PATH, <ChangeContractPreviewPage />);
    expect((await screen.findByTestId('payg-preview-error')).textContent).toContain('正在克隆');
    expect((screen.getByTestId('payg-confirm') as HTMLButtonElement).disabled).toBe(true);
    cleanup();
    serve([inst()]);
    renderAt(URL, PATH, <ChangeContractPreviewPage />);
    await screen.findByTestId('payg-not-prepaid');
  });
});
