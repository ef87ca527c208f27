import { useMemo, type ReactNode } from 'react';
import { ConfigProvider } from 'antd';
import { useTenant } from './tenant.tsx';

/**
 * antd derives link colours (link buttons, copy icons, breadcrumbs) from colorInfo, which stays
 * antd blue whatever the tenant's primary colour is. Layouts wrap their pages in this, so links
 * follow the tenant's brand like the primary buttons do. Everything else is inherited.
 */
export function BrandTheme({ children }: { children: ReactNode }) {
  const { config } = useTenant();
  const theme = useMemo(() => ({ token: { colorLink: config.primaryColor } }), [config.primaryColor]);
  return <ConfigProvider theme={theme}>{children}</ConfigProvider>;
}
