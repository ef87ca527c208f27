import { useState } from 'react';
import { Alert, Button, Card, Col, Flex, Form, InputNumber, Progress, Radio, Row, Skeleton, Slider, Tabs, Typography, type ButtonProps } from 'antd';
import { useQuery } from '@tanstack/react-query';
import { useNavigate, useSearchParams } from 'react-router';
import type { InstanceItem } from '@suanli/contract/instance';
import type { ChangePreview } from '@suanli/contract/instance-ops';
import { MAX_GPUS_PER_INSTANCE, type Order } from '@suanli/contract/order';
import { formatDateTime, formatFileSize, formatMoney } from '@suanli/domain/format';
import { changePreviewQuery, expandDiskQuery, useCreateChange, type ChangeBody } from '../../../api/queries/instance-ops.ts';
import { machineQuery } from '../../../api/queries/compute.ts';
import { useFeedback } from '../../../modules/feedback.ts';
import { useT } from '../../../locales/i18n.ts';
import { useDebounced } from '../../market/create-form.ts';
import { CHANGE_CHECK_PATH } from './PeriodOrderForm.tsx';
import { INSTANCES_PATH, InstanceFacts, OpsHead, PriceLines, ServerError, WithInstance } from './ops-shared.tsx';

const GIB = 1024 ** 3;

/** The price of a change: what is paid, refunded or nothing, and the hourly price after it. */
function PriceBox({ preview, payg, testId }: { preview: ChangePreview; payg: boolean; testId: string }) {
  const { t } = useT();
  const amount = preview.amount;
  return (
    <div aria-live="polite" data-testid={testId}>
      {preview.lines.length > 0 && <PriceLines lines={preview.lines} testId={`${testId}-lines`} />}
      <Flex justify="space-between" align="baseline" wrap gap={8} style={{ marginTop: 12 }}>
        <Typography.Text type="secondary">{t('ops.expand.diffLabel')}</Typography.Text>
        <strong style={{ fontSize: 20, color: amount > 0 ? '#cf1322' : amount < 0 ? '#389e0d' : undefined }} data-testid={`${testId}-amount`} data-amount={amount}>
          {amount > 0 ? t('ops.expand.priceUp', { amount: formatMoney(amount) }) : amount < 0 ? t('ops.expand.priceDown', { amount: formatMoney(-amount) }) : t('ops.expand.priceZero')}
        </strong>
      </Flex>
      {payg && (
        <Flex justify="space-between" wrap gap={8} style={{ marginTop: 8 }}>
          <Typography.Text type="secondary">{t('ops.expand.newHourly')}</Typography.Text>
          <span data-testid={`${testId}-hourly`}>
            {formatMoney(preview.hourly)}
            {t('ops.common.perHour')}
          </span>
        </Flex>
      )}
      {!payg && preview.expiresAt && (
        <Flex justify="space-between" wrap gap={8} style={{ marginTop: 8 }}>
          <Typography.Text type="secondary">{t('ops.common.expiresAt')}</Typography.Text>
          <span>{formatDateTime(preview.expiresAt)}</span>
        </Flex>
      )}
    </div>
  );
}

/**
 * Creates a change from a preview: a payment goes to the check-order page; a refund, a shrink or a
 * free change asks first (`confirmText`), and applied at once it says so and goes back to the list.
 */
function useSubmitChange() {
  const { t } = useT();
  const navigate = useNavigate();
  const { message, modal } = useFeedback();
  const create = useCreateChange();
  const send = (input: ChangeBody) =>
    create.mutateAsync(input).then(
      (order: Order) => {
        if (order.status === 'unpaid') return void navigate(`${CHANGE_CHECK_PATH}?id=${encodeURIComponent(order.id)}`);
        void message.success(order.amount < 0 ? t('ops.expand.appliedRefund', { amount: formatMoney(-order.amount) }) : t('ops.expand.applied'));
        void navigate(INSTANCES_PATH);
      },
      () => undefined,
    );
  const submit = (input: ChangeBody, preview: ChangePreview, extra?: string) => {
    if (preview.amount > 0 && !extra) return void send(input);
    const parts = [extra, preview.amount < 0 ? t('ops.expand.confirmRefund', { amount: formatMoney(-preview.amount) }) : preview.amount === 0 ? t('ops.expand.confirmFree') : undefined].filter(Boolean);
    modal.confirm({
      title: t('ops.expand.confirmTitle'),
      content: parts.join(' '),
      okText: t('common.confirm'),
      okButtonProps: { danger: preview.amount < 0 || Boolean(extra), 'data-testid': 'expand-confirm-ok' } as ButtonProps,
      cancelText: t('common.cancel'),
      onOk: () => send(input),
    });
  };
  return { create, submit };
}

