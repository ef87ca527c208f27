import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, configure, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { InstanceItem } from '@suanli/contract/instance';
import { FeedbackHost } from '../../../modules/FeedbackHost.tsx';
import { ApiError } from '../../../api/errors.ts';
import { InstancesPage, allowedOps, opsHref } from './InstancesPage.tsx';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../../api/client.ts', () => ({ http }));

// On a loaded machine the lazily mounted message holder can take more than the default second.
configure({ asyncUtilTimeout: 8_000 });

const inst = (over: Partial<InstanceItem> = {}): InstanceItem => ({
  id: 'i-abcdefghij',
  name: 'train-1',
  status: 'running',
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
  ssh: { host: 'demo.localhost', port: 2222, user: 'i-abcdefghij', command: 'ssh -p 2222 i-abcdefghij@demo.localhost' },
  password: 'Secr3tPass',
  ...over,
});

function renderPage(list: InstanceItem[]) {
  http.get.mockImplementation(async (url: string) => {
    if (url === '/api/v1/instance/list') return { list, total: list.length };
    if (url === '/api/v1/instance/status_tag') return [{ status: 'running', label: '运行中', count: list.length }];
    throw new Error(`unexpected GET ${url}`);
  });
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <FeedbackHost />
      <MemoryRouter initialEntries={['/center/control/index']}>
        <InstancesPage />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

async function menuItem(name: RegExp) {
  fireEvent.click(await screen.findByTestId('instance-more'));
  const item = (await screen.findAllByText(name)).find((e) => e.closest('[role=menuitem]'));
  if (!item) throw new Error(`no menu item ${name}`);
  fireEvent.click(item);
}

describe('InstancesPage actions', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.post.mockReset();
  });

  it('shows status, demo badge, SSH command, and the password only when revealed', async () => {
    renderPage([inst()]);
    expect((await screen.findByTestId('instance-status')).textContent).toBe('运行中');
    expect(screen.getByTestId('instance-demo').textContent).toBe('演示机');
    expect(screen.getByTestId('instance-ssh-command').textContent).toContain('ssh -p 2222 i-abcdefghij@demo.localhost');
    expect(screen.getByTestId('instance-password').textContent).not.toContain('Secr3tPass');
    fireEvent.click(screen.getByTestId('instance-password-toggle'));
    expect(screen.getByTestId('instance-password').textContent).toContain('Secr3tPass');
    const shell = screen.getByTestId('instance-shell');
    expect(shell.getAttribute('href')).toBe('/shell?instanceId=i-abcdefghij');
    expect(shell.getAttribute('target')).toBe('_blank');
  });

  it('stops only after the confirmation', async () => {
    renderPage([inst()]);
    fireEvent.click(await screen.findByTestId('instance-power-off'));
    expect(http.post).not.toHaveBeenCalled();
    const dialog = await screen.findByRole('dialog');
    http.post.mockResolvedValue(null);
    const ok = within(dialog).getAllByRole('button').find((b) => /关\s*机/.test(b.textContent ?? ''));
    fireEvent.click(ok!);
    await waitFor(() => expect(http.post).toHaveBeenCalledWith('/api/v1/ide-instance/power_off', { instanceId: 'i-abcdefghij' }, { silent: true }));
  });

  it('releases only once the instance name is typed exactly', async () => {
    renderPage([inst({ status: 'stopped' })]);
    await menuItem(/^释放$/);
    const ok = await screen.findByTestId('release-ok');
    expect((ok as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(screen.getByTestId('release-name'), { target: { value: 'train-' } });
    expect((ok as HTMLButtonElement).disabled).toBe(true);
    expect(await screen.findByText('输入的名称与实例名称不一致')).toBeTruthy();
    fireEvent.change(screen.getByTestId('release-name'), { target: { value: 'train-1' } });
    expect((ok as HTMLButtonElement).disabled).toBe(false);
    http.post.mockResolvedValue(null);
    fireEvent.click(ok);
    await waitFor(() => expect(http.post).toHaveBeenCalledWith('/api/v1/ide-instance/release', { instanceId: 'i-abcdefghij' }, { silent: true }));
  });

  it('resets the system only after confirming', async () => {
    renderPage([inst()]);
    await menuItem(/^重置系统$/);
    const dialog = await screen.findByRole('dialog');
    expect(dialog.textContent).toContain('/root/data');
    expect(http.post).not.toHaveBeenCalled();
    http.post.mockResolvedValue(null);
    const ok = within(dialog).getAllByRole('button').find((b) => /重置系统/.test(b.textContent ?? ''));
    fireEvent.click(ok!);
    await waitFor(() => expect(http.post).toHaveBeenCalledWith('/api/v1/instance/init', { instanceId: 'i-abcdefghij' }, { silent: true }));
  });

  it('shows the server’s message when the driver is unavailable (503)', async () => {
    renderPage([inst({ status: 'stopped' })]);
    http.post.mockRejectedValue(new ApiError(503, '计算节点未就绪：请以 root 运行 npm start'));
    fireEvent.click(await screen.findByTestId('instance-power-on'));
    expect(await screen.findByText('计算节点未就绪：请以 root 运行 npm start')).toBeTruthy();
  });

  it('refuses a weak password before asking the server', async () => {
    renderPage([inst()]);
    await menuItem(/^重置密码$/);
    const dialog = await screen.findByRole('dialog');
    fireEvent.change(screen.getByTestId('password-input'), { target: { value: 'short' } });
    const ok = within(dialog).getAllByRole('button').find((b) => /保\s*存/.test(b.textContent ?? ''));
    fireEvent.click(ok!);
    expect(await screen.findByText(/密码需 8–32 位/)).toBeTruthy();
    expect(http.post).not.toHaveBeenCalled();
    fireEvent.change(screen.getByTestId('password-input'), { target: { value: 'NewPassw0rd' } });
    http.post.mockResolvedValue(null);
    fireEvent.click(ok!);
    await waitFor(() => expect(http.post).toHaveBeenCalledWith('/api/v1/instance/modify_password', { instanceId: 'i-abcdefghij', password: 'NewPassw0rd' }, { silent: true }));
  });
});

