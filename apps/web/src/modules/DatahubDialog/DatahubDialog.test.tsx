import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { FeedbackHost } from '../FeedbackHost.tsx';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { Datahub } from '@suanli/contract/datahub';
import { DatahubDialog } from './DatahubDialog.tsx';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../api/client.ts', () => ({ http }));

const DC = { dataCenterId: 7, dataCenterName: '北京 A 区' };
const activating: Datahub = { name: 'datahub-7', status: 0, dataCenterId: 7, activatedAt: null };
const activated: Datahub = { name: 'datahub-7', status: 1, dataCenterId: 7, activatedAt: '2026-11-01T08:00:05+08:00' };

function renderDialog(props: Partial<Parameters<typeof DatahubDialog>[0]> = {}) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const onActivated = vi.fn();
  const onClose = vi.fn();
  const utils = render(
    <QueryClientProvider client={client}>
      <>
        <FeedbackHost />
        <DatahubDialog datacenter={DC} open onClose={onClose} onActivated={onActivated} {...props} />
      </>
    </QueryClientProvider>,
  );
  return { ...utils, onActivated, onClose };
}

const statusTag = () => screen.getByTestId('datahub-status');

describe('DatahubDialog', () => {
  beforeEach(() => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    http.get.mockReset();
    http.post.mockReset();
  });
  afterEach(() => {
    cleanup();
    vi.useRealTimers();
  });

  it('activates, polls every 3 s while activating, then stops and notifies the parent once', async () => {
    const answers: (Datahub | null)[] = [null, activating, activated];
    http.get.mockImplementation(async () => (answers.length > 1 ? answers.shift() : answers[0]) ?? null);
    http.post.mockResolvedValue(activating);
    const { onActivated } = renderDialog();

    await waitFor(() => expect(statusTag().textContent).toContain('待激活'));
    expect(screen.getByTestId('datahub-name')).toHaveProperty('value', 'datahub-7');
    fireEvent.click(screen.getByTestId('datahub-activate'));

    await waitFor(() => expect(statusTag().textContent).toContain('激活中'));
    expect(http.post).toHaveBeenCalledWith('/api/v1/ai-web/datahub', { center_id: 7, name: 'datahub-7' });
    expect(http.get).toHaveBeenCalledTimes(1);

    await act(() => vi.advanceTimersByTimeAsync(3_000)); // still activating
    expect(http.get).toHaveBeenCalledTimes(2);
    expect(statusTag().textContent).toContain('激活中');
    expect(onActivated).not.toHaveBeenCalled();

    await act(() => vi.advanceTimersByTimeAsync(3_000)); // now activated
    await waitFor(() => expect(statusTag().textContent).toContain('已激活'));
    expect(http.get).toHaveBeenCalledTimes(3);
    expect(onActivated).toHaveBeenCalledTimes(1);
    expect(onActivated).toHaveBeenCalledWith(activated);
    await waitFor(() => expect(document.body.textContent).toContain('操作成功'));

    await act(() => vi.advanceTimersByTimeAsync(9_000)); // polling has stopped
    expect(http.get).toHaveBeenCalledTimes(3);
    expect(onActivated).toHaveBeenCalledTimes(1);
  });

  it('shows an activated datahub without activating or notifying', async () => {
    http.get.mockResolvedValue(activated);
    const { onActivated } = renderDialog();
    await waitFor(() => expect(statusTag().textContent).toContain('已激活'));
    expect(screen.queryByTestId('datahub-activate')).toBeNull();
    expect(screen.getByTestId('datahub-name-value').textContent).toBe('datahub-7');
    await act(() => vi.advanceTimersByTimeAsync(6_000));
    expect(http.get).toHaveBeenCalledTimes(1);
    expect(onActivated).not.toHaveBeenCalled();
  });

  it('shows the load error with a retry', async () => {
    http.get.mockRejectedValueOnce(new Error('网络不稳定，请稍后重试')).mockResolvedValue(null);
    renderDialog();
    await waitFor(() => expect(screen.getByTestId('datahub-dialog').textContent).toContain('数据中转站状态加载失败'));
    fireEvent.click(screen.getByRole('button', { name: /重\s*试/ }));
    await waitFor(() => expect(statusTag().textContent).toContain('待激活'));
  });
});