function GpuSection({ inst }: { inst: InstanceItem }) {
  const { t } = useT();
  const [gpuCount, setGpuCount] = useState(inst.gpuCount);
  const stopped = inst.status === 'stopped';
  const changed = gpuCount !== inst.gpuCount;
  const body = useDebounced<ChangeBody | null>(stopped && changed ? { kind: 'spec', body: { instanceId: inst.id, gpuCount } } : null);
  const preview = useQuery(changePreviewQuery(body));
  const { create, submit } = useSubmitChange();
  const payg = inst.chargeType === 'payg';
  // The machine's GPUs, when the market still lists it: counts past its total are not offered.
  const machine = useQuery(machineQuery(inst.machineId)).data ?? null;
  const gpuMax = Math.min(MAX_GPUS_PER_INSTANCE, machine?.gpuTotal ?? MAX_GPUS_PER_INSTANCE);
  // A stopped prepaid instance holds its GPUs; a stopped pay-as-you-go one holds none.
  const reachable = machine ? machine.gpuFree + (payg ? 0 : inst.gpuCount) : null;

  return (
    <Flex vertical gap={16} data-testid="expand-gpu">
      {!stopped && <Alert type="warning" showIcon title={t('ops.expand.gpuStoppedOnly')} data-testid="expand-gpu-stopped-only" />}
      {payg && <Alert type="info" showIcon title={t('ops.expand.gpuPaygNote')} />}
      <Form layout="vertical" requiredMark={false}>
        <Form.Item
          label={t('ops.expand.gpuCount')}
          extra={[
            t('ops.expand.gpuCurrent', { count: inst.gpuCount }),
            machine && t('ops.expand.gpuMachine', { total: machine.gpuTotal, free: machine.gpuFree }),
            t('ops.expand.gpuHint', { max: gpuMax }),
          ]
            .filter(Boolean)
            .join(' · ')}
        >
          <Radio.Group
            value={gpuCount}
            onChange={(e) => setGpuCount(e.target.value as number)}
            optionType="button"
            disabled={!stopped || create.isPending}
            options={Array.from({ length: Math.max(gpuMax, inst.gpuCount) }, (_v, i) => ({ value: i + 1, label: t('compute.gpuUnit', { count: i + 1 }), disabled: i + 1 > gpuMax }))}
            aria-label={t('ops.expand.gpuCount')}
            data-testid="expand-gpu-count"
          />
        </Form.Item>
      </Form>
      {stopped && !changed && <Typography.Text type="secondary">{t('ops.expand.gpuSame')}</Typography.Text>}
      {stopped && changed && reachable !== null && gpuCount > reachable && (
        <Alert type="warning" showIcon title={t('ops.expand.gpuShort', { free: machine?.gpuFree ?? 0 })} data-testid="expand-gpu-short" />
      )}
      {body !== null &&
        (preview.isPending ? (
          <Skeleton active paragraph={{ rows: 2 }} data-testid="expand-gpu-price-loading" />
        ) : preview.isError ? (
          <ServerError title={t('ops.common.priceFailed')} error={preview.error} testId="expand-gpu-price-error" />
        ) : (
          <PriceBox preview={preview.data} payg={payg} testId="expand-gpu-price" />
        ))}
      {create.isError && <ServerError title={t('ops.expand.failed')} error={create.error} testId="expand-gpu-error" />}
      <Flex justify="end">
        <Button
          type="primary"
          size="large"
          disabled={!stopped || !changed || body === null || !preview.data || preview.isFetching || preview.isError}
          loading={create.isPending}
          onClick={() => body && preview.data && submit(body, preview.data)}
          data-testid="expand-gpu-submit"
        >
          {create.isPending ? t('ops.expand.applying') : t('ops.expand.gpuSubmit')}
        </Button>
      </Flex>
    </Flex>
  );
}

