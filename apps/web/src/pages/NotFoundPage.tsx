import { Button, Layout, Result, Space } from 'antd';
import { useNavigate } from 'react-router';
import { useT } from '../locales/i18n.ts';
import { NavBar } from '../modules/NavBar/NavBar.tsx';

/** The catch-all: the navigation bar stays, so a mistyped address is never a dead end. */
export function NotFoundPage() {
  const { t } = useT();
  const navigate = useNavigate();
  // react-router keeps its own history index: 0 means this page opened the tab (nothing to go back to).
  const canGoBack = ((window.history.state as { idx?: number } | null)?.idx ?? 0) > 0;
  return (
    <Layout style={{ minHeight: '100vh' }}>
      <NavBar />
      <Layout.Content>
        <Result
          status="404"
          title={<h1 style={{ font: 'inherit', margin: 0, color: 'inherit' }}>{t('common.notFoundTitle')}</h1>}
          subTitle={t('common.notFoundDesc')}
          style={{ paddingTop: 80 }}
          extra={
            <Space size={12}>
              {canGoBack && <Button onClick={() => navigate(-1)}>{t('common.goBack')}</Button>}
              <Button type="primary" onClick={() => navigate('/')} data-testid="notfound-home">
                {t('common.backHome')}
              </Button>
            </Space>
          }
          data-testid="not-found"
        />
      </Layout.Content>
    </Layout>
  );
}
