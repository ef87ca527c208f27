import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { TenantDomainInfo } from '@suanli/contract/tenant';
import { TenantProvider } from '../../../modules/tenant.tsx';
import { FeedbackHost } from '../../../modules/FeedbackHost.tsx';
import { ChangePhoneCard } from './ChangePhoneCard.tsx';

// Only what the card reads: the captcha type of the code button.
const tenant = { title: '测试', config: { captchaType: 'slide', primaryColor: '#1677ff' } } as unknown as TenantDomainInfo;

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../../api/client.ts', () => ({ http }));

afterEach(cleanup);

describe('ChangePhoneCard', () => {
  it('asks for the current password and sends it encrypted with the new phone and its code', { timeout: 30_000 }, async () => {
    http.put.mockResolvedValue(null);
    render(
      <QueryClientProvider client={new QueryClient()}>
        <TenantProvider tenant={tenant}>
          <FeedbackHost />
          <ChangePhoneCard currentPhone="13800000000" />
        </TenantProvider>
      </QueryClientProvider>,
    );
    fireEvent.change(screen.getByTestId('safe-new-phone'), { target: { value: '13912345678' } });
    fireEvent.change(screen.getByTestId('safe-phone-code'), { target: { value: '123456' } });
    fireEvent.click(screen.getByTestId('safe-phone-submit'));
    // Without the password the form doesn't go out.
    expect(await screen.findByText('请输入当前登录密码')).toBeTruthy();
    expect(http.put).not.toHaveBeenCalled();

    fireEvent.change(screen.getByTestId('safe-phone-password'), { target: { value: 'Passw0rd2026' } });
    fireEvent.click(screen.getByTestId('safe-phone-submit'));
    // The confirm dialog (role queries are slow over antd's DOM; its button reads 确 认).
    const confirm = (await screen.findByText(/^确\s*认$/)).closest('button');
    if (!confirm) throw new Error('no confirm button');
    fireEvent.click(confirm);
    await waitFor(() => expect(http.put).toHaveBeenCalledTimes(1));
    expect(http.put).toHaveBeenCalledWith('/api/v1/user/phoneNumber', { phone: '13912345678', code: '123456', password: 'Passw0rd2026' }, { encrypt: true, silent: true });
  });
});
