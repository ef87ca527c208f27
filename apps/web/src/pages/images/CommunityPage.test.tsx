import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { UserImage } from '@suanli/contract/instance-ops';
import { ApiError } from '../../api/errors.ts';
import { CommunityPage } from './CommunityPage.tsx';
import { CommunityDetailPage } from './CommunityDetailPage.tsx';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../api/client.ts', () => ({ http }));

const shared = (over: Partial<UserImage> = {}): UserImage => ({
  id: 77,
  name: 'sd-webui',
  description: 'Stable Diffusion WebUI，开箱即用',
  os: 'Debian 12',
  contents: ['Python 3.11.2'],
  status: 'ready',
  progress: 100,
  error: '',
  sizeBytes: 5 * 1024 ** 3,
  kind: 'private',
  mine: false,
  sourceInstanceId: null,
  sourceInstanceName: '',
  baseImageName: 'Debian 12 · Python',
  shared: true,
  sharedAt: '2026-11-20T10:00:00Z',
  authorName: '李**',
  useCount: 12,
  inUse: true,
  createdAt: '2026-11-20T09:00:00Z',
  ...over,
});

function Where() {
  const loc = useLocation();
  return <div data-testid="where">{loc.pathname + loc.search}</div>;
}

function renderAt(path: string, list: UserImage[]) {
  http.get.mockImplementation(async (url: string) => {
    if (url === '/api/v1/image/community') return { list, total: list.length };
    const m = /^\/api\/v1\/image\/community\/(\d+)$/.exec(url);
    if (m) {
      const hit = list.find((i) => i.id === Number(m[1]));
      if (hit) return hit;
      throw new ApiError(404, '镜像不存在');
    }
    throw new Error(`unexpected GET ${url}`);
  });
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <MemoryRouter initialEntries={[path]}>
        <Routes>
          <Route path="/images/index" element={<CommunityPage />} />
          <Route path="/images/detail" element={<CommunityDetailPage />} />
          <Route path="*" element={<Where />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

describe('CommunityPage', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
  });

  it('shows the shared images with author, use count and size; hot first by default', async () => {
    renderAt('/images/index', [shared()]);
    const card = await screen.findByTestId('community-card');
    expect(card.textContent).toContain('sd-webui');
    expect(card.textContent).toContain('李**');
    expect(card.textContent).toContain('12 次使用');
    expect(card.textContent).toContain('5 GB');
    expect(http.get).toHaveBeenCalledWith('/api/v1/image/community', { page: 1, pageSize: 12, sort: 'hot' }, expect.anything());
  });

  it('searches and sorts by newest', async () => {
    renderAt('/images/index', [shared()]);
    await screen.findByTestId('community-card');
    const input = screen.getByRole('searchbox');
    fireEvent.change(input, { target: { value: ' webui ' } });
    fireEvent.keyDown(input, { key: 'Enter', code: 'Enter', keyCode: 13 });
    await waitFor(() => expect(http.get).toHaveBeenCalledWith('/api/v1/image/community', { page: 1, pageSize: 12, sort: 'hot', keyword: 'webui' }, expect.anything()));
    fireEvent.click(screen.getByText('最新'));
    await waitFor(() => expect(http.get).toHaveBeenCalledWith('/api/v1/image/community', { page: 1, pageSize: 12, sort: 'new', keyword: 'webui' }, expect.anything()));
  });

  it('has an empty state', async () => {
    renderAt('/images/index', []);
    expect((await screen.findByTestId('community-empty')).textContent).toContain('还没有人分享镜像');
  });

  it('“use this image” opens the market with the image', async () => {
    renderAt('/images/index', [shared()]);
    fireEvent.click(await screen.findByTestId('community-use'));
    expect((await screen.findByTestId('where')).textContent).toBe('/market/index?imageId=77');
  });
});

describe('CommunityDetailPage', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
  });

  it('shows the description, contents, author and use count, and uses the image', async () => {
    renderAt('/images/detail?id=77', [shared()]);
    expect((await screen.findByTestId('community-description')).textContent).toContain('Stable Diffusion WebUI');
    expect(screen.getByTestId('community-author').textContent).toBe('李**');
    expect(screen.getByTestId('community-uses').textContent).toBe('12');
    expect(screen.getByTestId('community-contents').textContent).toContain('Python 3.11.2');
    fireEvent.click(screen.getByTestId('community-use'));
    expect((await screen.findByTestId('where')).textContent).toBe('/market/index?imageId=77');
  });

  it('a withdrawn or unknown image reads as not found', async () => {
    renderAt('/images/detail?id=5', [shared()]);
    expect(await screen.findByTestId('community-not-found')).toBeTruthy();
  });
});
