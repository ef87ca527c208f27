import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, within } from '@testing-library/react';
import type { InstanceDiskUsage } from '@suanli/contract/instance-ops';
import { ApiError } from '../../../api/errors.ts';
import { renderAt } from '../control/ops-test-utils.tsx';
import { SystemDiskPage } from './SystemDiskPage.tsx';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../../api/client.ts', () => ({ http }));

const GIB = 1024 ** 3;
const usage = (over: Partial<InstanceDiskUsage> = {}): InstanceDiskUsage => ({
  instanceId: 'i-abcdefghij',
  name: 'train-1',
  status: 'running',
  systemDiskGb: 30,
  systemUsedBytes: 3 * GIB,
  dataDiskGb: 50,
  dataUsedBytes: 10 * GIB,
  dataTotalBytes: 50 * GIB,
  warn: false,
  ...over,
});

function serve(list: InstanceDiskUsage[]) {
  http.get.mockImplementation(async (url: string) => {
    if (url === '/api/v1/instance/disk_usage') return { list };
    throw new Error(`unexpected GET ${url}`);
  });
}

describe('SystemDiskPage', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
  });

  it('shows each instance’s system and data disk usage, warns above 90 % and links to the data disk expansion', async () => {
    serve([usage(), usage({ instanceId: 'i-zzzzzzzzzz', name: 'full-1', dataUsedBytes: 47 * GIB, warn: true })]);
    renderAt('/center/system', '/center/system', <SystemDiskPage />);
    const table = await screen.findByTestId('system-disk-table');
    await within(table).findByText('full-1');
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(2);
    expect(within(rows[0]!).getByTestId('disk-data').textContent).toContain('10 GB / 50 GB');
    expect(within(rows[0]!).getByTestId('disk-system').textContent).toContain('3 GB / 30 GB');
    expect(within(rows[0]!).queryByTestId('disk-warn-tag')).toBeNull();
    expect(within(rows[1]!).getByTestId('disk-data').dataset.warn).toBe('true');
    expect(within(rows[1]!).getByTestId('disk-warn-tag').textContent).toContain('90%');
    expect(screen.getByTestId('system-disk-warning').textContent).toContain('1 个实例');
    fireEvent.click(within(rows[1]!).getByTestId('disk-expand'));
    await screen.findByTestId('expand-here');
  });

  it('empty and error states', async () => {
    serve([]);
    renderAt('/center/system', '/center/system', <SystemDiskPage />);
    await screen.findByTestId('system-disk-empty');
    expect(screen.queryByTestId('system-disk-warning')).toBeNull();
    cleanup();
    http.get.mockRejectedValue(new ApiError(503, '计算节点未就绪'));
    renderAt('/center/system', '/center/system', <SystemDiskPage />);
    expect((await screen.findByTestId('system-disk-error')).textContent).toContain('计算节点未就绪');
  });
});
