import type { ReactNode } from 'react';
import { Avatar, Button, Card, Col, Descriptions, Flex, Result, Row, Skeleton, Space, Tag, Typography } from 'antd';
import { CloudServerOutlined, CustomerServiceOutlined, KeyOutlined, QuestionCircleOutlined, SafetyOutlined, ShopOutlined, UserOutlined, WalletOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import type { UserDetail } from '@suanli/contract/user';
import { maskPhone } from '@suanli/domain/account-rules';
import { formatDateTime, formatMoney } from '@suanli/domain/format';
import { userDetailQuery } from '../../../api/queries/user.ts';
import { instanceDashboardQuery } from '../../../api/queries/compute.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { useT, type MessageKey } from '../../../locales/i18n.ts';
import { useTenant } from '../../../modules/tenant.tsx';
import { displayName } from '../../../modules/user-name.ts';
import { isRouteAvailable, pathOf } from '../../../route-table.ts';
import styles from './CenterHomePage.module.css';

const RECHARGE_PATH = pathOf('recharge');
const INSTANCES_PATH = pathOf('centerControl');

/** Issue #8: the instance card from GET /api/v1/dashboard/common/instance. */
function InstancesCard() {
  const { t } = useT();
  const navigate = useNavigate();
  const dash = useQuery(instanceDashboardQuery());
  return (
    <Card title={<Space><CloudServerOutlined />{t('center.home.instances')}</Space>} style={{ height: '100%' }} data-testid="home-instances-card">
      {dash.isPending ? (
        <Skeleton active paragraph={{ rows: 1 }} />
      ) : dash.isError ? (
        <Flex align="center" gap={8} wrap>
          <Typography.Text type="danger">{t('compute.dashboard.loadFailed')}</Typography.Text>
          <Button size="small" onClick={() => void dash.refetch()} loading={dash.isFetching}>
            {t('common.retry')}
          </Button>
        </Flex>
      ) : (
        <>
          <div className={styles.figure} data-testid="home-instances-total">
            {t('center.home.instancesRunning', { count: dash.data.total })}
          </div>
          <Space size={4} wrap style={{ marginBottom: 8 }}>
            <Tag color="success">{t('compute.dashboard.running', { count: dash.data.running })}</Tag>
            <Tag>{t('compute.dashboard.stopped', { count: dash.data.stopped })}</Tag>
            {dash.data.expiringSoon > 0 && <Tag color="warning">{t('compute.dashboard.expiring', { count: dash.data.expiringSoon })}</Tag>}
          </Space>
        </>
      )}
      <Flex justify="space-between" align="center" gap={8} wrap>
        <Typography.Text type="secondary">{t('safe.home.instancesHint')}</Typography.Text>
        <Button onClick={() => navigate(INSTANCES_PATH)} data-testid="home-instances-manage">
          {t('compute.dashboard.manage')}
        </Button>
      </Flex>
    </Card>
  );
}

type Shortcut = { key: string; title: MessageKey; icon: ReactNode; to: string };

const SHORTCUTS: Shortcut[] = [
  // Issue #8
  { key: 'market', title: 'nav.market', icon: <ShopOutlined />, to: '/market/index' },
  { key: 'instances', title: 'compute.instances.title', icon: <CloudServerOutlined />, to: '/center/control/index' },
  { key: 'sshKeys', title: 'compute.sshKeys.title', icon: <KeyOutlined />, to: '/center/ssh/control' },
  { key: 'security', title: 'center.home.security', icon: <SafetyOutlined />, to: '/center/user/safe' },
  { key: 'help', title: 'center.home.help', icon: <QuestionCircleOutlined />, to: '/help' },
  { key: 'contact', title: 'center.home.contact', icon: <CustomerServiceOutlined />, to: '/contact' },
];

function RealNameTag({ verified }: { verified: boolean }) {
  const { t } = useT();
  return verified ? <Tag color="success">{t('safe.home.verified')}</Tag> : <Tag color="warning">{t('safe.home.unverified')}</Tag>;
}

function Dashboard({ user }: { user: UserDetail }) {
  const { t } = useT();
  const tenant = useTenant();
  const navigate = useNavigate();
  // PRODUCT.md: a restricted tenant has no help centre.
  const shortcuts = SHORTCUTS.filter((s) => !(s.key === 'help' && tenant.config.restricted) && isRouteAvailable(s.to));

  return (
    <Row gutter={[16, 16]}>
      <Col span={24}>
        <Card className={styles.greeting}>
          <Flex align="center" gap={16} wrap>
            <Avatar size={56} icon={<UserOutlined />} style={{ background: 'var(--brand)', flex: 'none' }} />
            <div style={{ minWidth: 0, flex: 1 }}>
              <Typography.Title level={4} style={{ margin: 0 }} data-testid="home-greeting">
                {t('center.home.greeting', { name: displayName(user) })}
              </Typography.Title>
              <Space size={12} wrap style={{ marginTop: 6 }}>
                <Typography.Text type="secondary" copyable={{ text: user.uuid, tooltips: [t('nav.copyId'), t('nav.copied')] }}>
                  {t('safe.home.userId', { uuid: user.uuid })}
                </Typography.Text>
                <RealNameTag verified={user.realNameAuth} />
              </Space>
            </div>
            <Typography.Text type="secondary">{t('safe.home.welcome', { title: tenant.title })}</Typography.Text>
          </Flex>
        </Card>
      </Col>

      <Col xs={24} md={12} xl={8}>
        <Card title={<Space><WalletOutlined />{t('center.home.balanceCard')}</Space>} style={{ height: '100%' }} data-testid="home-balance-card">
          <div className={styles.figure} data-testid="home-balance">
            {formatMoney(user.balance)}
          </div>
          <Flex justify="space-between" align="center">
            <Typography.Text type="secondary">{t('center.home.frozen', { amount: formatMoney(user.frozenBalance) })}</Typography.Text>
            <Button type="primary" onClick={() => navigate(RECHARGE_PATH)} data-testid="home-recharge">
              {t('center.home.recharge')}
            </Button>
          </Flex>
        </Card>
      </Col>

      <Col xs={24} md={12} xl={8}>
        <InstancesCard />
      </Col>

      <Col xs={24} xl={8}>
        <Card title={<Space><UserOutlined />{t('center.home.account')}</Space>} style={{ height: '100%' }} data-testid="home-account-card">
          <Descriptions column={1} size="small" colon={false} styles={{ label: { color: 'rgba(0,0,0,.62)', width: 104, whiteSpace: 'nowrap' } }}>
            <Descriptions.Item label={t('center.home.phone')}>{maskPhone(user.phone)}</Descriptions.Item>
            <Descriptions.Item label={t('center.home.realName')}>
              <RealNameTag verified={user.realNameAuth} />
            </Descriptions.Item>
            <Descriptions.Item label={t('center.home.accountType')}>{t(user.accountType === 'enterprise' ? 'center.home.enterprise' : 'center.home.personal')}</Descriptions.Item>
            <Descriptions.Item label={t('center.home.registeredAt')}>{formatDateTime(user.createdAt)}</Descriptions.Item>
          </Descriptions>
        </Card>
      </Col>

      <Col span={24}>
        <Card title={t('center.home.shortcuts')} data-testid="home-shortcuts">
          <div className={styles.shortcuts}>
            {shortcuts.map((s) => (
              <button key={s.key} type="button" className={styles.shortcut} onClick={() => navigate(s.to)} data-testid={`home-shortcut-${s.key}`}>
                <span className={styles.shortcutIcon}>{s.icon}</span>
                {t(s.title)}
              </button>
            ))}
          </div>
        </Card>
      </Col>
    </Row>
  );
}

function DashboardSkeleton() {
  return (
    <Row gutter={[16, 16]} data-testid="home-loading">
      <Col span={24}>
        <Card>
          <Skeleton avatar active paragraph={{ rows: 1 }} />
        </Card>
      </Col>
      {[0, 1, 2].map((i) => (
        <Col key={i} xs={24} md={12} xl={8}>
          <Card>
            <Skeleton active paragraph={{ rows: 3 }} />
          </Card>
        </Col>
      ))}
    </Row>
  );
}

/** /center/home: greeting, balance, instances, account, shortcuts. Later areas add their cards here. */
export function CenterHomePage() {
  const { t } = useT();
  const user = useQuery(userDetailQuery());

  if (user.isPending) return <DashboardSkeleton />;
  if (user.isError) {
    return (
      <Card>
        <Result
          status="warning"
          title={t('safe.home.loadFailed')}
          subTitle={getErrorMessage(user.error)}
          extra={
            <Button type="primary" onClick={() => void user.refetch()} loading={user.isFetching} data-testid="home-retry">
              {t('common.retry')}
            </Button>
          }
        />
      </Card>
    );
  }
  return <Dashboard user={user.data} />;
}