// Issue #10 (web): billing changes, disks and the no-GPU mode from the list.
describe('InstancesPage issue #10 actions', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.post.mockReset();
  });

  function renderRouted(list: InstanceItem[]) {
    http.get.mockImplementation(async (url: string) => {
      if (url === '/api/v1/instance/list') return { list, total: list.length };
      if (url === '/api/v1/instance/status_tag') return [{ status: 'running', label: '运行中', count: list.length }];
      throw new Error(`unexpected GET ${url}`);
    });
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    return render(
      <QueryClientProvider client={client}>
        <FeedbackHost />
        <MemoryRouter initialEntries={['/center/control/index']}>
          <Routes>
            <Route path="/center/control/index" element={<InstancesPage />} />
            <Route path="*" element={<LocationProbe />} />
          </Routes>
        </MemoryRouter>
      </QueryClientProvider>,
    );
  }

  async function openMenu() {
    fireEvent.click(await screen.findByTestId('instance-more'));
    await screen.findByTestId('instance-menu-expand');
  }

  it('a pay-as-you-go instance offers 转包周期, 升降配置 and 扩缩容数据盘, each opening its page for the instance', async () => {
    renderRouted([inst()]);
    await openMenu();
    expect(screen.queryByTestId('instance-menu-to_payg')).toBeNull();
    expect(screen.queryByTestId('instance-menu-renewal')).toBeNull();
    fireEvent.click(screen.getByTestId('instance-menu-change_contract'));
    expect((await screen.findByTestId('location')).textContent).toBe('/center/control/changeContract?instanceId=i-abcdefghij');
  });

  it('the disk item opens the expand page on its disk tab', async () => {
    renderRouted([inst()]);
    await openMenu();
    fireEvent.click(screen.getByTestId('instance-menu-expand_disk'));
    expect((await screen.findByTestId('location')).textContent).toBe('/center/control/expand/control?instanceId=i-abcdefghij&tab=disk');
  });

  it('a prepaid instance shows its expiry with a renewal link, and offers 转按量 and 续费', async () => {
    const expiresAt = new Date(Date.now() + 20 * 86_400_000).toISOString();
    renderRouted([inst({ chargeType: 'prepaid', period: 'month', hourly: 0, expiresAt })]);
    expect((await screen.findByTestId('instance-expires-at')).textContent).toContain('到期');
    expect(screen.getByTestId('instance-renew').getAttribute('href')).toBe('/center/control/renewal?instanceId=i-abcdefghij');
    await openMenu();
    expect(screen.queryByTestId('instance-menu-change_contract')).toBeNull();
    expect(screen.queryByTestId('instance-menu-no_gpu')).toBeNull();
    fireEvent.click(screen.getByTestId('instance-menu-to_payg'));
    expect((await screen.findByTestId('location')).textContent).toBe('/center/control/changeContractPreview?instanceId=i-abcdefghij');
  });

  it('无卡模式开机: only for a stopped pay-as-you-go instance, after a dialog giving the price and spec', async () => {
    renderRouted([inst({ status: 'stopped' })]);
    await openMenu();
    fireEvent.click(screen.getByTestId('instance-menu-no_gpu'));
    const dialog = (await screen.findAllByRole('dialog')).at(-1)!;
    expect(dialog.textContent).toContain('¥0.10');
    expect(dialog.textContent).toContain('1 核 CPU、2 GB 内存');
    expect(http.post).not.toHaveBeenCalled();
    http.post.mockResolvedValue(inst({ status: 'starting', noGpu: true }));
    const ok = within(dialog).getAllByRole('button').find((b) => /无卡模式开机/.test(b.textContent ?? ''));
    fireEvent.click(ok!);
    await waitFor(() => expect(http.post).toHaveBeenCalledWith('/api/v1/ide-instance/power_on', { instanceId: 'i-abcdefghij', noGpu: true }, { silent: true }));
  });

  it('a running instance’s no-GPU item is disabled; the server’s refusal of a no-GPU start shows', async () => {
    renderRouted([inst({ status: 'running' })]);
    await openMenu();
    expect(screen.getByTestId('instance-menu-no_gpu').closest('[role=menuitem]')?.getAttribute('aria-disabled')).toBe('true');
    cleanup();
    renderRouted([inst({ status: 'stopped' })]);
    await openMenu();
    fireEvent.click(screen.getByTestId('instance-menu-no_gpu'));
    const dialog = (await screen.findAllByRole('dialog')).at(-1)!;
    http.post.mockRejectedValue(new ApiError(409, '余额不足 1 小时费用'));
    fireEvent.click(within(dialog).getAllByRole('button').find((b) => /无卡模式开机/.test(b.textContent ?? ''))!);
    expect(await screen.findByText('余额不足 1 小时费用')).toBeTruthy();
  });

  it('shows the 无卡模式 tag on an instance running without its GPUs', async () => {
    renderRouted([inst({ noGpu: true }), inst({ id: 'i-bbbbbbbbbb', name: 'train-2' })]);
    await screen.findAllByTestId('instance-name');
    expect(screen.getAllByTestId('instance-nogpu-tag')).toHaveLength(1);
    expect(screen.getByTestId('instance-nogpu-tag').textContent).toBe('无卡模式');
  });
});

