import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { FeedbackHost } from '../../../modules/FeedbackHost.tsx';
import { ApiError } from '../../../api/errors.ts';
import { SshKeysPage } from './SshKeysPage.tsx';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../../api/client.ts', () => ({ http }));

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx1c2VyLWtleS1mb3ItdGVzdHMtb25seS0wMDAwMDAw me@laptop';

function renderPage(keys: unknown[] = []) {
  http.get.mockImplementation(async (url: string) => {
    if (url === '/api/v1/pub_key/list') return keys;
    throw new Error(`unexpected GET ${url}`);
  });
  return render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <FeedbackHost />
      <SshKeysPage />
    </QueryClientProvider>,
  );
}

describe('SshKeysPage', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    http.get.mockReset();
    http.post.mockReset();
  });

  it('asks for the key before sending anything', async () => {
    renderPage();
    await screen.findByText('还没有公钥');
    fireEvent.click(screen.getByTestId('ssh-key-submit'));
    expect(await screen.findByText('请输入公钥')).toBeTruthy();
    expect(http.post).not.toHaveBeenCalled();
  });

  it('shows the server’s refusal (duplicate, malformed) under the form and keeps the text', async () => {
    renderPage();
    fireEvent.change(screen.getByTestId('ssh-key-text'), { target: { value: `  ${KEY}\n` } });
    fireEvent.change(screen.getByTestId('ssh-key-name'), { target: { value: 'laptop' } });
    http.post.mockRejectedValueOnce(new ApiError(400, '该公钥已添加过'));
    fireEvent.click(screen.getByTestId('ssh-key-submit'));
    expect((await screen.findByTestId('ssh-key-error')).textContent).toContain('该公钥已添加过');
    expect(http.post).toHaveBeenCalledWith('/api/v1/pub_key/add', { key: KEY, name: 'laptop' }, { silent: true });
    expect((screen.getByTestId('ssh-key-text') as HTMLTextAreaElement).value).toContain(KEY);

    http.post.mockResolvedValueOnce({ id: 1, name: 'laptop', type: 'ssh-ed25519', fingerprint: 'SHA256:abc', createdAt: '2026-11-23T00:00:00Z' });
    fireEvent.click(screen.getByTestId('ssh-key-submit'));
    await waitFor(() => expect((screen.getByTestId('ssh-key-text') as HTMLTextAreaElement).value).toBe(''));
    expect(screen.queryByTestId('ssh-key-error')).toBeNull();
  });

  it('lists keys with their fingerprint and deletes one only after confirming', async () => {
    renderPage([{ id: 3, name: 'laptop', type: 'ssh-ed25519', fingerprint: 'SHA256:Zm9vYmFy', createdAt: '2026-11-23T00:00:00Z' }]);
    expect((await screen.findByTestId('ssh-key-fingerprint')).textContent).toBe('SHA256:Zm9vYmFy');
    fireEvent.click(screen.getByTestId('ssh-key-delete'));
    expect(http.post).not.toHaveBeenCalled();
    http.post.mockResolvedValue(null);
    const ok = (await screen.findAllByText(/^删\s*除$/)).map((e) => e.closest('button')).find((b) => b && !b.dataset.testid);
    fireEvent.click(ok!);
    await waitFor(() => expect(http.post).toHaveBeenCalledWith('/api/v1/pub_key/delete', { id: 3 }, { silent: true }));
  });
});
