import { useState } from 'react';
import { Alert, Button, Card, Col, Descriptions, Flex, Form, Input, InputNumber, Radio, Result, Row, Segmented, Select, Skeleton, Space, Table, Typography } from 'antd';
import { useQuery } from '@tanstack/react-query';
import { useNavigate, useSearchParams } from 'react-router';
import type { InstanceItem } from '@suanli/contract/instance';
import type { MachineItem } from '@suanli/contract/machine';
import type { PricePreviewBody } from '@suanli/contract/order';
import { formatMoney } from '@suanli/domain/format';
import { diskQuery, instancesPageQuery, machinesQuery, pricePreviewQuery } from '../../api/queries/compute.ts';
import { useCloneOrder, type CloneInput } from '../../api/queries/images.ts';
import { getErrorMessage } from '../../api/errors.ts';
import { useT } from '../../locales/i18n.ts';
import { pathOf } from '../../route-table.ts';
import { ServerText } from '../market/ServerText.tsx';
import { chargeLabel } from '../market/labels.ts';
import { CHARGES, MAX_QUANTITY, NAME_MAX, diskBounds, maxGpus, useDebounced, type Charge } from '../market/create-form.ts';
import styles from '../market/market.module.css';

const INSTANCES_PATH = pathOf('centerControl');
const CHECK_PATH = pathOf('orderCheck');

type CloneForm = { machineId: number | null; gpuCount: number; charge: Charge; quantity: number; dataDiskGb: number | null; name: string };

/** Why the clone can't be priced or ordered yet, or null. */
export function cloneProblem(form: CloneForm, source: InstanceItem, machine: MachineItem | undefined, bounds: { max: number; step: number } | null): 'stopped' | 'machine' | 'gpu' | 'disk' | 'quantity' | 'name' | null {
  if (source.status !== 'stopped') return 'stopped';
  if (!machine || !machine.rentable || maxGpus(machine) === 0) return 'machine';
  if (!Number.isInteger(form.gpuCount) || form.gpuCount < 1 || form.gpuCount > maxGpus(machine)) return 'gpu';
  if (form.dataDiskGb !== null && (!Number.isInteger(form.dataDiskGb) || form.dataDiskGb < source.dataDiskGb || (bounds && form.dataDiskGb > bounds.max))) return 'disk';
  if (form.charge !== 'payg' && (!Number.isInteger(form.quantity) || form.quantity < 1 || form.quantity > MAX_QUANTITY[form.charge])) return 'quantity';
  if (form.name.trim().length > NAME_MAX) return 'name';
  return null;
}

/** The clone order's call for a valid form. */
export function cloneInput(form: CloneForm, source: InstanceItem): CloneInput | null {
  if (form.machineId === null) return null;
  const name = form.name.trim();
  const base = { instanceId: source.id, machineId: form.machineId, gpuCount: form.gpuCount, ...(form.dataDiskGb !== null ? { dataDiskGb: form.dataDiskGb } : {}), ...(name ? { name } : {}) };
  return form.charge === 'payg' ? { kind: 'payg', body: base } : { kind: 'prepay', body: { ...base, period: form.charge, quantity: form.quantity } };
}

function SourceSummary({ source }: { source: InstanceItem }) {
  const { t } = useT();
  return (
    <Card title={t('images.clone.source')} size="small" data-testid="clone-source">
      <Descriptions column={{ xs: 1, sm: 2, lg: 3 }} size="small">
        <Descriptions.Item label={t('compute.instances.colName')}>
          <ServerText>{source.name}</ServerText> ({source.id})
        </Descriptions.Item>
        <Descriptions.Item label={t('compute.instances.colStatus')}>
          <span data-testid="clone-source-status" data-status={source.status}>
            {t(`compute.instanceStatuses.${source.status}`)}
          </span>
        </Descriptions.Item>
        <Descriptions.Item label={t('compute.market.gpuType')}>{t('compute.instances.gpuSpec', { gpu: source.gpuTypeName, count: source.gpuCount })}</Descriptions.Item>
        <Descriptions.Item label={t('compute.market.datacenter')}>
          <ServerText>{source.datacenterName}</ServerText> · {source.hostName}
        </Descriptions.Item>
        <Descriptions.Item label={t('compute.check.image')}>
          <ServerText>{source.imageName}</ServerText>
        </Descriptions.Item>
        <Descriptions.Item label={t('compute.check.dataDisk')}>{source.dataDiskGb} GB</Descriptions.Item>
        <Descriptions.Item label={t('compute.check.chargeType')}>{chargeLabel(source.chargeType, source.period)}</Descriptions.Item>
      </Descriptions>
    </Card>
  );
}

