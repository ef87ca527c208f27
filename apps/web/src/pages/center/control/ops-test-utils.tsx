import type { ReactElement } from 'react';
import { configure, render } from '@testing-library/react';
import { MemoryRouter, Route, Routes } from 'react-router';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { InstanceItem } from '@suanli/contract/instance';
import type { Order } from '@suanli/contract/order';
import type { ChangePreview } from '@suanli/contract/instance-ops';
import { FeedbackHost } from '../../../modules/FeedbackHost.tsx';

/** Test data and rendering of the issue #10 pages (only the tests import this). */

// The machine is shared and busy: a debounced preview may take longer than the default second.
configure({ asyncUtilTimeout: 8_000 });

export const INST_ID = 'i-abcdefghij';
export const ORDER_ID = '2026112300000001';

export const inst = (over: Partial<InstanceItem> = {}): InstanceItem => ({
  id: INST_ID,
  name: 'train-1',
  status: 'running',
  statusReason: '',
  machineId: 7,
  hostName: 'gpu-07',
  datacenterName: '华东一区',
  gpuTypeName: 'RTX 4090',
  gpuCount: 1,
  demo: false,
  cpuCores: 8,
  memoryGb: 32,
  systemDiskGb: 30,
  dataDiskGb: 50,
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
  startedAt: '2026-11-23T00:00:00Z',
  stoppedAt: null,
  ssh: { host: 'demo.localhost', port: 2222, user: INST_ID, command: `ssh -p 2222 ${INST_ID}@demo.localhost` },
  password: 'Secr3tPass',
  ...over,
});

export const prepaidInst = (over: Partial<InstanceItem> = {}) =>
  inst({ chargeType: 'prepaid', period: 'month', hourly: 0, expiresAt: new Date(Date.now() + 20 * 86_400_000).toISOString(), ...over });

export const order = (over: Partial<Order> = {}): Order => ({
  id: ORDER_ID,
  kind: 'charge_type',
  status: 'unpaid',
  chargeType: 'prepaid',
  period: 'month',
  quantity: 1,
  machineId: 7,
  hostName: 'gpu-07',
  datacenterName: '华东一区',
  gpuTypeName: 'RTX 4090',
  gpuCount: 1,
  imageId: 2,
  imageName: 'Debian 12',
  dataDiskGb: 50,
  instanceName: 'train-1',
  lines: [{ label: 'RTX 4090 × 1，包月 × 1', amount: 1_900_000 }],
  amount: 1_900_000,
  hourly: 0,
  instanceId: INST_ID,
  sourceInstanceId: null,
  createdAt: new Date().toISOString(),
  expiresAt: new Date(Date.now() + 15 * 60_000).toISOString(),
  paidAt: null,
  closedAt: null,
  ...over,
});

export const preview = (over: Partial<ChangePreview> = {}): ChangePreview => ({
  instanceId: INST_ID,
  lines: [{ label: 'RTX 4090 × 1，包月 × 1', amount: 1_900_000 }],
  amount: 1_900_000,
  hourly: 0,
  expiresAt: null,
  remainingSeconds: 0,
  ...over,
});

/** GET /api/v1/instance/list answering with the instances given (the pages find theirs by keyword). */
export const listAnswer = (list: InstanceItem[]) => ({ list, total: list.length });

const STAND_INS: Record<string, string> = {
  '/center/control/index': 'instances-here',
  '/center/control/changeOrderdetail': 'check-here',
  '/center/expense/incomeExpend': 'income-here',
  '/recharge/index': 'recharge-here',
  '/center/control/expand/control': 'expand-here',
};

/** The page at `url`, with stand-ins for the pages it may go to. */
export function renderAt(url: string, path: string, element: ReactElement) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <FeedbackHost />
      <MemoryRouter initialEntries={[url]}>
        <Routes>
          <Route path={path} element={element} />
          {Object.entries(STAND_INS)
            .filter(([p]) => p !== path)
            .map(([p, id]) => (
              <Route key={p} path={p} element={<div data-testid={id} />} />
            ))}
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}
