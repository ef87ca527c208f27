import { Button, Card, Col, Result, Row, Skeleton, Typography } from 'antd';
import { useQuery } from '@tanstack/react-query';
import { userDetailQuery } from '../../../api/queries/user.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { useT } from '../../../locales/i18n.ts';
import { BasicInfoCard } from './BasicInfoCard.tsx';
import { ChangePasswordCard } from './ChangePasswordCard.tsx';
import { ChangePhoneCard } from './ChangePhoneCard.tsx';
import { SessionsCard } from './SessionsCard.tsx';

/** /center/user/safe (账号安全): who the account is, its password and phone, its signed-in devices. */
export function SafePage() {
  const { t } = useT();
  const user = useQuery(userDetailQuery());

  return (
    <div data-testid="safe-page">
      <Typography.Title level={4} style={{ margin: '4px 0 4px' }}>
        {t('safe.title')}
      </Typography.Title>
      <Typography.Paragraph type="secondary">{t('safe.subtitle')}</Typography.Paragraph>
      {user.isError ? (
        <Card>
          <Result
            status="warning"
            title={t('safe.home.loadFailed')}
            subTitle={getErrorMessage(user.error)}
            extra={
              <Button type="primary" onClick={() => void user.refetch()} loading={user.isFetching}>
                {t('common.retry')}
              </Button>
            }
          />
        </Card>
      ) : (
        <Row gutter={[16, 16]}>
          <Col span={24}>{user.data ? <BasicInfoCard user={user.data} /> : <Card><Skeleton active paragraph={{ rows: 2 }} /></Card>}</Col>
          <Col xs={24} xl={12}>
            <ChangePasswordCard />
          </Col>
          <Col xs={24} xl={12}>
            {user.data ? <ChangePhoneCard currentPhone={user.data.phone} /> : <Card style={{ height: '100%' }}><Skeleton active /></Card>}
          </Col>
          <Col span={24}>
            <SessionsCard />
          </Col>
        </Row>
      )}
    </div>
  );
}