function DiskSection({ inst }: { inst: InstanceItem }) {
  const { t } = useT();
  const disk = useQuery(expandDiskQuery(inst.id));
  const [size, setSize] = useState<number | null>(null);
  const { create, submit } = useSubmitChange();
  const d = disk.data;
  const current = d?.currentGb ?? inst.dataDiskGb;
  const value = size ?? current;
  const low = d ? (d.canShrink ? d.minGb : Math.max(d.minGb, d.currentGb)) : current;
  const high = d ? Math.max(d.maxGb, low) : current;
  const valid = d !== undefined && Number.isInteger(value) && value >= low && value <= high && value !== current;
  const body = useDebounced<ChangeBody | null>(valid ? { kind: 'disk', body: { instanceId: inst.id, dataDiskGb: value } } : null);
  const preview = useQuery(changePreviewQuery(body));

  if (disk.isPending) return <Skeleton active paragraph={{ rows: 4 }} data-testid="expand-disk-loading" />;
  if (disk.isError)
    return (
      <Flex vertical gap={12} align="start">
        <ServerError title={t('ops.expand.diskLoadFailed')} error={disk.error} testId="expand-disk-load-error" />
        <Button onClick={() => void disk.refetch()} loading={disk.isFetching}>
          {t('common.retry')}
        </Button>
      </Flex>
    );
  const info = disk.data;
  const usedPercent = info.currentGb > 0 ? Math.min(100, Math.round((info.usedBytes / (info.currentGb * GIB)) * 1000) / 10) : 0;
  const help =
    value < low
      ? info.canShrink
        ? t('ops.expand.diskShrinkBelow', { min: info.minGb })
        : t('ops.expand.diskShrinkStopped')
      : value === current
        ? t('ops.expand.diskSame')
        : undefined;
  const shrink = value < current;

  return (
    <Flex vertical gap={16} data-testid="expand-disk">
      <div>
        <Flex justify="space-between" wrap gap={8}>
          <Typography.Text type="secondary">{t('ops.expand.diskUsed')}</Typography.Text>
          <span data-testid="expand-disk-used">
            {formatFileSize(info.usedBytes)} / {info.currentGb} GB
          </span>
        </Flex>
        <Progress percent={usedPercent} status={usedPercent >= 90 ? 'exception' : 'normal'} aria-label={t('ops.expand.diskUsed')} />
      </div>
      {!info.canShrink && <Alert type="info" showIcon title={t('ops.expand.diskShrinkStopped')} data-testid="expand-disk-grow-only" />}
      <Form layout="vertical" requiredMark={false}>
        <Form.Item
          label={t('ops.expand.diskSize')}
          validateStatus={help && value !== current ? 'error' : undefined}
          help={help}
          extra={`${t('ops.expand.diskCurrent', { size: current })} · ${t('ops.expand.diskBounds', { min: low, max: high, free: info.freeGb, price: formatMoney(info.pricePerGbDay) })}`}
        >
          <Row gutter={[16, 8]} align="middle">
            <Col xs={24} sm={16}>
              <Slider min={low} max={high} value={Math.min(Math.max(value, low), high)} onChange={(v) => setSize(v)} disabled={low >= high || create.isPending} ariaLabelForHandle={t('ops.expand.diskSize')} data-testid="expand-disk-slider" />
            </Col>
            <Col xs={24} sm={8}>
              <InputNumber<number>
                min={1}
                max={high}
                precision={0}
                value={value}
                onChange={(v) => setSize(v ?? current)}
                suffix="GB"
                style={{ width: '100%' }}
                disabled={create.isPending}
                aria-label={t('ops.expand.diskSize')}
                data-testid="expand-disk-input"
              />
            </Col>
          </Row>
        </Form.Item>
      </Form>
      {body !== null &&
        (preview.isPending ? (
          <Skeleton active paragraph={{ rows: 2 }} data-testid="expand-disk-price-loading" />
        ) : preview.isError ? (
          <ServerError title={t('ops.common.priceFailed')} error={preview.error} testId="expand-disk-price-error" />
        ) : (
          <PriceBox preview={preview.data} payg={inst.chargeType === 'payg'} testId="expand-disk-price" />
        ))}
      {create.isError && <ServerError title={t('ops.expand.failed')} error={create.error} testId="expand-disk-error" />}
      <Flex justify="end">
        <Button
          type="primary"
          size="large"
          disabled={!valid || body === null || !preview.data || preview.isFetching || preview.isError}
          loading={create.isPending}
          onClick={() => body && preview.data && submit(body, preview.data, shrink ? t('ops.expand.confirmShrink', { from: current, to: value }) : undefined)}
          data-testid="expand-disk-submit"
        >
          {create.isPending ? t('ops.expand.applying') : t('ops.expand.diskSubmit')}
        </Button>
      </Flex>
    </Flex>
  );
}

/** /center/control/expand/control?instanceId=[&tab=disk]: GPU count on the same machine, and the data disk's size. */
export function ExpandPage() {
  const { t } = useT();
  const [params, setParams] = useSearchParams();
  const tab = params.get('tab') === 'disk' ? 'disk' : 'gpu';
  return (
    <div data-testid="expand-page">
      <OpsHead title={t('ops.expand.title')} subtitle={t('ops.expand.subtitle')} />
      <WithInstance>
        {(inst) => (
          <Flex vertical gap={16}>
            <Card size="small">
              <InstanceFacts inst={inst} />
            </Card>
            <Card>
              <Tabs
                activeKey={tab}
                onChange={(k) => {
                  const next = new URLSearchParams(params);
                  if (k === 'disk') next.set('tab', 'disk');
                  else next.delete('tab');
                  setParams(next, { replace: true });
                }}
                items={[
                  { key: 'gpu', label: <span data-testid="expand-tab-gpu">{t('ops.expand.tabGpu')}</span>, children: <GpuSection inst={inst} /> },
                  { key: 'disk', label: <span data-testid="expand-tab-disk">{t('ops.expand.tabDisk')}</span>, children: <DiskSection inst={inst} /> },
                ]}
                data-testid="expand-tabs"
              />
            </Card>
          </Flex>
        )}
      </WithInstance>
    </div>
  );
}