describe('allowedOps', () => {
  it('offers each change only where it applies', () => {
    expect(allowedOps({ status: 'running', chargeType: 'payg' })).toEqual({ change_contract: true, to_payg: false, renewal: false, expand: true, expand_disk: true, no_gpu: false });
    expect(allowedOps({ status: 'stopped', chargeType: 'payg' }).no_gpu).toBe(true);
    expect(allowedOps({ status: 'stopped', chargeType: 'prepaid' })).toEqual({ change_contract: false, to_payg: true, renewal: true, expand: true, expand_disk: true, no_gpu: false });
    // Expired and stopped by the platform, not yet released: renewable, nothing else changes.
    expect(allowedOps({ status: 'failed', chargeType: 'prepaid' })).toMatchObject({ renewal: true, to_payg: false, expand: false });
    expect(Object.values(allowedOps({ status: 'released', chargeType: 'prepaid' })).some(Boolean)).toBe(false);
    expect(Object.values(allowedOps({ status: 'starting', chargeType: 'payg' })).some(Boolean)).toBe(false);
    expect(opsHref('expand_disk', 'i-abcdefghij')).toBe('/center/control/expand/control?instanceId=i-abcdefghij&tab=disk');
  });
});

function LocationProbe() {
  const loc = useLocation();
  return <div data-testid="location">{`${loc.pathname}${loc.search}`}</div>;
}
