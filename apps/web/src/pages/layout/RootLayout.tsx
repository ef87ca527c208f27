import { Layout } from 'antd';
import { Outlet } from 'react-router';
import { NavBar } from '../../modules/NavBar/NavBar.tsx';
import { SiteFooter } from '../../modules/SiteFooter.tsx';
import { PromoBanner } from '../../modules/PromoBanner.tsx';

/** SPEC §2 root layout: navigation bar, the page, the tenant's footer. */
export function RootLayout() {
  return (
    <Layout style={{ minHeight: '100vh', background: '#fff' }}>
      <PromoBanner />
      <NavBar />
      <Layout.Content>
        <Outlet />
      </Layout.Content>
      <SiteFooter />
    </Layout>
  );
}
