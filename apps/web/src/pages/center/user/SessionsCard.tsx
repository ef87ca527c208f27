import { Button, Card, Empty, Flex, Popconfirm, Result, Table, Tag, Tooltip, Typography, type TableColumnsType } from 'antd';
import { useFeedback } from '../../../modules/feedback.ts';
import { DesktopOutlined, MobileOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import type { SessionItem } from '@suanli/contract/user';
import { formatDateTime } from '@suanli/domain/format';
import { sessionsQuery, useRevokeOtherSessions, useRevokeSession } from '../../../api/queries/user.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { useT } from '../../../locales/i18n.ts';
import { summariseUserAgent } from './user-agent.ts';
import { useScrollRegion } from '../../../modules/useScrollRegion.ts';

/** This device first, then the most recently active. */
const byRecency = (a: SessionItem, b: SessionItem) => Number(b.current) - Number(a.current) || b.lastSeenAt.localeCompare(a.lastSeenAt);

/** GET /api/v1/user/sessions, with 下线 per device and 下线其他所有设备 (both confirmed first). */
export function SessionsCard() {
  const { t } = useT();
  const tableBox = useScrollRegion<HTMLDivElement>(t('safe.sessions.title'));
  const { message } = useFeedback();
  const sessions = useQuery(sessionsQuery());
  const revoke = useRevokeSession();
  const revokeOthers = useRevokeOtherSessions();

  const rows = [...(sessions.data?.list ?? [])].sort(byRecency);
  const others = rows.filter((s) => !s.current).length;

  const columns: TableColumnsType<SessionItem> = [
    {
      title: t('safe.sessions.device'),
      key: 'device',
      render: (_v, s) => {
        const d = summariseUserAgent(s.userAgent);
        const label = d.browser || d.os ? `${d.browser ?? t('safe.sessions.unknownBrowser')} · ${d.os ?? t('safe.sessions.unknownOs')}` : t('safe.sessions.unknownDevice');
        return (
          <Flex align="center" gap={8}>
            {d.mobile ? <MobileOutlined /> : <DesktopOutlined />}
            <Tooltip title={s.userAgent || undefined}>
              <span>{label}</span>
            </Tooltip>
            {s.current && (
              <Tag color="processing" data-testid="session-current">
                {t('safe.sessions.current')}
              </Tag>
            )}
          </Flex>
        );
      },
    },
    { title: t('safe.sessions.ip'), dataIndex: 'ip', key: 'ip', render: (ip: string) => <Typography.Text code>{ip || '-'}</Typography.Text> },
    { title: t('safe.sessions.signedInAt'), dataIndex: 'createdAt', key: 'createdAt', render: (v: string) => formatDateTime(v) },
    { title: t('safe.sessions.lastActive'), dataIndex: 'lastSeenAt', key: 'lastSeenAt', render: (v: string) => formatDateTime(v) },
    {
      title: t('safe.sessions.actions'),
      key: 'actions',
      width: 100,
      render: (_v, s) =>
        s.current ? null : (
          <Popconfirm
            title={t('safe.sessions.revokeTitle')}
            description={t('safe.sessions.revokeContent')}
            okText={t('common.confirm')}
            cancelText={t('common.cancel')}
            okButtonProps={{ danger: true }}
            onConfirm={() =>
              revoke.mutateAsync(s.id).then(
                () => void message.success(t('safe.sessions.revoked')),
                () => undefined, // the client has shown the error
              )
            }
          >
            <Button type="link" danger size="small" style={{ padding: 0 }} loading={revoke.isPending && revoke.variables === s.id} data-testid="session-revoke">
              {t('safe.sessions.revoke')}
            </Button>
          </Popconfirm>
        ),
    },
  ];

  return (
    <Card
      ref={tableBox}
      title={t('safe.sessions.title')}
      data-testid="safe-sessions"
      extra={
        <Popconfirm
          title={t('safe.sessions.revokeOthersTitle')}
          description={t('safe.sessions.revokeOthersContent')}
          okText={t('common.confirm')}
          cancelText={t('common.cancel')}
          okButtonProps={{ danger: true }}
          disabled={others === 0}
          onConfirm={() =>
            revokeOthers.mutateAsync().then(
              (r) => void message.success(t('safe.sessions.revokedOthers', { count: r.revoked })),
              () => undefined, // the client has shown the error
            )
          }
        >
          <Button danger disabled={others === 0} loading={revokeOthers.isPending} data-testid="session-revoke-others">
            {t('safe.sessions.revokeOthers')}
          </Button>
        </Popconfirm>
      }
    >
      <Typography.Paragraph type="secondary">{t('safe.sessions.desc')}</Typography.Paragraph>
      {sessions.isError ? (
        <Result
          status="warning"
          title={t('safe.sessions.loadFailed')}
          subTitle={getErrorMessage(sessions.error)}
          extra={
            <Button onClick={() => void sessions.refetch()} loading={sessions.isFetching}>
              {t('common.retry')}
            </Button>
          }
        />
      ) : (
        <Table<SessionItem>
          rowKey="id"
          size="middle"
          columns={columns}
          dataSource={rows}
          loading={sessions.isPending}
          pagination={false}
          scroll={{ x: 720 }}
          locale={{ emptyText: sessions.isPending ? <div style={{ height: 96 }} /> : <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('safe.sessions.empty')} /> }}
          data-testid="session-table"
        />
      )}
    </Card>
  );
}