function CloneForm({ source }: { source: InstanceItem }) {
  const { t } = useT();
  const navigate = useNavigate();
  const machines = useQuery(machinesQuery({ page: 1, pageSize: 100 }));
  const [form, setForm] = useState<CloneForm>({ machineId: null, gpuCount: source.gpuCount, charge: 'payg', quantity: 1, dataDiskGb: source.dataDiskGb, name: '' });
  const set = (patch: Partial<CloneForm>) => setForm((f) => ({ ...f, ...patch }));
  const machine = machines.data?.list.find((m) => m.id === form.machineId);
  const disk = useQuery({ ...diskQuery(form.machineId ?? undefined), enabled: form.machineId !== null });
  const bounds = machine ? diskBounds(machine, disk.data) : null;
  const problem = cloneProblem(form, source, machine, bounds);
  const clone = useCloneOrder();
  const previewInput: PricePreviewBody | null =
    problem === null && form.machineId !== null
      ? {
          machineId: form.machineId,
          gpuCount: form.gpuCount,
          imageId: source.imageId,
          ...(form.dataDiskGb !== null ? { dataDiskGb: form.dataDiskGb } : {}),
          ...(form.charge === 'payg' ? { chargeType: 'payg' as const } : { chargeType: 'prepaid' as const, period: form.charge, quantity: form.quantity }),
        }
      : null;
  const body = useDebounced(previewInput);
  const preview = useQuery(pricePreviewQuery(body));
  const prepaid = form.charge !== 'payg';
  const gpuMax = machine ? maxGpus(machine) : 0;

  const submit = () => {
    if (problem !== null) return;
    const input = cloneInput(form, source);
    if (!input) return;
    clone.mutate(input, { onSuccess: (order) => navigate(`${CHECK_PATH}?id=${encodeURIComponent(order.id)}`) });
  };

  const rentable = (machines.data?.list ?? []).filter((m) => m.rentable && m.online && m.gpuFree > 0);
  return (
    <Row gutter={[20, 20]}>
      <Col xs={24} lg={16}>
        <Flex vertical gap={20}>
          <SourceSummary source={source} />
          <Alert type={source.status === 'stopped' ? 'info' : 'warning'} showIcon title={source.status === 'stopped' ? t('images.clone.mustStop') : t('images.clone.notStopped')} data-testid="clone-stopped-hint" />
          <Card data-testid="clone-form">
            <Form layout="vertical" requiredMark={false} onFinish={submit}>
              <Form.Item label={t('images.clone.machine')} htmlFor="clone-machine">
                {machines.isError ? (
                  <Alert
                    type="error"
                    showIcon
                    title={t('images.clone.machinesFailed')}
                    description={<ServerText>{getErrorMessage(machines.error)}</ServerText>}
                    action={
                      <Button size="small" onClick={() => void machines.refetch()}>
                        {t('common.retry')}
                      </Button>
                    }
                  />
                ) : (
                  <Select<number>
                    id="clone-machine"
                    value={form.machineId ?? undefined}
                    loading={machines.isPending}
                    placeholder={t('images.clone.machine')}
                    notFoundContent={machines.isPending ? undefined : t('images.clone.machinesEmpty')}
                    onChange={(id) => {
                      const m = machines.data?.list.find((x) => x.id === id);
                      set({ machineId: id, gpuCount: Math.max(1, Math.min(form.gpuCount, m ? maxGpus(m) : 1)), dataDiskGb: Math.max(source.dataDiskGb, m?.dataDiskFreeGb ?? 0) });
                    }}
                    options={rentable.map((m) => ({
                      value: m.id,
                      label: t('images.clone.machineOption', { gpu: m.gpuType.name, dc: m.datacenterName, host: m.hostName, free: m.gpuFree, price: formatMoney(m.prices.hour) }),
                    }))}
                    style={{ width: '100%' }}
                    data-testid="clone-machine"
                  />
                )}
              </Form.Item>
              {machine && (
                <Form.Item label={t('images.clone.gpuCount')}>
                  <Radio.Group
                    value={form.gpuCount}
                    onChange={(e) => set({ gpuCount: e.target.value as number })}
                    optionType="button"
                    options={Array.from({ length: Math.max(gpuMax, 1) }, (_v, i) => ({ value: i + 1, label: t('compute.gpuUnit', { count: i + 1 }), disabled: i + 1 > gpuMax }))}
                    aria-label={t('images.clone.gpuCount')}
                    data-testid="clone-gpu-count"
                  />
                </Form.Item>
              )}
              <Form.Item label={t('images.clone.chargeType')}>
                <Segmented<Charge>
                  value={form.charge}
                  onChange={(v) => set({ charge: v, quantity: 1 })}
                  options={CHARGES.map((c) => ({ value: c, label: c === 'payg' ? t('compute.chargeTypes.payg') : t(`compute.periods.${c}`) }))}
                  aria-label={t('images.clone.chargeType')}
                  data-testid="clone-charge"
                />
              </Form.Item>
              {prepaid && (
                <Form.Item label={t('images.clone.quantity')} validateStatus={problem === 'quantity' ? 'error' : undefined}>
                  <Space>
                    <InputNumber<number> min={1} max={MAX_QUANTITY[form.charge as keyof typeof MAX_QUANTITY]} precision={0} value={form.quantity} onChange={(v) => set({ quantity: v ?? 1 })} aria-label={t('images.clone.quantity')} data-testid="clone-quantity" />
                    <span>{t(`compute.periodUnits.${form.charge as 'day'}`)}</span>
                  </Space>
                </Form.Item>
              )}
              <Form.Item
                label={t('images.clone.dataDisk')}
                validateStatus={problem === 'disk' ? 'error' : undefined}
                help={problem === 'disk' && form.dataDiskGb !== null && form.dataDiskGb < source.dataDiskGb ? t('images.clone.dataDiskTooSmall', { min: source.dataDiskGb }) : undefined}
                extra={t('images.clone.dataDiskHint', { min: source.dataDiskGb, max: bounds?.max ?? '—' })}
              >
                <InputNumber<number> min={source.dataDiskGb} max={bounds?.max} step={bounds?.step ?? 1} precision={0} value={form.dataDiskGb} onChange={(v) => set({ dataDiskGb: v })} suffix="GB" style={{ width: 180 }} aria-label={t('images.clone.dataDisk')} data-testid="clone-data-disk" />
              </Form.Item>
              <Form.Item label={t('images.clone.name')} htmlFor="clone-name" validateStatus={problem === 'name' ? 'error' : undefined} help={problem === 'name' ? t('compute.create.nameTooLong') : undefined}>
                <Input id="clone-name" value={form.name} onChange={(e) => set({ name: e.target.value })} maxLength={NAME_MAX + 8} placeholder={source.name} style={{ maxWidth: 360 }} data-testid="clone-name" />
              </Form.Item>
            </Form>
          </Card>
        </Flex>
      </Col>
      <Col xs={24} lg={8}>
        <Card title={t('images.clone.price')} data-testid="clone-price" style={{ position: 'sticky', top: 76 }}>
          {body === null ? (
            <Typography.Text type="secondary">{problem === 'stopped' ? t('images.clone.notStopped') : t('images.clone.pricePick')}</Typography.Text>
          ) : preview.isPending ? (
            <Skeleton active paragraph={{ rows: 3 }} />
          ) : preview.isError ? (
            <Alert type="error" showIcon title={t('images.clone.priceFailed')} description={<ServerText>{getErrorMessage(preview.error)}</ServerText>} data-testid="clone-price-error" />
          ) : (
            <div aria-live="polite" aria-busy={preview.isFetching}>
              <Table
                size="small"
                pagination={false}
                rowKey={(r) => r.label}
                dataSource={preview.data.lines}
                columns={[
                  { title: t('compute.check.item'), dataIndex: 'label', key: 'label', render: (v: string) => <ServerText>{v}</ServerText> },
                  { title: t('compute.check.amount'), dataIndex: 'amount', key: 'amount', align: 'right', render: (v: number) => formatMoney(v) },
                ]}
              />
              <Flex justify="space-between" align="baseline" style={{ marginTop: 16 }}>
                <Typography.Text type="secondary">{prepaid ? t('images.clone.total') : t('images.clone.hourly')}</Typography.Text>
                <span className={styles.figure} data-testid="clone-total">
                  {prepaid ? formatMoney(preview.data.total) : `${formatMoney(preview.data.hourly)}${t('compute.perHour')}`}
                </span>
              </Flex>
            </div>
          )}
          <Typography.Paragraph type="secondary" style={{ fontSize: 12, marginTop: 12, marginBottom: 0 }}>
            {t('images.clone.unpaid')}
          </Typography.Paragraph>
          {clone.isError && <Alert type="error" showIcon style={{ marginTop: 16 }} title={t('images.clone.submitFailed')} description={<ServerText>{getErrorMessage(clone.error)}</ServerText>} data-testid="clone-error" />}
          <Button type="primary" size="large" block style={{ marginTop: 16 }} disabled={problem !== null} loading={clone.isPending} onClick={submit} data-testid="clone-submit">
            {t('images.clone.submit')}
          </Button>
        </Card>
      </Col>
    </Row>
  );
}

