import { useEffect, useMemo, useSyncExternalStore } from 'react';
import { App as AntApp, ConfigProvider, theme as antTheme } from 'antd';
import zhCN from 'antd/locale/zh_CN';
import enUS from 'antd/locale/en_US';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createBrowserRouter, RouterProvider } from 'react-router';
import type { TenantDomainInfo } from '@suanli/contract/tenant';
import { routes } from './routes.tsx';
import { TenantProvider } from './modules/tenant.tsx';
import { feedback } from './modules/feedback.ts';
import { setUnauthorizedHandler } from './api/client.ts';
import { getLanguage, useT } from './locales/i18n.ts';
import { ApiError } from './api/errors.ts';

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A 4xx won't change on retry; a flaky network might.
      retry: (count, err) => count < 2 && !(err instanceof ApiError && err.status >= 400 && err.status < 500),
      refetchOnWindowFocus: false,
    },
  },
});

const router = createBrowserRouter(routes);

/** Drops the boot mask of index.html once the first route (and its lazy chunk) is ready. */
export function removeBootMaskWhenReady(): void {
  const done = () => document.getElementById('boot-mask')?.remove();
  if (router.state.initialized) return done();
  const unsubscribe = router.subscribe((state) => {
    if (!state.initialized) return;
    unsubscribe();
    done();
  });
}
setUnauthorizedHandler(() => {
  queryClient.clear();
  void router.navigate('/login');
});

/** Hands antd's context-aware message and modal to code outside components (the API client). */
function FeedbackBridge() {
  const { message, modal } = AntApp.useApp();
  useEffect(() => {
    feedback.message = message;
    feedback.modal = modal;
  }, [message, modal]);
  return null;
}

const subscribeNoop = () => () => {};

export function App({ tenant }: { tenant: TenantDomainInfo }) {
  const { lang } = useT();
  const antLocale = lang === 'en-US' ? enUS : zhCN;
  // Links follow the brand too: antd derives them from colorInfo, which would stay antd blue.
  const themeConfig = useMemo(() => ({ algorithm: antTheme.defaultAlgorithm, token: { colorPrimary: tenant.config.primaryColor, colorLink: tenant.config.primaryColor, borderRadius: 6 } }), [tenant]);
  // Read once so SSR-less hydration and the first render agree on the language.
  useSyncExternalStore(subscribeNoop, getLanguage);
  return (
    <ConfigProvider locale={antLocale} theme={themeConfig}>
      <AntApp>
        <FeedbackBridge />
        <TenantProvider tenant={tenant}>
          <QueryClientProvider client={queryClient}>
            <RouterProvider router={router} />
          </QueryClientProvider>
        </TenantProvider>
      </AntApp>
    </ConfigProvider>
  );
}
