import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { UserImage } from '@suanli/contract/instance-ops';
import { FeedbackHost } from '../../../modules/FeedbackHost.tsx';
import { ApiError } from '../../../api/errors.ts';
import { ImagesPage } from './ImagesPage.tsx';
import { ImageDetailPage } from './ImageDetailPage.tsx';
import { setLanguage } from '../../../locales/i18n.ts';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../../api/client.ts', () => ({ http }));

export const userImage = (over: Partial<UserImage> = {}): UserImage => ({
  id: 41,
  name: 'torch-env',
  description: '装好了 PyTorch',
  os: 'Debian 12',
  contents: ['Python 3.11.2', 'PyTorch 2.3'],
  status: 'ready',
  progress: 100,
  error: '',
  sizeBytes: 3 * 1024 ** 3,
  kind: 'private',
  mine: true,
  sourceInstanceId: 'i-abcdefghij',
  sourceInstanceName: 'train-1',
  baseImageName: 'Debian 12 · Python',
  shared: false,
  sharedAt: null,
  authorName: '张**',
  useCount: 0,
  inUse: false,
  createdAt: '2026-11-23T08:00:00Z',
  ...over,
});

function Where() {
  const loc = useLocation();
  return <div data-testid="where">{loc.pathname + loc.search}</div>;
}

function renderAt(path: string, images: UserImage[]) {
  http.get.mockImplementation(async (url: string) => {
    if (url === '/api/v1/image/private') return { list: images, total: images.length };
    const m = /^\/api\/v1\/image\/private\/(\d+)$/.exec(url);
    if (m) {
      const hit = images.find((i) => i.id === Number(m[1]));
      if (hit) return hit;
      throw new ApiError(404, '镜像不存在');
    }
    throw new Error(`unexpected GET ${url}`);
  });
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <FeedbackHost />
      <MemoryRouter initialEntries={[path]}>
        <Routes>
          <Route path="/center/image/index" element={<ImagesPage />} />
          <Route path="/center/image/detail" element={<ImageDetailPage />} />
          <Route path="*" element={<Where />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const okButton = (dialog: HTMLElement, name: RegExp) => {
  const b = within(dialog).getAllByRole('button').find((x) => name.test(x.textContent ?? ''));
  if (!b) throw new Error(`no button ${name}`);
  return b;
};

describe('ImagesPage', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.put.mockReset();
    http.delete.mockReset();
  });

  it('lists the images with status, progress, failure reason, size and source', async () => {
    renderAt('/center/image/index', [userImage(), userImage({ id: 42, name: 'saving', status: 'building', progress: 37, sizeBytes: 0 }), userImage({ id: 43, name: 'broken', status: 'failed', error: '磁盘空间不足' })]);
    const rows = await screen.findAllByTestId('image-row');
    expect(rows).toHaveLength(3);
    expect(within(rows[0]!).getByTestId('image-status').dataset.status).toBe('ready');
    expect(rows[0]!.textContent).toContain('3 GB');
    expect(rows[0]!.textContent).toContain('i-abcdefghij');
    expect(rows[0]!.textContent).toContain('train-1');
    expect(within(rows[1]!).getByTestId('image-status').textContent).toContain('37%');
    expect(within(rows[2]!).getByTestId('image-error').textContent).toBe('磁盘空间不足');
    // Building and failed images can't be used yet.
    expect((within(rows[1]!).getByTestId('image-create') as HTMLButtonElement).disabled).toBe(true);
  });

  it('explains how to save an image when there is none', async () => {
    renderAt('/center/image/index', []);
    const empty = await screen.findByTestId('images-empty');
    expect(empty.textContent).toContain('保存镜像');
  });

  it('shows an error with a retry when the list fails', async () => {
    http.get.mockRejectedValue(new ApiError(500, '服务器开小差了'));
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    render(
      <QueryClientProvider client={client}>
        <MemoryRouter>
          <ImagesPage />
        </MemoryRouter>
      </QueryClientProvider>,
    );
    expect((await screen.findByTestId('images-error')).textContent).toContain('服务器开小差了');
  });

  it('shares only after confirming', async () => {
    renderAt('/center/image/index', [userImage()]);
    fireEvent.click(await screen.findByTestId('image-share'));
    expect(http.put).not.toHaveBeenCalled();
    http.put.mockResolvedValue(userImage({ shared: true }));
    fireEvent.click(await screen.findByTestId('image-share-ok'));
    await waitFor(() => expect(http.put).toHaveBeenCalledWith('/api/v1/image/private/41', { shared: true }, { silent: true }));
  });

  it('deletes after confirming and shows the server’s 409 reason', async () => {
    renderAt('/center/image/index', [userImage({ inUse: true })]);
    fireEvent.click(await screen.findByTestId('image-more'));
    fireEvent.click(await screen.findByTestId('image-delete'));
    http.delete.mockRejectedValue(new ApiError(409, '该镜像正被使用，不能删除'));
    fireEvent.click(await screen.findByTestId('image-delete-ok'));
    await waitFor(() => expect(http.delete).toHaveBeenCalledWith('/api/v1/image/private/41', undefined, { silent: true }));
    expect(await screen.findByText('该镜像正被使用，不能删除')).toBeTruthy();
  });

  it('renames from the edit dialog', async () => {
    renderAt('/center/image/index', [userImage()]);
    fireEvent.click(await screen.findByTestId('image-more'));
    fireEvent.click(await screen.findByTestId('image-edit'));
    const dialog = await screen.findByRole('dialog');
    fireEvent.change(screen.getByTestId('image-edit-name'), { target: { value: '  ' } });
    expect(await within(dialog).findByText('请输入镜像名称')).toBeTruthy();
    fireEvent.change(screen.getByTestId('image-edit-name'), { target: { value: 'torch-2' } });
    http.put.mockResolvedValue(userImage({ name: 'torch-2' }));
    fireEvent.click(okButton(dialog, /保\s*存/));
    await waitFor(() => expect(http.put).toHaveBeenCalledWith('/api/v1/image/private/41', { name: 'torch-2', description: '装好了 PyTorch' }, { silent: true }));
  });

  it('“create instance” goes to the market with the image', async () => {
    renderAt('/center/image/index', [userImage()]);
    fireEvent.click(await screen.findByTestId('image-create'));
    expect((await screen.findByTestId('where')).textContent).toBe('/market/index?imageId=41');
  });
});

