import { Button, Card, Result, Space } from 'antd';
import { useNavigate } from 'react-router';
import { useT } from '../../locales/i18n.ts';

/** PRODUCT.md: pages that need an enterprise account send personal accounts here. */
export function OnlyComPage() {
  const { t } = useT();
  const navigate = useNavigate();
  return (
    <Card>
      <Result
        status="403"
        title={t('center.onlyComTitle')}
        subTitle={t('center.onlyComDesc')}
        extra={
          <Space size={12}>
            <Button onClick={() => navigate('/center/home')}>{t('common.backToConsole')}</Button>
            <Button type="primary" onClick={() => navigate('/contact')}>
              {t('center.onlyComAction')}
            </Button>
          </Space>
        }
      />
    </Card>
  );
}
