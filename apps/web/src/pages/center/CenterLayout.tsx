import { Suspense, useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { Layout, Menu, Spin } from 'antd';
import { AccountBookOutlined, ApiOutlined, CloseOutlined, CloudServerOutlined, FileTextOutlined, HddOutlined, HomeOutlined, KeyOutlined, PictureOutlined, ProfileOutlined, SafetyOutlined } from '@ant-design/icons';
import { Outlet, useLocation, useNavigate } from 'react-router';
import { NavBar } from '../../modules/NavBar/NavBar.tsx';
import { centerMenu, findRoute, pathOf, type AppRoute } from '../../route-table.ts';
import { useT } from '../../locales/i18n.ts';
import styles from './CenterLayout.module.css';

const ICONS = {
  home: <HomeOutlined />,
  safe: <SafetyOutlined />,
  expense: <AccountBookOutlined />,
  instance: <CloudServerOutlined />,
  key: <KeyOutlined />,
  bill: <FileTextOutlined />,
  order: <ProfileOutlined />,
  // Issue #9 (web): the API keys of the large-model platform.
  api: <ApiOutlined />,
  // Issue #10 (web): /center/system, the disks of the instances; 我的镜像.
  disk: <HddOutlined />,
  image: <PictureOutlined />,
};
const TABS_KEY = 'center-tabs';
const HOME = pathOf('centerHome');

type Tab = { path: string; title: AppRoute['title']; affix: boolean };

function readTabs(): Tab[] {
  try {
    const raw = sessionStorage.getItem(TABS_KEY);
    return raw ? (JSON.parse(raw) as Tab[]).filter((x) => findRoute(x.path)) : [];
  } catch {
    return [];
  }
}

const tabId = (path: string) => `center-tab-${path.replace(/[^a-z0-9]/gi, '-')}`;

/**
 * The /center console: side menu, a strip of visited pages (affix tabs pinned), the page. The
 * strip is an ARIA tablist (arrow keys move between tabs); a tab's close button sits beside it,
 * not inside it, so no control nests in another.
 */
export function CenterLayout() {
  const { t } = useT();
  const location = useLocation();
  const navigate = useNavigate();
  const route = findRoute(location.pathname);
  const [tabs, setTabs] = useState<Tab[]>(readTabs);
  const strip = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!route) return;
    setTabs((prev) => {
      const pinned = prev.some((x) => x.path === HOME) ? prev : [{ path: HOME, title: 'center.menu.home' as const, affix: true }, ...prev];
      if (pinned.some((x) => x.path === route.path)) return pinned;
      return [...pinned, { path: route.path, title: route.title, affix: Boolean(route.affix) }];
    });
  }, [route]);

  useEffect(() => {
    sessionStorage.setItem(TABS_KEY, JSON.stringify(tabs));
  }, [tabs]);

  const selectedMenu = useMemo(() => centerMenu.filter((m) => location.pathname.startsWith(m.path)).map((m) => m.path), [location.pathname]);
  const active = route?.path ?? location.pathname;

  const closeTab = (path: string) => {
    const idx = tabs.findIndex((x) => x.path === path);
    const next = tabs.filter((x) => x.path !== path || x.affix);
    setTabs(next);
    if (path === active) navigate(next[Math.max(0, idx - 1)]?.path ?? HOME);
  };

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const keys: Record<string, number> = { ArrowRight: 1, ArrowLeft: -1 };
    const step = keys[e.key];
    if (!step) return;
    e.preventDefault();
    const idx = tabs.findIndex((x) => x.path === active);
    const next = tabs[(idx + step + tabs.length) % tabs.length];
    if (!next) return;
    navigate(next.path);
    strip.current?.querySelector<HTMLButtonElement>(`#${tabId(next.path)}`)?.focus();
  };

  return (
    <Layout style={{ minHeight: '100vh' }}>
      <NavBar />
      <Layout>
        <Layout.Sider width={208} theme="light" style={{ borderRight: '1px solid #f0f0f0' }} breakpoint="lg" collapsedWidth={56}>
          {/* The menu stays in view under the sticky nav bar while a long page scrolls. */}
          <nav aria-label={t('center.menu.label')} style={{ position: 'sticky', top: 60 }}>
            <Menu
              mode="inline"
              selectedKeys={selectedMenu}
              style={{ borderInlineEnd: 'none', paddingTop: 8 }}
              items={centerMenu.map((m) => ({ key: m.path, icon: ICONS[m.icon], label: t(m.title) }))}
              onClick={({ key }) => navigate(key)}
              data-testid="center-menu"
            />
          </nav>
        </Layout.Sider>
        <Layout.Content className={styles.content}>
          {/* The page's one h1: the tab strip shows its name, this gives it to screen readers and outlines. */}
          {route && <h1 className="sr-only">{t(route.title)}</h1>}
          <div role="tablist" aria-label={t('center.tabsLabel')} className={styles.tabs} ref={strip} onKeyDown={onKeyDown} data-testid="center-tabs">
            {tabs.map((x) => {
              const selected = x.path === active;
              return (
                <div key={x.path} className={`${styles.tab} ${selected ? styles.active : ''}`}>
                  <button
                    type="button"
                    role="tab"
                    id={tabId(x.path)}
                    aria-selected={selected}
                    aria-controls="center-panel"
                    aria-keyshortcuts={x.affix ? undefined : 'Delete'}
                    tabIndex={selected ? 0 : -1}
                    onClick={() => navigate(x.path)}
                    onKeyDown={(e) => {
                      if (e.key === 'Delete' && !x.affix) closeTab(x.path);
                    }}
                  >
                    {t(x.title)}
                    {/* A pointer's way to close; the keyboard's is Delete on the tab (a tablist holds only tabs). */}
                    {!x.affix && (
                      <span
                        className={styles.close}
                        aria-hidden="true"
                        title={t('center.closeTab', { title: t(x.title) })}
                        onClick={(e) => {
                          e.stopPropagation();
                          closeTab(x.path);
                        }}
                      >
                        <CloseOutlined />
                      </span>
                    )}
                  </button>
                </div>
              );
            })}
          </div>
          <div role="tabpanel" id="center-panel" aria-labelledby={tabId(active)}>
            <Suspense fallback={<Spin style={{ display: 'block', margin: '48px auto' }} />}>
              <Outlet />
            </Suspense>
          </div>
        </Layout.Content>
      </Layout>
    </Layout>
  );
}