describe('English', { timeout: 30_000 }, () => {
  afterEach(async () => {
    cleanup();
    http.get.mockReset();
    await setLanguage('zh-CN');
  });

  it('shows no Chinese of the console’s own in English mode (server text is marked zh-CN)', async () => {
    await setLanguage('en-US');
    renderAt('/center/image/index', [userImage({ status: 'building', progress: 12 }), userImage({ id: 42, status: 'failed', error: '磁盘空间不足' })]);
    await screen.findAllByTestId('image-row');
    const page = screen.getByTestId('images-page').cloneNode(true) as HTMLElement;
    page.querySelectorAll('[lang="zh-CN"]').forEach((e) => e.remove());
    expect(page.textContent).toContain('My images');
    expect(page.textContent).not.toMatch(/[\u4e00-\u9fff]/);
  });
});

describe('ImageDetailPage', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.delete.mockReset();
  });

  it('shows everything about the image', async () => {
    renderAt('/center/image/detail?id=41', [userImage({ shared: true, sharedAt: '2026-11-23T09:00:00Z', useCount: 3 })]);
    const card = await screen.findByTestId('image-detail-card');
    expect(card.textContent).toContain('torch-env');
    expect(card.textContent).toContain('Debian 12 · Python');
    expect(screen.getByTestId('image-description').textContent).toBe('装好了 PyTorch');
    expect(screen.getByTestId('image-contents').textContent).toContain('PyTorch 2.3');
    expect(screen.getByTestId('image-shared').dataset.shared).toBe('true');
    expect(screen.getByTestId('image-share').textContent).toContain('取消分享');
  });

  it('says so when the image does not exist', async () => {
    renderAt('/center/image/detail?id=99', [userImage()]);
    expect(await screen.findByTestId('image-not-found')).toBeTruthy();
  });

  it('returns to the list after deleting', async () => {
    renderAt('/center/image/detail?id=41', [userImage()]);
    fireEvent.click(await screen.findByTestId('image-delete'));
    http.delete.mockResolvedValue(null);
    fireEvent.click(await screen.findByTestId('image-delete-ok'));
    await waitFor(() => expect(http.delete).toHaveBeenCalled());
    expect(await screen.findByTestId('images-page')).toBeTruthy();
  });
});