/** Issue #10 (clone): /control/clone?instanceId=, clone a stopped instance onto a chosen machine. */
export function ClonePage() {
  const { t } = useT();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const instanceId = params.get('instanceId') ?? '';
  const valid = /^i-[a-z0-9]{10}$/.test(instanceId);
  const list = useQuery({ ...instancesPageQuery({ page: 1, pageSize: 20, keyword: valid ? instanceId : undefined }), enabled: valid });
  const source = list.data?.list.find((i) => i.id === instanceId);
  const back = (
    <Button type="primary" onClick={() => navigate(INSTANCES_PATH)}>
      {t('images.clone.toInstances')}
    </Button>
  );

  let body;
  if (!valid) body = <Result status="info" title={t('images.clone.missing')} extra={back} data-testid="clone-missing" />;
  else if (list.isPending)
    body = (
      <Card>
        <Skeleton active paragraph={{ rows: 6 }} />
      </Card>
    );
  else if (list.isError)
    body = (
      <Result
        status="warning"
        title={t('images.clone.loadFailed')}
        subTitle={<ServerText>{getErrorMessage(list.error)}</ServerText>}
        extra={
          <Button type="primary" onClick={() => void list.refetch()} loading={list.isFetching}>
            {t('common.retry')}
          </Button>
        }
        data-testid="clone-load-error"
      />
    );
  else if (!source || source.status === 'released') body = <Result status="404" title={t('images.clone.notFound')} extra={back} data-testid="clone-not-found" />;
  else body = <CloneForm key={source.id} source={source} />;

  return (
    <div className={styles.page} data-testid="clone-page">
      <div className={styles.container}>
        <div className={styles.head}>
          <h1>{t('images.clone.title')}</h1>
          <p>{t('images.clone.subtitle')}</p>
        </div>
        {body}
      </div>
    </div>
  );
}
