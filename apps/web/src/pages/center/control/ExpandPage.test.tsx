import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import type { AvailableExpandDisk } from '@suanli/contract/instance-ops';
import { ApiError } from '../../../api/errors.ts';
import { ExpandPage } from './ExpandPage.tsx';
import { INST_ID, inst, listAnswer, order, prepaidInst, preview, renderAt } from './ops-test-utils.tsx';
import type { InstanceItem } from '@suanli/contract/instance';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../../api/client.ts', () => ({ http }));

const PATH = '/center/control/expand/control';
const GIB = 1024 ** 3;

const disk = (over: Partial<AvailableExpandDisk> = {}): AvailableExpandDisk => ({
  instanceId: INST_ID,
  chargeType: 'payg',
  status: 'stopped',
  currentGb: 50,
  usedBytes: 12 * GIB,
  minGb: 50,
  maxGb: 500,
  freeGb: 50,
  pricePerGbDay: 100,
  canShrink: true,
  ...over,
});

function serve(instance: InstanceItem, d: AvailableExpandDisk = disk(), machine?: { gpuTotal: number; gpuFree: number }) {
  http.get.mockImplementation(async (url: string, params: { keyword?: string }) => {
    if (url === '/api/v1/instance/list') return listAnswer([instance].filter((i) => i.id === params.keyword));
    if (url === '/api/v1/machine/list' && machine) return { list: [{ id: 7, ...machine }], total: 1 };
    if (url === '/api/v1/instance/available_expand_disk') return d;
    throw new Error(`unexpected GET ${url}`);
  });
}

const lastDialog = async () => (await screen.findAllByRole('dialog')).at(-1)!;

describe('ExpandPage: GPU count', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.post.mockReset();
  });

  it('prepaid upgrade of a stopped instance: prices the difference and goes to the check page', async () => {
    serve(prepaidInst({ status: 'stopped' }), disk(), { gpuTotal: 4, gpuFree: 1 });
    http.post.mockImplementation(async (url: string) => {
      if (url === '/api/v1/order/instance/change/preview') return preview({ amount: 950_000, lines: [{ label: 'GPU 1 → 2 卡，剩余 15 天差价', amount: 950_000 }] });
      if (url === '/api/v1/order/instance/change') return order({ kind: 'spec_change', amount: 950_000 });
      throw new Error(`unexpected POST ${url}`);
    });
    renderAt(`${PATH}?instanceId=${INST_ID}`, PATH, <ExpandPage />);
    const group = await screen.findByTestId('expand-gpu-count');
    expect((screen.getByTestId('expand-gpu-submit') as HTMLButtonElement).disabled).toBe(true);
    // The machine has 4 GPUs: no more are offered; 1 free plus the 1 it holds make 2 reachable.
    await waitFor(() => expect(within(group).queryByText('5 卡')).toBeNull());
    fireEvent.click(within(group).getByText('3 卡'));
    await screen.findByTestId('expand-gpu-short');
    fireEvent.click(within(group).getByText('2 卡'));
    expect((await screen.findByTestId('expand-gpu-price-amount')).textContent).toBe('需支付 ¥95.00');
    await waitFor(() => expect((screen.getByTestId('expand-gpu-submit') as HTMLButtonElement).disabled).toBe(false));
    fireEvent.click(screen.getByTestId('expand-gpu-submit'));
    await screen.findByTestId('check-here');
    expect(http.post).toHaveBeenCalledWith('/api/v1/order/instance/change', { instanceId: INST_ID, gpuCount: 2 }, { silent: true });
  });

  it('a running instance must be stopped first', async () => {
    serve(inst({ status: 'running' }));
    renderAt(`${PATH}?instanceId=${INST_ID}`, PATH, <ExpandPage />);
    await screen.findByTestId('expand-gpu-stopped-only');
    expect((screen.getByTestId('expand-gpu-submit') as HTMLButtonElement).disabled).toBe(true);
    expect(http.post).not.toHaveBeenCalled();
  });

  it('a pay-as-you-go change costs nothing now: asks, applies, says so and goes back; a refusal shows why', async () => {
    serve(inst({ status: 'stopped', gpuCount: 2 }));
    http.post.mockImplementation(async (url: string) => {
      if (url.endsWith('/preview')) return preview({ amount: 0, hourly: 18_000, lines: [] });
      throw new ApiError(409, '该机器空闲 GPU 不足，剩余 0 卡');
    });
    renderAt(`${PATH}?instanceId=${INST_ID}`, PATH, <ExpandPage />);
    fireEvent.click(within(await screen.findByTestId('expand-gpu-count')).getByText('1 卡'));
    expect((await screen.findByTestId('expand-gpu-price-hourly')).textContent).toBe('¥1.80/小时');
    await waitFor(() => expect((screen.getByTestId('expand-gpu-submit') as HTMLButtonElement).disabled).toBe(false));
    fireEvent.click(screen.getByTestId('expand-gpu-submit'));
    const ok = within(await lastDialog()).getAllByRole('button').find((b) => /确\s*定|确\s*认/.test(b.textContent ?? ''));
    fireEvent.click(ok!);
    expect((await screen.findByTestId('expand-gpu-error')).textContent).toContain('剩余 0 卡');
    http.post.mockImplementation(async (url: string) => (url.endsWith('/preview') ? preview({ amount: 0, hourly: 18_000, lines: [] }) : order({ kind: 'spec_change', status: 'paid', amount: 0 })));
    fireEvent.click(screen.getByTestId('expand-gpu-submit'));
    const ok2 = within(await lastDialog()).getAllByRole('button').find((b) => /确\s*定|确\s*认/.test(b.textContent ?? ''));
    fireEvent.click(ok2!);
    await screen.findByTestId('instances-here');
    expect(await screen.findByText('变更已生效')).toBeTruthy();
  });
});

