import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render, screen, waitFor } from '@testing-library/react';
import { App as AntApp } from 'antd';
import { MemoryRouter } from 'react-router';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { RechargePage } from './RechargePage.tsx';
import { setLanguage } from '../../locales/i18n.ts';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../api/client.ts', () => ({ http }));

function renderWith(methods: { method: string; name: string }[]) {
  http.get.mockImplementation(async (url: string) => {
    if (url === '/api/v1/payments/methods') return methods;
    if (url === '/api/v1/account/balance') return { balance: 0, frozenBalance: 0 };
    throw new Error(`unexpected GET ${url}`);
  });
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <AntApp>
        <MemoryRouter initialEntries={['/recharge/index']}>
          <RechargePage />
        </MemoryRouter>
      </AntApp>
    </QueryClientProvider>,
  );
}

// The first render loads antd and the page cold: more than the default 5 s on a busy machine.
describe('RechargePage', { timeout: 30_000 }, () => {
  afterEach(async () => {
    cleanup();
    http.get.mockReset();
    await setLanguage('zh-CN');
  });

  it('#2 marks the sandbox as a test cashier: a banner over the form and a tag on the method', async () => {
    renderWith([{ method: 'sandbox', name: '沙箱支付' }]);
    const banner = await screen.findByTestId('recharge-sandbox-banner');
    expect(banner.textContent).toContain('测试收银台');
    expect(screen.getByTestId('recharge-sandbox-tag').textContent).toBe('测试收银台');
    expect(screen.getByTestId('recharge-method-sandbox').textContent).toContain('沙箱支付');
  });

  it('#2 in English, the marker and the method name come from the locale, not the server’s Chinese', async () => {
    await setLanguage('en-US');
    renderWith([{ method: 'sandbox', name: '沙箱支付' }]);
    expect((await screen.findByTestId('recharge-sandbox-banner')).textContent).toContain('Test cashier');
    const method = screen.getByTestId('recharge-method-sandbox').textContent ?? '';
    expect(method).toContain('Sandbox');
    expect(method).not.toMatch(/[\u4e00-\u9fff]/);
  });

  it('shows no test marker where only real gateways are offered', async () => {
    renderWith([{ method: 'alipay', name: '支付宝' }]);
    await screen.findByTestId('recharge-method-alipay');
    await waitFor(() => expect(screen.queryByTestId('recharge-sandbox-banner')).toBeNull());
    expect(screen.queryByTestId('recharge-sandbox-tag')).toBeNull();
  });
});
