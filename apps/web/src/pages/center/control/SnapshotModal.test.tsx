import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { InstanceItem } from '@suanli/contract/instance';
import type { UserImage } from '@suanli/contract/instance-ops';
import { ApiError } from '../../../api/errors.ts';
import { SnapshotModal } from './SnapshotModal.tsx';
import { IMAGE_POLL_MS } from '../../../api/queries/images.ts';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../../api/client.ts', () => ({ http }));

const inst = { id: 'i-abcdefghij', name: 'train-1', status: 'stopped' } as InstanceItem;
const image = (over: Partial<UserImage> = {}) => ({ id: 41, name: 'torch-env', status: 'building', progress: 0, error: '', createdAt: new Date().toISOString(), ...over }) as UserImage;

function renderModal(instance: InstanceItem, onClose = vi.fn()) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <MemoryRouter>
        <SnapshotModal instance={instance} onClose={onClose} />
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return onClose;
}

describe('SnapshotModal', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.post.mockReset();
    vi.useRealTimers();
  });

  it('asks for a name, saves, then follows the progress until ready', async () => {
    renderModal(inst);
    expect(screen.getByTestId('snapshot-stopped-hint').textContent).toContain('关机');
    fireEvent.click(screen.getByTestId('snapshot-submit'));
    expect(await screen.findByText('请输入镜像名称')).toBeTruthy();
    expect(http.post).not.toHaveBeenCalled();
    fireEvent.change(screen.getByTestId('snapshot-name'), { target: { value: ' torch-env ' } });
    fireEvent.change(screen.getByTestId('snapshot-description'), { target: { value: 'PyTorch 环境' } });
    http.post.mockResolvedValue(image());
    let ready = false;
    http.get.mockImplementation(async (url: string) => {
      if (url !== '/api/v1/instance/snapshot') throw new Error(`unexpected GET ${url}`);
      return { list: [ready ? image({ status: 'ready', progress: 100 }) : image({ progress: 40 })] };
    });
    fireEvent.click(screen.getByTestId('snapshot-submit'));
    await waitFor(() => expect(http.post).toHaveBeenCalledWith('/api/v1/instance/snapshot', { instanceId: 'i-abcdefghij', name: 'torch-env', description: 'PyTorch 环境' }, { silent: true }));
    await waitFor(() => expect(screen.getByTestId('snapshot-progress').dataset.percent).toBe('40'));
    ready = true;
    expect(await screen.findByTestId('snapshot-done', undefined, { timeout: IMAGE_POLL_MS + 3_000 })).toBeTruthy();
    expect(screen.getByTestId('snapshot-images-link').getAttribute('href')).toBe('/center/image/index');
  });

  it('lists the images saved from the instance before', async () => {
    http.get.mockResolvedValue({ list: [image({ id: 40, name: 'older', status: 'ready', progress: 100 })] });
    renderModal(inst);
    expect((await screen.findByTestId('snapshot-history')).textContent).toContain('older');
  });

  it('shows the failure reason of a failed save', async () => {
    renderModal(inst);
    fireEvent.change(screen.getByTestId('snapshot-name'), { target: { value: 'x' } });
    http.post.mockResolvedValue(image());
    http.get.mockResolvedValue({ list: [image({ status: 'failed', error: '磁盘空间不足' })] });
    fireEvent.click(screen.getByTestId('snapshot-submit'));
    expect((await screen.findByTestId('snapshot-failed')).textContent).toContain('磁盘空间不足');
  });

  it('a running instance: says to stop it and does not submit; the server’s 409 shows', async () => {
    renderModal({ ...inst, status: 'running' });
    expect(screen.getByTestId('snapshot-stopped-hint').textContent).toContain('请先关机');
    expect((screen.getByTestId('snapshot-submit') as HTMLButtonElement).disabled).toBe(true);
    cleanup();
    renderModal(inst);
    fireEvent.change(screen.getByTestId('snapshot-name'), { target: { value: 'x' } });
    http.post.mockRejectedValue(new ApiError(409, '实例需关机后才能保存镜像'));
    fireEvent.click(screen.getByTestId('snapshot-submit'));
    expect((await screen.findByTestId('snapshot-error')).textContent).toContain('实例需关机后才能保存镜像');
  });
});
