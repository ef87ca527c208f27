import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { ImageItem, MachineItem } from '@suanli/contract/machine';
import { ApiError } from '../../api/errors.ts';
import { CreateInstancePage } from './CreateInstancePage.tsx';
import { MarketPage } from './MarketPage.tsx';

/** Issue #10 (images): `?imageId=` from 我的镜像 or the community survives the market and is preselected. */

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../api/client.ts', () => ({ http }));

const machine: MachineItem = {
  id: 9,
  datacenterId: 1,
  datacenterName: '华东一区',
  hostName: 'gpu-09',
  gpuType: { id: 1, name: 'RTX 4090', memoryGb: 24, vendor: 'NVIDIA' },
  gpuTotal: 8,
  gpuFree: 4,
  cpuPerGpu: 8,
  memoryGbPerGpu: 32,
  systemDiskGb: 30,
  dataDiskFreeGb: 50,
  dataDiskMaxGb: 500,
  dataDiskPricePerGbDay: 100,
  prices: { hour: 18_000, day: 400_000, week: 2_500_000, month: 9_000_000, year: 90_000_000 },
  tags: [],
  online: true,
  demo: true,
  rentable: true,
};
const img = (id: number, name: string): ImageItem => ({ id, name, description: '', os: 'Debian 12', contents: [], status: 'ready', progress: 100, sizeBytes: 1, createdAt: '2026-11-01T00:00:00Z' });
const community = { ...img(77, 'sd-webui'), kind: 'private', mine: false, shared: true, authorName: '李**', useCount: 3 };

function Where() {
  const loc = useLocation();
  return <div data-testid="where">{loc.pathname + loc.search}</div>;
}

function renderAt(path: string) {
  http.get.mockImplementation(async (url: string) => {
    if (url === '/api/v1/machine/list') return { list: [machine], total: 1 };
    if (url === '/api/v1/machine/disk') return { systemDiskGb: 30, dataDiskFreeGb: 50, dataDiskMaxGb: 500, stepGb: 1, pricePerGbDay: 100 };
    if (url === '/api/v1/image/all') return [img(2, 'Debian 12'), img(3, 'PyTorch')];
    if (url === '/api/v1/image/community/77') return community;
    if (url === '/api/v1/machine/gpu_type' || url === '/api/v1/common/tag') return [];
    throw new ApiError(404, '镜像不存在');
  });
  http.post.mockResolvedValue({ lines: [], total: 0, hourly: 18_000, requiredBalance: 18_000 });
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <MemoryRouter initialEntries={[path]}>
        <Routes>
          <Route path="/market/index" element={<MarketPage />} />
          <Route path="/market/create" element={<CreateInstancePage />} />
          <Route path="*" element={<Where />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

/** The create page renders antd's whole form: slow in jsdom on a busy machine. */
const SLOW = { timeout: 8_000 };
const checked = (id: number) => {
  const el = screen.getByTestId(`create-image-${id}`);
  return ((el instanceof HTMLInputElement ? el : el.querySelector('input')) as HTMLInputElement).checked;
};

describe('?imageId= on the market and create pages', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.post.mockReset();
  });

  it('the market names the chosen image and its 租用 carries it to the create page', async () => {
    renderAt('/market/index?imageId=77');
    await waitFor(() => expect(screen.getByTestId('market-image-chosen').textContent).toContain('sd-webui'), SLOW);
    fireEvent.click(await screen.findByTestId('market-rent'));
    await screen.findByTestId('create-form', undefined, SLOW);
    await waitFor(() => expect(checked(77)).toBe(true), SLOW);
    expect(screen.getByTestId('create-image-extra').textContent).toBe('社区镜像');
  });

  it('preselects a listed image', async () => {
    renderAt('/market/create?machineId=9&imageId=3');
    await screen.findByTestId('create-image', undefined, SLOW);
    await waitFor(() => expect(checked(3)).toBe(true));
    expect(checked(2)).toBe(false);
    expect(screen.queryByTestId('create-image-extra')).toBeNull();
  });

  it('an unknown image: says so and falls back to the first ready one', async () => {
    renderAt('/market/create?machineId=9&imageId=99');
    expect(await screen.findByTestId('create-image-missing', undefined, SLOW)).toBeTruthy();
    await waitFor(() => expect(checked(2)).toBe(true));
  });
});