describe('ExpandPage: data disk', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.post.mockReset();
  });

  it('grows the disk of a running prepaid instance: used space, bounds, difference, check page', async () => {
    serve(prepaidInst({ status: 'running' }), disk({ chargeType: 'prepaid', status: 'running', canShrink: false }));
    http.post.mockImplementation(async (url: string, body: { dataDiskGb: number }) => {
      if (url === '/api/v1/order/data_disk/change/preview') return preview({ amount: (body.dataDiskGb - 50) * 2_000, lines: [{ label: `数据盘 50 → ${body.dataDiskGb} GB`, amount: (body.dataDiskGb - 50) * 2_000 }] });
      if (url === '/api/v1/order/data_disk/change') return order({ kind: 'data_disk', amount: 100_000 });
      throw new Error(`unexpected POST ${url}`);
    });
    renderAt(`${PATH}?instanceId=${INST_ID}&tab=disk`, PATH, <ExpandPage />);
    expect((await screen.findByTestId('expand-disk-used')).textContent).toBe('12 GB / 50 GB');
    await screen.findByTestId('expand-disk-grow-only');
    const input = screen.getByTestId('expand-disk-input');
    fireEvent.change(input, { target: { value: '40' } });
    expect(await screen.findByText('缩容需要先关机；运行中只能扩容', { selector: '.ant-form-item-explain-error, .ant-form-item-explain div' })).toBeTruthy();
    expect((screen.getByTestId('expand-disk-submit') as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(input, { target: { value: '100' } });
    expect((await screen.findByTestId('expand-disk-price-amount')).textContent).toBe('需支付 ¥10.00');
    await waitFor(() => expect((screen.getByTestId('expand-disk-submit') as HTMLButtonElement).disabled).toBe(false));
    fireEvent.click(screen.getByTestId('expand-disk-submit'));
    await screen.findByTestId('check-here');
    expect(http.post).toHaveBeenCalledWith('/api/v1/order/data_disk/change', { instanceId: INST_ID, dataDiskGb: 100 }, { silent: true });
  });

  it('shrinking a stopped instance asks first, refuses below the minimum, and applies a refund at once', async () => {
    serve(prepaidInst({ status: 'stopped', dataDiskGb: 200 }), disk({ chargeType: 'prepaid', currentGb: 200, minGb: 60, usedBytes: 59 * GIB }));
    http.post.mockImplementation(async (url: string) => {
      if (url.endsWith('/preview')) return preview({ amount: -40_000, lines: [{ label: '数据盘 200 → 100 GB 退还', amount: -40_000 }] });
      return order({ kind: 'data_disk', status: 'paid', amount: -40_000 });
    });
    renderAt(`${PATH}?instanceId=${INST_ID}&tab=disk`, PATH, <ExpandPage />);
    const input = await screen.findByTestId('expand-disk-input');
    fireEvent.change(input, { target: { value: '50' } });
    expect(await screen.findByText(/不能小于 60 GB/)).toBeTruthy();
    expect((screen.getByTestId('expand-disk-submit') as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(input, { target: { value: '100' } });
    expect((await screen.findByTestId('expand-disk-price-amount')).textContent).toBe('将退还 ¥4.00');
    await waitFor(() => expect((screen.getByTestId('expand-disk-submit') as HTMLButtonElement).disabled).toBe(false));
    fireEvent.click(screen.getByTestId('expand-disk-submit'));
    const dialog = await lastDialog();
    expect(dialog.textContent).toContain('200 GB');
    expect(dialog.textContent).toContain('¥4.00');
    expect(http.post).not.toHaveBeenCalledWith('/api/v1/order/data_disk/change', expect.anything(), expect.anything());
    fireEvent.click(within(dialog).getAllByRole('button').find((b) => /确\s*定|确\s*认/.test(b.textContent ?? ''))!);
    await screen.findByTestId('instances-here');
    expect(await screen.findByText('变更已生效，已退还 ¥4.00')).toBeTruthy();
  });

  it('a failed disk load shows why', async () => {
    http.get.mockImplementation(async (url: string) => {
      if (url === '/api/v1/instance/list') return listAnswer([inst()]);
      throw new ApiError(503, '计算节点未就绪');
    });
    renderAt(`${PATH}?instanceId=${INST_ID}&tab=disk`, PATH, <ExpandPage />);
    expect((await screen.findByTestId('expand-disk-load-error')).textContent).toContain('计算节点未就绪');
  });
});
