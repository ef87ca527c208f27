import { useEffect, useMemo, useState } from 'react';
import { Layout, Menu, Tabs } from 'antd';
import { AccountBookOutlined, HomeOutlined, SafetyOutlined } from '@ant-design/icons';
import { Outlet, useLocation, useMatches, useNavigate } from 'react-router';
import { NavBar } from '../../modules/NavBar/NavBar.tsx';
import { centerMenu, type AppHandle } from '../../routes.tsx';
import { useT } from '../../locales/i18n.ts';

const ICONS = { home: <HomeOutlined />, safe: <SafetyOutlined />, expense: <AccountBookOutlined /> };
const TABS_KEY = 'center-tabs';

type Tab = { path: string; title: AppHandle['title']; affix: boolean };

function readTabs(): Tab[] {
  try {
    const raw = sessionStorage.getItem(TABS_KEY);
    return raw ? (JSON.parse(raw) as Tab[]) : [];
  } catch {
    return [];
  }
}

/** The /center console: side menu, a strip of visited pages (affix tabs pinned), the page. */
export function CenterLayout() {
  const { t } = useT();
  const location = useLocation();
  const navigate = useNavigate();
  const matches = useMatches();
  const handle = [...matches].reverse().find((m) => (m.handle as AppHandle | undefined)?.title)?.handle as AppHandle | undefined;
  const [tabs, setTabs] = useState<Tab[]>(readTabs);

  useEffect(() => {
    if (!handle) return;
    setTabs((prev) => {
      const pinned = prev.some((x) => x.path === '/center/home') ? prev : [{ path: '/center/home', title: 'center.menu.home' as const, affix: true }, ...prev];
      if (pinned.some((x) => x.path === location.pathname)) return pinned;
      return [...pinned, { path: location.pathname, title: handle.title, affix: Boolean(handle.affix) }];
    });
  }, [location.pathname, handle]);

  useEffect(() => {
    sessionStorage.setItem(TABS_KEY, JSON.stringify(tabs));
  }, [tabs]);

  const selectedMenu = useMemo(() => centerMenu.filter((m) => location.pathname.startsWith(m.path)).map((m) => m.path), [location.pathname]);

  const closeTab = (path: string) => {
    const idx = tabs.findIndex((x) => x.path === path);
    const next = tabs.filter((x) => x.path !== path || x.affix);
    setTabs(next);
    if (path === location.pathname) navigate(next[Math.max(0, idx - 1)]?.path ?? '/center/home');
  };

  return (
    <Layout style={{ minHeight: '100vh' }}>
      <NavBar />
      <Layout>
        <Layout.Sider
          width={208}
          theme="light"
          style={{ borderRight: '1px solid #f0f0f0' }}
          breakpoint="lg"
          collapsedWidth={64}
        >
          {/* The menu stays in view under the sticky nav bar while a long page scrolls. */}
          <div style={{ position: 'sticky', top: 60 }}>
            <Menu
              mode="inline"
              selectedKeys={selectedMenu}
              style={{ borderInlineEnd: 'none', paddingTop: 8 }}
              items={centerMenu.map((m) => ({ key: m.path, icon: ICONS[m.icon], label: t(m.title) }))}
              onClick={({ key }) => navigate(key)}
              data-testid="center-menu"
            />
          </div>
        </Layout.Sider>
        <Layout.Content style={{ padding: '0 24px 24px', minWidth: 0 }}>
          <Tabs
            type="editable-card"
            hideAdd
            size="small"
            activeKey={location.pathname}
            onChange={(key) => navigate(key)}
            onEdit={(key, action) => action === 'remove' && typeof key === 'string' && closeTab(key)}
            items={tabs.map((x) => ({ key: x.path, label: t(x.title), closable: !x.affix }))}
            style={{ marginTop: 12 }}
            data-testid="center-tabs"
          />
          <Outlet />
        </Layout.Content>
      </Layout>
    </Layout>
  );
}
