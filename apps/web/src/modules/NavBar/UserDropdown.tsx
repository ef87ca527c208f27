import { Avatar, Button, Divider, Dropdown, Flex, Popconfirm, Tag, Typography } from 'antd';
import { LogoutOutlined, SafetyOutlined, UserOutlined } from '@ant-design/icons';
import { useNavigate } from 'react-router';
import type { UserDetail } from '@suanli/contract/user';
import { formatMoney } from '@suanli/domain/format';
import { useT } from '../../locales/i18n.ts';
import { useLogout } from '../../api/queries/user.ts';
import { isRouteAvailable } from '../route-availability.ts';

const RECHARGE_PATH = '/recharge/index';

/** SPEC §2 user dropdown: name, real-name badge, ID, balance with recharge, frozen 0, instances, log out. */
export function UserDropdown({ user }: { user: UserDetail }) {
  const { t } = useT();
  const navigate = useNavigate();
  const logout = useLogout();

  const panel = (
    <div className="user-dropdown" data-testid="user-dropdown-panel" style={{ width: 300, padding: 16, background: '#fff', borderRadius: 8, boxShadow: '0 6px 16px rgba(0,0,0,.12)' }}>
      <Flex align="center" gap={12}>
        <Avatar size={44} icon={<UserOutlined />} style={{ background: 'var(--brand)' }} />
        <div style={{ minWidth: 0 }}>
          <Flex align="center" gap={8}>
            <Typography.Text strong ellipsis data-testid="dropdown-username">
              {user.userName}
            </Typography.Text>
            {user.realNameAuth ? <Tag color="success">{t('nav.realNameVerified')}</Tag> : <Tag>{t('nav.realNameUnverified')}</Tag>}
          </Flex>
          <Typography.Text type="secondary" style={{ fontSize: 12 }} copyable={{ text: user.uuid, tooltips: [t('nav.copyId'), t('nav.copied')] }} data-testid="dropdown-uuid">
            {t('nav.userId')}: {user.uuid}
          </Typography.Text>
        </div>
      </Flex>
      <Divider style={{ margin: '12px 0' }} />
      <Flex justify="space-between" align="center">
        <div>
          <Typography.Text type="secondary">{t('nav.availableBalance')}</Typography.Text>
          <div style={{ fontSize: 20, fontWeight: 600 }} data-testid="dropdown-balance">
            {formatMoney(user.balance)}
          </div>
        </div>
        <Button type="primary" size="small" disabled={!isRouteAvailable(RECHARGE_PATH)} onClick={() => navigate(RECHARGE_PATH)}>
          {t('nav.recharge')}
        </Button>
      </Flex>
      <Flex justify="space-between" style={{ marginTop: 8 }}>
        <Typography.Text type="secondary">{t('nav.frozenBalance')}</Typography.Text>
        <span data-testid="dropdown-frozen">{formatMoney(user.frozenBalance)}</span>
      </Flex>
      <Flex justify="space-between" style={{ marginTop: 4 }}>
        <Typography.Text type="secondary">{t('nav.instanceCount')}</Typography.Text>
        <span data-testid="dropdown-instances">
          {user.instanceNum} {t('nav.instanceUnit')}
        </span>
      </Flex>
      <Divider style={{ margin: '12px 0' }} />
      <Flex justify="space-between">
        <Button type="text" icon={<SafetyOutlined />} onClick={() => navigate('/center/user/safe')}>
          {t('nav.accountSecurity')}
        </Button>
        <Popconfirm
          title={t('nav.logoutConfirm')}
          okText={t('common.ok')}
          cancelText={t('common.cancel')}
          onConfirm={() => logout.mutateAsync().then(() => navigate('/login', { replace: true }))}
        >
          <Button type="text" danger icon={<LogoutOutlined />} loading={logout.isPending} data-testid="logout">
            {t('nav.logout')}
          </Button>
        </Popconfirm>
      </Flex>
    </div>
  );

  return (
    <Dropdown popupRender={() => panel} trigger={['hover', 'click']} placement="bottomRight">
      <Button type="text" data-testid="user-dropdown" style={{ display: 'flex', alignItems: 'center', gap: 8 }}>
        <Avatar size={28} icon={<UserOutlined />} style={{ background: 'var(--brand)' }} />
        <span style={{ maxWidth: 120, overflow: 'hidden', textOverflow: 'ellipsis' }}>{user.userName}</span>
      </Button>
    </Dropdown>
  );
}
