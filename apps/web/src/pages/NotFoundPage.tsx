import { Button, Result } from 'antd';
import { useNavigate } from 'react-router';
import { useT } from '../locales/i18n.ts';

export function NotFoundPage() {
  const { t } = useT();
  const navigate = useNavigate();
  return (
    <Result
      status="404"
      title={t('common.notFoundTitle')}
      subTitle={t('common.notFoundDesc')}
      style={{ paddingTop: 120 }}
      extra={
        <Button type="primary" onClick={() => navigate('/')}>
          {t('common.backHome')}
        </Button>
      }
    />
  );
}
