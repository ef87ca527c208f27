import { Alert, Badge, Button, Card, Empty, Flex, Progress, Result, Table, Tag, Tooltip, Typography, type TableColumnsType } from 'antd';
import { ReloadOutlined, WarningOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { DISK_WARN_RATIO, type InstanceDiskUsage } from '@suanli/contract/instance-ops';
import { formatFileSize } from '@suanli/domain/format';
import { diskUsageQuery } from '../../../api/queries/instance-ops.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { useT } from '../../../locales/i18n.ts';
import { pathOf } from '../../../route-table.ts';
import { ServerText } from '../../market/ServerText.tsx';
import { useScrollRegion } from '../../../modules/useScrollRegion.ts';

const EXPAND_PATH = pathOf('expandControl');
const GIB = 1024 ** 3;
const WARN_PERCENT = Math.round(DISK_WARN_RATIO * 100);

/** Share of a disk used, 0–1 (0 when the size is unknown). */
export function usedRatio(used: number, total: number): number {
  return total > 0 ? Math.min(1, Math.max(0, used / total)) : 0;
}

export const dataRatio = (d: InstanceDiskUsage) => usedRatio(d.dataUsedBytes, d.dataTotalBytes > 0 ? d.dataTotalBytes : d.dataDiskGb * GIB);
export const systemRatio = (d: InstanceDiskUsage) => usedRatio(d.systemUsedBytes, d.systemDiskGb * GIB);

function DiskBar({ used, total, ratio, testId }: { used: number; total: number; ratio: number; testId: string }) {
  const { t } = useT();
  const warn = ratio > DISK_WARN_RATIO;
  const percent = Math.round(ratio * 1000) / 10;
  return (
    <Flex vertical gap={2} style={{ minWidth: 160 }} data-testid={testId} data-warn={warn}>
      <Flex justify="space-between" gap={8} style={{ fontSize: 12 }}>
        <span>{t('ops.system.usage', { used: formatFileSize(used), total: formatFileSize(total) })}</span>
        {warn && (
          <Tag color="error" icon={<WarningOutlined />} style={{ marginInlineEnd: 0 }} data-testid="disk-warn-tag">
            {t('ops.system.warn', { ratio: WARN_PERCENT })}
          </Tag>
        )}
      </Flex>
      <Progress percent={percent} size="small" status={warn ? 'exception' : 'normal'} aria-label={`${percent}%`} />
    </Flex>
  );
}

/** /center/system: the system and data disk usage of every instance, with a warning above 90 %. */
export function SystemDiskPage() {
  const { t } = useT();
  // Keyboard users can scroll the table sideways: its scroll box is a focusable, named region (axe).
  const tableBox = useScrollRegion<HTMLDivElement>(t('ops.system.title'));
  const navigate = useNavigate();
  const usage = useQuery(diskUsageQuery());
  const list = usage.data ?? [];
  const warned = list.filter((d) => d.warn || dataRatio(d) > DISK_WARN_RATIO || systemRatio(d) > DISK_WARN_RATIO);

  const columns: TableColumnsType<InstanceDiskUsage> = [
    {
      title: t('ops.system.colInstance'),
      key: 'instance',
      width: 200,
      render: (_v, d) => (
        <Flex vertical gap={0} style={{ minWidth: 0 }}>
          <strong data-testid="disk-instance-name">{d.name}</strong>
          <Typography.Text type="secondary" style={{ fontSize: 12 }}>
            {d.instanceId}
          </Typography.Text>
        </Flex>
      ),
    },
    {
      title: t('ops.system.colStatus'),
      key: 'status',
      width: 100,
      render: (_v, d) => <Badge status={d.status === 'running' ? 'success' : 'default'} text={t(`compute.instanceStatuses.${d.status}`)} />,
    },
    {
      title: t('ops.system.colSystem'),
      key: 'system',
      render: (_v, d) => <DiskBar used={d.systemUsedBytes} total={d.systemDiskGb * GIB} ratio={systemRatio(d)} testId="disk-system" />,
    },
    {
      title: t('ops.system.colData'),
      key: 'data',
      render: (_v, d) => <DiskBar used={d.dataUsedBytes} total={d.dataTotalBytes > 0 ? d.dataTotalBytes : d.dataDiskGb * GIB} ratio={dataRatio(d)} testId="disk-data" />,
    },
    {
      title: t('ops.system.colActions'),
      key: 'actions',
      width: 130,
      render: (_v, d) => (
        <Button
          size="small"
          type="link"
          disabled={d.status === 'released' || d.status === 'releasing'}
          onClick={() => navigate(`${EXPAND_PATH}?instanceId=${encodeURIComponent(d.instanceId)}&tab=disk`)}
          data-testid="disk-expand"
        >
          {t('ops.system.expand')}
        </Button>
      ),
    },
  ];

  return (
    <div data-testid="system-disk-page">
      <Flex justify="space-between" align="center" wrap gap={8} style={{ margin: '4px 0 4px' }}>
        <Typography.Title level={2} style={{ margin: 0, fontSize: 20 }}>
          {t('ops.system.title')}
        </Typography.Title>
        <Tooltip title={t('ops.system.refresh')}>
          <Button icon={<ReloadOutlined />} aria-label={t('ops.system.refresh')} onClick={() => void usage.refetch()} loading={usage.isFetching && !usage.isPending} data-testid="system-disk-refresh" />
        </Tooltip>
      </Flex>
      <Typography.Paragraph type="secondary">{t('ops.system.subtitle', { ratio: WARN_PERCENT })}</Typography.Paragraph>
      {warned.length > 0 && <Alert type="warning" showIcon style={{ marginBottom: 16 }} title={t('ops.system.warnAlert', { count: warned.length, ratio: WARN_PERCENT })} data-testid="system-disk-warning" />}
      <Card ref={tableBox}>
        {usage.isError ? (
          <Result
            status="warning"
            title={t('ops.system.loadFailed')}
            subTitle={<ServerText>{getErrorMessage(usage.error)}</ServerText>}
            extra={
              <Button type="primary" onClick={() => void usage.refetch()} loading={usage.isFetching}>
                {t('common.retry')}
              </Button>
            }
            data-testid="system-disk-error"
          />
        ) : (
          <Table<InstanceDiskUsage>
            rowKey="instanceId"
            size="middle"
            columns={columns}
            dataSource={list}
            loading={usage.isPending}
            scroll={{ x: 760 }}
            rowClassName={(d) => (warned.includes(d) ? 'disk-row-warn' : '')}
            locale={{ emptyText: usage.isPending ? <div style={{ height: 96 }} /> : <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('ops.system.empty')} data-testid="system-disk-empty" /> }}
            pagination={list.length > 20 ? { pageSize: 20, showTotal: (total) => t('ops.system.total', { total }) } : false}
            data-testid="system-disk-table"
          />
        )}
      </Card>
    </div>
  );
}
