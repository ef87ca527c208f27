import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { InstanceItem } from '@suanli/contract/instance';
import type { MachineItem } from '@suanli/contract/machine';
import { ApiError } from '../../api/errors.ts';
import { ClonePage } from './ClonePage.tsx';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../api/client.ts', () => ({ http }));

const source = (over: Partial<InstanceItem> = {}): InstanceItem => ({
  id: 'i-abcdefghij',
  name: 'train-1',
  status: 'stopped',
  statusReason: '',
  machineId: 7,
  hostName: 'gpu-07',
  datacenterName: '华东一区',
  gpuTypeName: 'RTX 4090',
  gpuCount: 1,
  demo: true,
  cpuCores: 8,
  memoryGb: 32,
  systemDiskGb: 30,
  dataDiskGb: 80,
  imageId: 2,
  imageName: 'Debian 12',
  chargeType: 'payg',
  period: null,
  hourly: 36_000,
  noGpu: false,
  cloneSourceId: null,
  expiresAt: null,
  releaseAt: null,
  createdAt: '2026-11-23T00:00:00Z',
  startedAt: null,
  stoppedAt: '2026-11-23T01:00:00Z',
  ssh: { host: 'demo.localhost', port: 2222, user: 'i-abcdefghij', command: 'ssh -p 2222 i-abcdefghij@demo.localhost' },
  password: 'Secr3tPass',
  ...over,
});

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

function Where() {
  const loc = useLocation();
  return <div data-testid="where">{loc.pathname + loc.search}</div>;
}

function renderPage(inst: InstanceItem, path = '/control/clone?instanceId=i-abcdefghij') {
  http.get.mockImplementation(async (url: string) => {
    if (url === '/api/v1/instance/list') return { list: [inst], total: 1 };
    if (url === '/api/v1/machine/list') return { list: [machine], total: 1 };
    if (url === '/api/v1/machine/disk') return { systemDiskGb: 30, dataDiskFreeGb: 50, dataDiskMaxGb: 500, stepGb: 1, pricePerGbDay: 100 };
    throw new Error(`unexpected GET ${url}`);
  });
  http.post.mockImplementation(async (url: string) => {
    if (url === '/api/v1/order/price/preview') return { lines: [{ label: 'RTX 4090 × 1，按量', amount: 18_000 }], total: 0, hourly: 18_300, requiredBalance: 18_300 };
    if (url === '/api/v1/order/instance/clone/payg') return { id: '2026112300000009' };
    throw new Error(`unexpected POST ${url}`);
  });
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <MemoryRouter initialEntries={[path]}>
        <Routes>
          <Route path="/control/clone" element={<ClonePage />} />
          <Route path="*" element={<Where />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

/** jsdom renders antd's Select and form slowly on a busy machine. */
const SLOW = { timeout: 8_000 };

async function chooseMachine() {
  const select = await screen.findByRole('combobox', undefined, SLOW);
  await waitFor(() => expect(http.get).toHaveBeenCalledWith('/api/v1/machine/list', { page: 1, pageSize: 100 }, expect.anything()), SLOW);
  fireEvent.mouseDown(select);
  const option = await screen.findByText(/gpu-09/, { selector: '.ant-select-item-option-content, .ant-select-item-option-content *' }, SLOW);
  fireEvent.click(option);
}

describe('ClonePage', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.post.mockReset();
  });

  it('shows the source, prices the clone and orders it, then opens the check page', async () => {
    renderPage(source());
    expect((await screen.findByTestId('clone-source', undefined, SLOW)).textContent).toContain('train-1');
    expect((screen.getByTestId('clone-submit') as HTMLButtonElement).disabled).toBe(true);
    await chooseMachine();
    // The data disk starts at the source's size (80 GB > the machine's free 50 GB).
    expect((screen.getByTestId('clone-data-disk').querySelector('input') ?? screen.getByTestId('clone-data-disk')).getAttribute('value')).toBe('80');
    await waitFor(() => expect(screen.getByTestId('clone-total').textContent).toContain('¥1.83'), SLOW);
    expect(http.post).toHaveBeenCalledWith('/api/v1/order/price/preview', { machineId: 9, gpuCount: 1, imageId: 2, dataDiskGb: 80, chargeType: 'payg' }, expect.anything());
    fireEvent.click(screen.getByTestId('clone-submit'));
    await waitFor(() => expect(http.post).toHaveBeenCalledWith('/api/v1/order/instance/clone/payg', { instanceId: 'i-abcdefghij', machineId: 9, gpuCount: 1, dataDiskGb: 80 }, { silent: true }), SLOW);
    expect((await screen.findByTestId('where', undefined, SLOW)).textContent).toBe('/market/orderdetail?id=2026112300000009');
  });

  it('a running source can’t be cloned: it says to stop it', async () => {
    renderPage(source({ status: 'running' }));
    expect((await screen.findByTestId('clone-stopped-hint', undefined, SLOW)).textContent).toContain('未关机');
    await chooseMachine();
    expect((screen.getByTestId('clone-submit') as HTMLButtonElement).disabled).toBe(true);
  });

  it('shows the server’s reason when the order is refused', async () => {
    renderPage(source());
    await chooseMachine();
    await waitFor(() => expect(screen.getByTestId('clone-total')).toBeTruthy(), SLOW);
    http.post.mockImplementation(async (url: string) => {
      if (url === '/api/v1/order/price/preview') return { lines: [], total: 0, hourly: 18_300, requiredBalance: 18_300 };
      throw new ApiError(409, '该机器空闲 GPU 不足');
    });
    fireEvent.click(screen.getByTestId('clone-submit'));
    expect((await screen.findByTestId('clone-error', undefined, SLOW)).textContent).toContain('该机器空闲 GPU 不足');
  });

  it('without an instance id, or for an unknown one, says so', async () => {
    renderPage(source(), '/control/clone');
    expect(await screen.findByTestId('clone-missing')).toBeTruthy();
    cleanup();
    renderPage(source({ id: 'i-zzzzzzzzzz' }));
    expect(await screen.findByTestId('clone-not-found')).toBeTruthy();
  });
});
