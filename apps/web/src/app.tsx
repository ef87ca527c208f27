import { lazy, Suspense, useEffect, useMemo, useSyncExternalStore } from 'react';
import { ConfigProvider } from 'antd';
// The ES builds: `antd/locale/*` resolves to CommonJS copies that antd's own default (es) duplicates.
import zhCN from 'antd/es/locale/zh_CN';
import enUS from 'antd/es/locale/en_US';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { BrowserRouter, useLocation, useNavigate, useRoutes } from 'react-router';
import type { TenantDomainInfo } from '@suanli/contract/tenant';
import { routes } from './routes.tsx';
import { documentTitle, findRoute, notFoundRoute } from './route-table.ts';
import { localizeTenant, TenantProvider } from './modules/tenant.tsx';
import { useFeedbackRequested } from './modules/feedback.ts';
import { setUnauthorizedHandler } from './api/client.ts';
import { getLanguage, useT } from './locales/i18n.ts';
import { ApiError } from './api/errors.ts';
import { brandTheme } from './theme.ts';

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A 4xx won't change on retry; a flaky network might.
      retry: (count, err) => count < 2 && !(err instanceof ApiError && err.status >= 400 && err.status < 500),
      refetchOnWindowFocus: false,
    },
  },
});

/** Drops the boot mask of index.html: rendered beside the first page, so it commits with it. */
function BootMaskRemover() {
  useEffect(() => document.getElementById('boot-mask')?.remove(), []);
  return null;
}

/** #25: "<page> - <tenant>" in the browser tab, from the route table, in the current language. */
function DocumentTitle({ tenant }: { tenant: TenantDomainInfo }) {
  const { t, lang } = useT();
  const { pathname } = useLocation();
  useEffect(() => {
    const route = findRoute(pathname) ?? notFoundRoute;
    document.title = documentTitle(t(route.title), localizeTenant(tenant, lang).title);
  }, [pathname, t, lang, tenant]);
  return null;
}

/** The 401 dialog's confirm goes through the router (no full reload). */
function UnauthorizedNavigation() {
  const navigate = useNavigate();
  useEffect(() => {
    setUnauthorizedHandler(() => {
      queryClient.clear();
      void navigate('/login');
    });
  }, [navigate]);
  return null;
}

function AppRoutes() {
  return useRoutes(routes);
}

// antd's message and modal holders load with the first message or dialog (modules/feedback.ts).
const FeedbackHost = lazy(() => import('./modules/FeedbackHost.tsx').then((m) => ({ default: m.FeedbackHost })));
function FeedbackSlot() {
  const requested = useFeedbackRequested();
  return requested ? (
    <Suspense fallback={null}>
      <FeedbackHost />
    </Suspense>
  ) : null;
}

const subscribeNoop = () => () => {};

export function App({ tenant }: { tenant: TenantDomainInfo }) {
  const { lang } = useT();
  const antLocale = lang === 'en-US' ? enUS : zhCN;
  const themeConfig = useMemo(() => brandTheme(tenant.config.primaryColor), [tenant]);
  // Read once so SSR-less hydration and the first render agree on the language.
  useSyncExternalStore(subscribeNoop, getLanguage);
  return (
    <ConfigProvider locale={antLocale} theme={themeConfig}>
      <TenantProvider tenant={tenant}>
        <QueryClientProvider client={queryClient}>
          <BrowserRouter>
            <UnauthorizedNavigation />
            {/* Navigations are transitions: the page on screen stays until the next one's chunk is in. */}
            <Suspense fallback={null}>
              <BootMaskRemover />
              {/* Inside the boundary: it commits with the page, once the page's messages are in. */}
              <DocumentTitle tenant={tenant} />
              <AppRoutes />
            </Suspense>
          </BrowserRouter>
          <FeedbackSlot />
        </QueryClientProvider>
      </TenantProvider>
    </ConfigProvider>
  );
}
