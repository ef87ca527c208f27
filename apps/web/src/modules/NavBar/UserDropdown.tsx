import { Avatar, Button, Divider, Dropdown, Flex, Popconfirm, Tag, Typography } from 'antd';
import { LogoutOutlined, SafetyOutlined, UserOutlined } from '@ant-design/icons';
import { useNavigate } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import type { UserDetail } from '@suanli/contract/user';
import { formatMoney } from '@suanli/domain/format';
import { useT } from '../../locales/i18n.ts';
import { useLogout } from '../../api/queries/user.ts';
import { instanceDashboardQuery } from '../../api/queries/compute.ts';
import { pathOf } from '../../route-table.ts';
import { displayName } from '../user-name.ts';

const RECHARGE_PATH = pathOf('recharge');

/**
 * Issue #8: the count from GET /api/v1/dashboard/common/instance (data.total), asked when the
 * panel opens; the user detail's own figure only if that call fails.
 */
function InstanceCount({ fallback }: { fallback: number }) {
  const instances = useQuery(instanceDashboardQuery());
  return <>{instances.data?.total ?? (instances.isError ? fallback : '—')}</>;
}

/** SPEC §2 user dropdown: name, real-name badge, ID, balance with recharge, frozen 0, instances, log out. */
export function UserDropdown({ user }: { user: UserDetail }) {
  const { t } = useT();
  const navigate = useNavigate();
  const logout = useLogout();

  const panel = (
    <div className="user-dropdown" data-testid="user-dropdown-panel" style={{ width: 320, padding: 16, background: '#fff', borderRadius: 8, boxShadow: '0 6px 16px rgba(0,0,0,.12)' }}>
      <Flex align="center" gap={12}>
        <Avatar size={44} icon={<UserOutlined />} style={{ background: 'var(--brand)', flex: 'none' }} />
        <Flex align="center" gap={8} style={{ minWidth: 0 }}>
          <Typography.Text strong ellipsis style={{ fontSize: 15 }} data-testid="dropdown-username">
            {displayName(user)}
          </Typography.Text>
          {user.realNameAuth ? (
            <Tag color="success" style={{ marginInlineEnd: 0, flex: 'none' }}>
              {t('nav.realNameVerified')}
            </Tag>
          ) : (
            <Tag style={{ marginInlineEnd: 0, flex: 'none' }}>{t('nav.realNameUnverified')}</Tag>
          )}
        </Flex>
      </Flex>
      {/* One line whatever the width: the uuid ellipsises (full text in its title), the copy icon stays beside it. */}
      <Flex align="center" gap={6} style={{ marginTop: 12, padding: '5px 10px', background: '#f5f7fa', borderRadius: 6, fontSize: 12 }} data-testid="dropdown-uuid">
        <Typography.Text type="secondary" style={{ fontSize: 12, flex: 'none' }}>
          {t('nav.userId')}
        </Typography.Text>
        <span title={user.uuid} style={{ flex: 1, minWidth: 0, overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap', color: 'rgba(0,0,0,.65)', fontVariantNumeric: 'tabular-nums' }}>
          {user.uuid}
        </span>
        <Typography.Text copyable={{ text: user.uuid, tooltips: [t('nav.copyId'), t('nav.copied')] }} style={{ flex: 'none', fontSize: 12 }} />
      </Flex>
      <Divider style={{ margin: '12px 0' }} />
      <Flex justify="space-between" align="center">
        <div>
          <Typography.Text type="secondary">{t('nav.availableBalance')}</Typography.Text>
          <div style={{ fontSize: 20, fontWeight: 600 }} data-testid="dropdown-balance">
            {formatMoney(user.balance)}
          </div>
        </div>
        <Button type="primary" size="small" onClick={() => navigate(RECHARGE_PATH)}>
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
          <InstanceCount fallback={user.instanceNum} /> {t('nav.instanceUnit')}
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
        <span style={{ maxWidth: 120, overflow: 'hidden', textOverflow: 'ellipsis' }}>{displayName(user)}</span>
      </Button>
    </Dropdown>
  );
}
