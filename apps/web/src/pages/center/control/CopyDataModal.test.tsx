import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { InstanceItem } from '@suanli/contract/instance';
import type { CopyJob } from '@suanli/contract/instance-ops';
import { FeedbackHost } from '../../../modules/FeedbackHost.tsx';
import { CopyDataModal } from './CopyDataModal.tsx';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../../api/client.ts', () => ({ http }));

const me = { id: 'i-aaaaaaaaaa', name: 'train-1', status: 'running' } as InstanceItem;
const other = { id: 'i-bbbbbbbbbb', name: 'infer-2', status: 'stopped' } as InstanceItem;
const job = (over: Partial<CopyJob> = {}): CopyJob => ({
  id: 'cp-abcdefghijkl',
  sourceInstanceId: me.id,
  sourceInstanceName: me.name,
  targetInstanceId: other.id,
  targetInstanceName: other.name,
  sourcePath: 'datasets',
  targetPath: '',
  status: 'running',
  totalBytes: 4 * 1024 ** 3,
  copiedBytes: 1024 ** 3,
  percent: 25,
  files: 120,
  error: '',
  createdAt: '2026-11-23T00:00:00Z',
  startedAt: '2026-11-23T00:00:01Z',
  finishedAt: null,
  ...over,
});

function renderModal(status: () => CopyJob, earlier: CopyJob[] = []) {
  http.get.mockImplementation(async (url: string, params?: { instanceId?: string }) => {
    if (url === '/api/v1/instance/copy_data_status' && params?.instanceId) return { list: earlier };
    if (url === '/api/v1/instance/list') return { list: [me, other], total: 2 };
    if (url === '/api/v1/instance/user_left_migrate') return { list: [{ instanceId: 'i-cccccccccc', name: 'old-3', status: 'stopped', machineId: 3, hostName: 'gpu-03', machineOnline: false, dataDiskGb: 50, reason: '机器已下线' }] };
    if (url === '/api/v1/instance/copy_data_status') return status();
    throw new Error(`unexpected GET ${url}`);
  });
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <FeedbackHost />
      <MemoryRouter>
        <CopyDataModal instance={me} onClose={vi.fn()} />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

/** jsdom renders antd's Select slowly on a busy machine. */
const SLOW = { timeout: 8_000 };

async function pickTarget(text: RegExp) {
  const select = screen.getByRole('combobox');
  await waitFor(() => expect(http.get).toHaveBeenCalledWith('/api/v1/instance/user_left_migrate', undefined, expect.anything()), SLOW);
  fireEvent.mouseDown(select);
  fireEvent.click(await screen.findByText(text, { selector: '.ant-select-item-option-content, .ant-select-item-option-content *' }, SLOW));
}

describe('CopyDataModal', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.post.mockReset();
  });

  it('offers the user’s other instances (also migratable ones), copies and shows live progress', async () => {
    let current = job();
    renderModal(() => current);
    expect((screen.getByTestId('copy-submit') as HTMLButtonElement).disabled).toBe(true);
    fireEvent.mouseDown(screen.getByRole('combobox'));
    expect(await screen.findByText(/old-3/, { selector: '.ant-select-item-option-content, .ant-select-item-option-content *' }, SLOW)).toBeTruthy();
    await pickTarget(/infer-2/);
    fireEvent.change(screen.getByTestId('copy-source-path'), { target: { value: '../etc' } });
    expect(await screen.findByText('路径不能包含 ..')).toBeTruthy();
    expect((screen.getByTestId('copy-submit') as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(screen.getByTestId('copy-source-path'), { target: { value: ' datasets ' } });
    http.post.mockResolvedValue(job({ status: 'queued', percent: 0, copiedBytes: 0 }));
    fireEvent.click(screen.getByTestId('copy-submit'));
    await waitFor(() => expect(http.post).toHaveBeenCalledWith('/api/v1/instance/copy_data', { sourceInstanceId: me.id, targetInstanceId: other.id, sourcePath: 'datasets', targetPath: '' }, { silent: true }), SLOW);
    await waitFor(() => expect(screen.getByTestId('copy-progress').dataset.percent).toBe('25'), SLOW);
    expect(screen.getByTestId('copy-bytes').textContent).toContain('1 GB / 4 GB');
    current = job({ status: 'succeeded', percent: 100, copiedBytes: 4 * 1024 ** 3, finishedAt: '2026-11-23T00:01:00Z' });
    await waitFor(() => expect(screen.getByTestId('copy-status').dataset.status).toBe('succeeded'), { timeout: 8_000 });
    expect(screen.queryByTestId('copy-terminate')).toBeNull();
  });

  it('copies the other way round, terminates after confirming, and shows a failure’s reason', async () => {
    let current = job({ sourceInstanceId: other.id, targetInstanceId: me.id });
    renderModal(() => current);
    fireEvent.click(screen.getByText('拷贝到本实例'));
    await pickTarget(/infer-2/);
    http.post.mockResolvedValue(current);
    fireEvent.click(screen.getByTestId('copy-submit'));
    await waitFor(() => expect(http.post).toHaveBeenCalledWith('/api/v1/instance/copy_data', { sourceInstanceId: other.id, targetInstanceId: me.id, sourcePath: '', targetPath: '' }, { silent: true }), SLOW);
    http.post.mockReset();
    fireEvent.click(await screen.findByTestId('copy-terminate'));
    expect(http.post).not.toHaveBeenCalled();
    http.post.mockResolvedValue(null);
    fireEvent.click(await screen.findByTestId('copy-terminate-ok'));
    await waitFor(() => expect(http.post).toHaveBeenCalledWith('/api/v1/instance/terminate_copy', { id: 'cp-abcdefghijkl' }, { silent: true }), SLOW);
    current = job({ status: 'failed', error: '目标实例数据盘空间不足' });
    expect((await screen.findByTestId('copy-error', undefined, { timeout: 8_000 })).textContent).toContain('目标实例数据盘空间不足');
  });

  it('picks up a copy still running from an earlier visit', async () => {
    renderModal(() => job({ percent: 60 }), [job({ percent: 50 }), job({ id: 'cp-zzzzzzzzzzzz', status: 'succeeded' })]);
    const active = await screen.findByTestId('copy-active');
    expect(active.textContent).toContain('train-1 → infer-2');
    expect(screen.getAllByTestId('copy-resume')).toHaveLength(1);
    fireEvent.click(screen.getByTestId('copy-resume'));
    await waitFor(() => expect(screen.getByTestId('copy-progress').dataset.percent).toBe('60'), SLOW);
    expect(screen.getByTestId('copy-terminate')).toBeTruthy();
  });
});
