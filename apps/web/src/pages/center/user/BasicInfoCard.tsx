import { Button, Card, Descriptions, Space, Tag, Typography } from 'antd';
import { useNavigate } from 'react-router';
import type { UserDetail } from '@suanli/contract/user';
import { maskPhone } from '@suanli/domain/account-rules';
import { formatDateTime } from '@suanli/domain/format';
import { useT } from '../../../locales/i18n.ts';
import { isRouteAvailable } from '../../../route-table.ts';
import { displayName } from '../../../modules/user-name.ts';

const CERTIFY_PATH = '/center/user/auth';

/** Who the account is: masked phone, public uuid, account type, real-name status. */
export function BasicInfoCard({ user }: { user: UserDetail }) {
  const { t } = useT();
  const navigate = useNavigate();
  return (
    <Card title={t('safe.basic.title')} data-testid="safe-basic">
      <Descriptions column={{ xs: 1, md: 2, xl: 3 }} colon={false} styles={{ label: { color: 'rgba(0,0,0,.62)', width: 104, whiteSpace: 'nowrap' } }}>
        <Descriptions.Item label={t('safe.basic.userName')}>{displayName(user)}</Descriptions.Item>
        <Descriptions.Item label={t('safe.basic.phone')}>
          <span data-testid="safe-phone">{maskPhone(user.phone)}</span>
        </Descriptions.Item>
        <Descriptions.Item label={t('safe.basic.uuid')}>
          <Typography.Text copyable={{ text: user.uuid, tooltips: [t('nav.copyId'), t('nav.copied')] }} data-testid="safe-uuid">
            {user.uuid}
          </Typography.Text>
        </Descriptions.Item>
        <Descriptions.Item label={t('safe.basic.accountType')}>
          {user.accountType === 'enterprise' ? <Tag color="blue">{t('center.home.enterprise')}</Tag> : <Tag>{t('center.home.personal')}</Tag>}
        </Descriptions.Item>
        <Descriptions.Item label={t('safe.basic.realName')}>
          <Space size={8}>
            {user.realNameAuth ? <Tag color="success">{t('safe.home.verified')}</Tag> : <Tag color="warning">{t('safe.home.unverified')}</Tag>}
            {!user.realNameAuth && isRouteAvailable(CERTIFY_PATH) && (
              <Button type="link" size="small" style={{ padding: 0 }} onClick={() => navigate(CERTIFY_PATH)}>
                {t('safe.basic.goCertify')}
              </Button>
            )}
          </Space>
        </Descriptions.Item>
        <Descriptions.Item label={t('safe.basic.registeredAt')}>{formatDateTime(user.createdAt)}</Descriptions.Item>
      </Descriptions>
    </Card>
  );
}
