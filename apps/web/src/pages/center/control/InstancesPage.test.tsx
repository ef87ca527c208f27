import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { InstanceItem } from '@suanli/contract/instance';
import { FeedbackHost } from '../../../modules/FeedbackHost.tsx';
import { ApiError } from '../../../api/errors.ts';
import { InstancesPage } from './InstancesPage.tsx';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../../api/client.ts', () => ({ http }));

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
