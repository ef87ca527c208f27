import { useEffect, useState, useSyncExternalStore } from 'react';
import { Button, Layout, Menu } from 'antd';
import { CloseOutlined, MenuOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import { Link, useLocation, useNavigate } from 'react-router';
import type { MenuProps } from 'antd';
import { useT, type MessageKey } from '../../locales/i18n.ts';
import { getToken, onTokenChange } from '../../api/session.ts';
import { userDetailQuery } from '../../api/queries/user.ts';
import { useTenant } from '../tenant.tsx';
import { isRouteAvailable } from '../../route-table.ts';
import { UserDropdown } from './UserDropdown.tsx';
import { ToolsMenu } from './ToolsMenu.tsx';
import { LanguageSwitch } from '../LanguageSwitch.tsx';
import styles from './NavBar.module.css';

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
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [location.pathname]);

  const entries = ENTRIES.filter((e) => {
    if (e.key === 'help' && tenant.config.restricted) return false; // PRODUCT.md: restricted tenants hide help
    return isRouteAvailable(e.to);
  });
  const items: MenuProps['items'] = entries.map((e) => ({ key: e.to, label: <Link to={e.to}>{t(e.title)}</Link> }));
  // 裸金属 only points at /contact: it is not where a visitor of /contact (from the footer, say) is.
  const selected = entries.filter((e) => e.key !== 'bareMetal' && location.pathname.startsWith(e.to.split('/').slice(0, 2).join('/'))).map((e) => e.to);
  const isOperator = signedIn && user.data?.role === 'operator' && isRouteAvailable('/operate/home');
  // The phone's folded menu: the entries, then what the bar itself has no room for.
  const folded = [
    ...entries.map((e) => ({ to: e.to, label: t(e.title) })),
    ...(isOperator ? [{ to: '/operate/home', label: t('nav.operate') }] : []),
    ...(signedIn ? [{ to: '/center/home', label: t('nav.console') }] : []),
  ];
  const title = tenant.title;

  return (
    <>
      <Layout.Header className={styles.bar} style={{ background: '#fff', height: 60, paddingInline: undefined }}>
        <Link to="/" className={styles.logo} aria-label={title}>
          {tenant.navigation_logo ? <img src={tenant.navigation_logo} alt={title} /> : <strong>{title}</strong>}
        </Link>
        <nav aria-label={t('nav.mainLabel')} className={styles.menu}>
          <Menu mode="horizontal" items={items} selectedKeys={selected} style={{ minWidth: 0, borderBottom: 'none', lineHeight: '58px', background: 'transparent' }} data-testid="nav-menu" />
        </nav>
        <div className={styles.actions}>
          {signedIn && (
            <span className={styles.wide}>
              <ToolsMenu />
            </span>
          )}
          {isOperator && (
            <Button
              type="text"
              className={styles.wide}
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
              <Button type="primary" ghost className={styles.wide} onClick={() => navigate('/center/home')} data-testid="nav-console">
                {t('nav.console')}
              </Button>
              {user.data ? <UserDropdown user={user.data} /> : <span className={styles.avatarPlaceholder} aria-hidden="true" data-testid="nav-avatar-placeholder" />}
            </>
          ) : (
            <Button type="primary" onClick={() => navigate('/login')} data-testid="nav-login">
              {t('nav.loginRegister')}
            </Button>
          )}
          <Button
            type="text"
            className={styles.burger}
            icon={menuOpen ? <CloseOutlined /> : <MenuOutlined />}
            aria-expanded={menuOpen}
            aria-controls="nav-folded"
            aria-label={t('nav.menu')}
            onClick={() => setMenuOpen((v) => !v)}
            data-testid="nav-burger"
          />
        </div>
      </Layout.Header>
      {menuOpen && (
        <nav id="nav-folded" className={styles.drawer} aria-label={t('nav.mainLabel')} data-testid="nav-folded">
          <ul>
            {folded.map((e) => (
              <li key={e.to}>
                <Link to={e.to} aria-current={location.pathname === e.to ? 'page' : undefined}>
                  {e.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
      )}
    </>
  );
}
