import { Button, Flex, Layout, Menu, Skeleton } from 'antd';
import { useQuery } from '@tanstack/react-query';
import { useSyncExternalStore } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import type { MenuProps } from 'antd';
import { useT, type MessageKey } from '../../locales/i18n.ts';
import { getToken, onTokenChange } from '../../api/session.ts';
import { userDetailQuery } from '../../api/queries/user.ts';
import { useTenant } from '../tenant.tsx';
import { isRouteAvailable } from '../route-availability.ts';
import { UserDropdown } from './UserDropdown.tsx';
import { ToolsMenu } from './ToolsMenu.tsx';
import { LanguageSwitch } from '../LanguageSwitch.tsx';

/** SPEC §2 navigation entries, in order. Entries whose pages are not built yet stay hidden. */
const ENTRIES: { key: string; title: MessageKey; to: string }[] = [
  { key: 'market', title: 'nav.market', to: '/market/index' },
  { key: 'ai', title: 'nav.aiPlatform', to: '/center/train/index' },
  { key: 'largeModel', title: 'nav.largeModel', to: '/largeModel/modelSquare' },
  { key: 'images', title: 'nav.imageCommunity', to: '/images/index' },
  { key: 'bareMetal', title: 'nav.bareMetal', to: '/contact' },
  { key: 'help', title: 'nav.help', to: '/help' },
];

export function NavBar() {
  const { t } = useT();
  const tenant = useTenant();
  const location = useLocation();
  const navigate = useNavigate();
  const signedIn = useSyncExternalStore(onTokenChange, () => Boolean(getToken()));
  const user = useQuery({ ...userDetailQuery(), enabled: signedIn });

  const entries = ENTRIES.filter((e) => {
    if (e.key === 'help' && tenant.config.restricted) return false; // PRODUCT.md: restricted tenants hide help
    return isRouteAvailable(e.to);
  });
  const items: MenuProps['items'] = entries.map((e) => ({ key: e.to, label: <Link to={e.to}>{t(e.title)}</Link> }));
  // 裸金属 only points at /contact: it is not where a visitor of /contact (from the footer, say) is.
  const selected = entries.filter((e) => e.key !== 'bareMetal' && location.pathname.startsWith(e.to.split('/').slice(0, 2).join('/'))).map((e) => e.to);

  return (
    <Layout.Header
      style={{ display: 'flex', alignItems: 'center', gap: 24, background: '#fff', padding: '0 24px', height: 60, borderBottom: '1px solid #f0f0f0', position: 'sticky', top: 0, zIndex: 100 }}
    >
      <Link to="/" style={{ display: 'flex', alignItems: 'center', flex: 'none' }} aria-label={tenant.title}>
        {tenant.navigation_logo ? <img src={tenant.navigation_logo} alt={tenant.title} style={{ height: 36 }} /> : <strong>{tenant.title}</strong>}
      </Link>
      <Menu mode="horizontal" items={items} selectedKeys={selected} style={{ flex: 1, minWidth: 0, borderBottom: 'none', lineHeight: '58px', background: 'transparent' }} data-testid="nav-menu" />
      <Flex align="center" gap={8} style={{ flex: 'none' }}>
        {signedIn && <ToolsMenu />}
        {signedIn && user.data?.role === 'operator' && isRouteAvailable('/operate/home') && (
          <Button
            type="text"
            onClick={() => navigate('/operate/home')}
            style={location.pathname.startsWith('/operate') ? { color: 'var(--brand)' } : undefined}
            data-testid="nav-operate"
          >
            {t('nav.operate')}
          </Button>
        )}
        <LanguageSwitch />
        {signedIn ? (
          <>
            <Button type="primary" ghost onClick={() => navigate('/center/home')} data-testid="nav-console">
              {t('nav.console')}
            </Button>
            {user.data ? <UserDropdown user={user.data} /> : <Skeleton.Avatar active size="small" />}
          </>
        ) : (
          <Button type="primary" onClick={() => navigate('/login')} data-testid="nav-login">
            {t('nav.loginRegister')}
          </Button>
        )}
      </Flex>
    </Layout.Header>
  );
}
