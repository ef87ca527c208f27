import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter } from 'react-router';
import type { ApiKeyItem } from '@suanli/contract/llm';
import { FeedbackHost } from '../../modules/FeedbackHost.tsx';
import { ApiKeysPage } from './ApiKeysPage.tsx';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../api/client.ts', () => ({ http }));

const NOW = '2026-11-23T00:00:00.000Z';
const SECRET = `sk-${'A'.repeat(44)}wxyz`;
const key = (extra: Partial<ApiKeyItem> = {}): ApiKeyItem => ({
  id: 'k0000000-0000-4000-8000-000000000001',
  name: 'prod',
  maskedKey: 'sk-AAAA…wxyz',
  status: 'active',
  expiresAt: null,
  models: null,
  quota: null,
  used: 0,
  ipAllow: [],
  limits: [],
  lastUsedAt: null,
  createdAt: NOW,
  ...extra,
});

function renderPage(path = '/largeModel/apiKey') {
  let keys: ApiKeyItem[] = [];
  http.get.mockImplementation(async (url: string) => {
    if (url === '/api/v1/llm/model/list') return { list: [{ id: 'm1', name: 'M1', provider: 'P', description: '', tags: [], contextLength: 2048, inputPrice: 1, outputPrice: 1 }], tags: [] };
    if (url === '/api/v1/llm/api_key/list') return { list: keys, total: keys.length };
    throw new Error(`unexpected GET ${url}`);
  });
  http.post.mockImplementation(async (url: string, body: { name: string; quota: number | null; limits: unknown[] }) => {
    if (url === '/api/v1/llm/api_key/create') {
      const created = key({ name: body.name, quota: body.quota });
      keys = [created];
      return { key: created, secret: SECRET };
    }
    throw new Error(`unexpected POST ${url}`);
  });
  return render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MemoryRouter initialEntries={[path]}>
        <FeedbackHost />
        <ApiKeysPage />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

describe('ApiKeysPage', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.post.mockReset();
  });

  it('shows the gateway base URL and an example for the model asked for', async () => {
    renderPage('/largeModel/apiKey?model=m1');
    expect(screen.getByTestId('api-base-url').textContent).toBe(`${window.location.origin}/v1`);
    await waitFor(() => expect(screen.getByTestId('api-curl').textContent).toContain('"model":"m1"'));
    expect(await screen.findByText('还没有 API 密钥')).toBeTruthy();
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('API 密钥');
  });

  it('in the console it leaves the h1 to the center layout', async () => {
    renderPage('/center/ai-apiKey');
    await screen.findByText('还没有 API 密钥');
    expect(screen.queryByRole('heading', { level: 1 })).toBeNull();
  });

  it('creates a key with the quota in units, IPs one per line and a window limit, then shows the secret once', async () => {
    renderPage();
    fireEvent.click(await screen.findByTestId('key-create'));
    fireEvent.change(await screen.findByTestId('key-name'), { target: { value: 'ci' } });
    fireEvent.change(screen.getByTestId('key-quota'), { target: { value: '1.5' } });
    fireEvent.change(screen.getByTestId('key-ip'), { target: { value: '10.0.0.0/8\n\n 1.2.3.4 \n' } });
    fireEvent.click(screen.getByTestId('key-limit-add'));
    fireEvent.change(await screen.findByLabelText('限额 1'), { target: { value: '1000' } });
    fireEvent.click(screen.getByTestId('key-create-ok'));
    const secret = await screen.findByTestId('key-secret');
    expect((secret as HTMLInputElement).value).toBe(SECRET);
    expect(http.post).toHaveBeenCalledWith(
      '/api/v1/llm/api_key/create',
      { name: 'ci', expiresAt: null, models: null, quota: 15_000, ipAllow: ['10.0.0.0/8', '1.2.3.4'], limits: [{ window: 'day', unit: 'tokens', limit: 1000 }] },
      { silent: true },
    );
    fireEvent.click(screen.getByTestId('key-secret-done'));
    const row = (await screen.findByText('ci')).closest('tr')!;
    expect(within(row).getByTestId('key-used').textContent).toBe('¥0.00 / ¥1.50');
  });

  it('refuses a quota with more than four decimals', async () => {
    renderPage();
    fireEvent.click(await screen.findByTestId('key-create'));
    fireEvent.change(await screen.findByTestId('key-name'), { target: { value: 'x' } });
    fireEvent.change(screen.getByTestId('key-quota'), { target: { value: '0.00001' } });
    fireEvent.click(screen.getByTestId('key-create-ok'));
    expect(await screen.findByText('请输入大于 0 的金额，最多 4 位小数')).toBeTruthy();
    expect(http.post).not.toHaveBeenCalled();
  });
});
