import type { ReactNode } from 'react';
import { Alert, Button, Card, Descriptions, Flex, Result, Skeleton, Table, Tag, Tooltip, Typography } from 'antd';
import { ArrowLeftOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import { useNavigate, useSearchParams } from 'react-router';
import type { InstanceItem } from '@suanli/contract/instance';
import type { OrderLine } from '@suanli/contract/order';
import { NO_GPU_CPU_CORES, NO_GPU_HOURLY, NO_GPU_MEMORY_GB } from '@suanli/contract/instance-ops';
import { formatDateTime, formatMoney } from '@suanli/domain/format';
import { instanceQuery, isInstanceId } from '../../../api/queries/instance-ops.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { t, useT } from '../../../locales/i18n.ts';
import { pathOf } from '../../../route-table.ts';
import { ServerText } from '../../market/ServerText.tsx';
import { chargeLabel } from '../../market/labels.ts';

export const INSTANCES_PATH = pathOf('centerControl');

/** The page's title row: back to the instance list, and the page's title (its h2 inside the console). */
export function OpsHead({ title, subtitle, back = INSTANCES_PATH }: { title: string; subtitle?: string; back?: string }) {
  const { t } = useT();
  const navigate = useNavigate();
  return (
    <div style={{ margin: '4px 0 12px' }}>
      <Flex align="center" gap={8}>
        <Button type="text" icon={<ArrowLeftOutlined />} onClick={() => navigate(back)} aria-label={t('ops.common.back')} data-testid="ops-back" />
        <Typography.Title level={2} style={{ margin: 0, fontSize: 20 }}>
          {title}
        </Typography.Title>
      </Flex>
      {subtitle && (
        <Typography.Paragraph type="secondary" style={{ margin: '4px 0 0 40px' }}>
          {subtitle}
        </Typography.Paragraph>
      )}
    </div>
  );
}

/** A page's state instead of its content: a Result with a way back to the instance list. */
export function BackResult({ status, title, subTitle, testId, extra }: { status: 'info' | 'warning' | 'error' | '404'; title: ReactNode; subTitle?: ReactNode; testId: string; extra?: ReactNode }) {
  const { t } = useT();
  const navigate = useNavigate();
  return (
    <Result
      status={status}
      title={title}
      subTitle={subTitle}
      extra={
        extra ?? (
          <Button type="primary" onClick={() => navigate(INSTANCES_PATH)} data-testid="ops-to-instances">
            {t('ops.common.toInstances')}
          </Button>
        )
      }
      data-testid={testId}
    />
  );
}

/**
 * `?instanceId=` of the page, loaded: renders the states before the instance is there (missing id,
 * loading, failed, not found, released) and `children` with it.
 */
export function WithInstance({ children }: { children: (inst: InstanceItem) => ReactNode }) {
  const { t } = useT();
  const [params] = useSearchParams();
  const id = params.get('instanceId') ?? '';
  const inst = useQuery(instanceQuery(id));
  if (!isInstanceId(id)) return <Card><BackResult status="info" title={t('ops.common.missingInstance')} testId="ops-missing-instance" /></Card>;
  if (inst.isPending) return <Card><Skeleton active paragraph={{ rows: 6 }} data-testid="ops-loading" /></Card>;
  if (inst.isError)
    return (
      <Card>
        <BackResult
          status="warning"
          title={t('ops.common.loadFailed')}
          subTitle={<ServerText>{getErrorMessage(inst.error)}</ServerText>}
          testId="ops-load-error"
          extra={
            <Button type="primary" onClick={() => void inst.refetch()} loading={inst.isFetching}>
              {t('common.retry')}
            </Button>
          }
        />
      </Card>
    );
  if (!inst.data) return <Card><BackResult status="404" title={t('ops.common.notFound')} testId="ops-not-found" /></Card>;
  if (inst.data.status === 'released' || inst.data.status === 'releasing') return <Card><BackResult status="info" title={t('ops.common.released')} testId="ops-released" /></Card>;
  return <>{children(inst.data)}</>;
}

/** The 无卡模式 tag of an instance running without its GPUs. */
export function NoGpuTag() {
  const { t } = useT();
  return (
    <Tooltip title={t('ops.common.noGpuTagHint', { cpu: NO_GPU_CPU_CORES, mem: NO_GPU_MEMORY_GB, price: formatMoney(NO_GPU_HOURLY) })}>
      <Tag color="purple" tabIndex={0} data-testid="instance-nogpu-tag">
        {t('ops.common.noGpuTag')}
      </Tag>
    </Tooltip>
  );
}

/** The instance a change concerns: name, id, spec, billing, expiry. */
export function InstanceFacts({ inst }: { inst: InstanceItem }) {
  const { t } = useT();
  return (
    <Descriptions column={{ xs: 1, sm: 2 }} size="small" data-testid="ops-instance">
      <Descriptions.Item label={t('ops.common.instance')}>
        <Flex vertical gap={0} style={{ minWidth: 0 }}>
          <strong>{inst.name}</strong>
          <Typography.Text type="secondary" style={{ fontSize: 12 }}>
            {inst.id}
          </Typography.Text>
        </Flex>
      </Descriptions.Item>
      <Descriptions.Item label={t('ops.common.status')}>
        <span data-testid="ops-instance-status">{t(`compute.instanceStatuses.${inst.status}`)}</span>
        {inst.noGpu && <span style={{ marginLeft: 8 }}><NoGpuTag /></span>}
      </Descriptions.Item>
      <Descriptions.Item label={t('ops.common.spec')}>
        {t('compute.instances.gpuSpec', { gpu: inst.gpuTypeName, count: inst.gpuCount })} · {t('compute.instances.spec', { cpu: inst.cpuCores, mem: inst.memoryGb, disk: inst.dataDiskGb })}
      </Descriptions.Item>
      <Descriptions.Item label={t('ops.common.charge')}>
        {chargeLabel(inst.chargeType, inst.period)}
        {inst.chargeType === 'payg' && ` · ${formatMoney(inst.hourly)}${t('ops.common.perHour')}`}
      </Descriptions.Item>
      {inst.expiresAt && <Descriptions.Item label={t('ops.common.expiresAt')}>{formatDateTime(inst.expiresAt)}</Descriptions.Item>}
    </Descriptions>
  );
}

/** The priced lines of a preview (server's Chinese labels) and their total. */
export function PriceLines({ lines, testId }: { lines: OrderLine[]; testId: string }) {
  const { t } = useT();
  return (
    <Table
      size="small"
      pagination={false}
      rowKey={(r) => r.label}
      dataSource={lines}
      columns={[
        { title: t('ops.common.item'), dataIndex: 'label', key: 'label', render: (v: string) => <ServerText>{v}</ServerText> },
        { title: t('ops.common.amount'), dataIndex: 'amount', key: 'amount', align: 'right', render: (v: number) => formatMoney(v) },
      ]}
      data-testid={testId}
    />
  );
}

/** An error of a call, with the server's reason. */
export function ServerError({ title, error, testId }: { title: string; error: unknown; testId: string }) {
  return <Alert type="error" showIcon title={title} description={<ServerText>{getErrorMessage(error)}</ServerText>} data-testid={testId} />;
}

/** Seconds as days, hours, minutes and seconds, in the console's language (units from the locale). */
export function remainingText(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3_600);
  const m = Math.floor((s % 3_600) / 60);
  const parts: string[] = [];
  if (d) parts.push(`${d}${t('ops.common.units.day')}`);
  if (h || d) parts.push(`${h}${t('ops.common.units.hour')}`);
  if (m || h || d) parts.push(`${m}${t('ops.common.units.minute')}`);
  parts.push(`${s % 60}${t('ops.common.units.second')}`);
  return parts.join(t('ops.common.units.sep'));
}
