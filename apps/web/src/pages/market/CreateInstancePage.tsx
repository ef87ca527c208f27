import { useEffect, useState } from 'react';
import { Alert, Button, Card, Col, Descriptions, Empty, Flex, Form, Input, InputNumber, Progress, Radio, Result, Row, Segmented, Skeleton, Space, Table, Tag, Typography } from 'antd';
import { useQuery } from '@tanstack/react-query';
import { useNavigate, useSearchParams } from 'react-router';
import type { ImageItem, MachineItem } from '@suanli/contract/machine';
import { formatMoney } from '@suanli/domain/format';
import { diskQuery, imagesQuery, machineQuery, pricePreviewQuery, useCreateOrder } from '../../api/queries/compute.ts';
import { getErrorMessage } from '../../api/errors.ts';
import { useT, type MessageKey } from '../../locales/i18n.ts';
import { pathOf } from '../../route-table.ts';
import { ServerText } from './ServerText.tsx';
import { CHARGES, MAX_QUANTITY, NAME_MAX, diskBounds, formProblem, initialForm, maxGpus, orderInput, previewBody, useDebounced, type CreateForm } from './create-form.ts';
// Issue #10 (images): `?imageId=` preselects an image, also a community one
import { imageIdParam, withExtraImage } from './create-form.ts';
import { pickableImageQuery } from '../../api/queries/images.ts';
import styles from './market.module.css';

const MARKET_PATH = pathOf('market');
const CHECK_PATH = pathOf('orderCheck');

const PROBLEM_KEYS: Record<NonNullable<ReturnType<typeof formProblem>>, MessageKey> = {
  notRentable: 'compute.create.notRentable',
  gpu: 'compute.create.gpuCount',
  image: 'compute.create.imageRequired',
  disk: 'compute.create.dataDisk',
  diskStep: 'compute.create.dataDisk',
  quantity: 'compute.create.quantity',
  name: 'compute.create.nameTooLong',
};

function ImageOption({ image, extra }: { image: ImageItem; extra?: 'community' | 'mine' }) {
  const { t } = useT();
  return (
    <Flex vertical gap={2} style={{ minWidth: 0 }}>
      <Space size={6} wrap>
        <strong>
          <ServerText>{image.name}</ServerText>
        </strong>
        <Typography.Text type="secondary" style={{ fontSize: 12 }}>
          <ServerText>{image.os}</ServerText>
        </Typography.Text>
        {image.status === 'failed' && <Tag color="error">{t('compute.create.buildFailed')}</Tag>}
        {/* Issue #10 (images) */}
        {extra && (
          <Tag color="purple" data-testid="create-image-extra" data-kind={extra}>
            {t(extra === 'community' ? 'images.picker.community' : 'images.picker.mine')}
          </Tag>
        )}
      </Space>
      {image.contents.length > 0 && (
        <Typography.Text type="secondary" style={{ fontSize: 12 }}>
          <ServerText>{image.contents.join(' · ')}</ServerText>
        </Typography.Text>
      )}
      {image.status === 'building' && (
        <Flex align="center" gap={8}>
          <Progress percent={image.progress} size="small" style={{ width: 160, margin: 0 }} showInfo={false} aria-label={t('compute.create.building', { progress: image.progress })} />
          <Typography.Text type="secondary" style={{ fontSize: 12 }}>
            {t('compute.create.building', { progress: image.progress })}
          </Typography.Text>
        </Flex>
      )}
    </Flex>
  );
}

function MachineSummary({ m }: { m: MachineItem }) {
  const { t } = useT();
  return (
    <Card title={t('compute.create.machine')} size="small" data-testid="create-machine">
      <Descriptions column={{ xs: 1, sm: 2, lg: 3 }} size="small">
        <Descriptions.Item label={t('compute.market.gpuType')}>
          {m.gpuType.name} {m.demo && <Tag color="gold">{t('compute.demo')}</Tag>}
        </Descriptions.Item>
        <Descriptions.Item label={t('compute.market.datacenter')}>
          <ServerText>{m.datacenterName}</ServerText> · {m.hostName}
        </Descriptions.Item>
        <Descriptions.Item label={t('compute.market.freeGpus')}>{t('compute.market.freeOfTotal', { free: m.gpuFree, total: m.gpuTotal })}</Descriptions.Item>
        <Descriptions.Item label={t('compute.market.perGpu')}>{t('compute.cpuMem', { cpu: m.cpuPerGpu, mem: m.memoryGbPerGpu })}</Descriptions.Item>
        <Descriptions.Item label={t('compute.market.systemDisk')}>{m.systemDiskGb} GB</Descriptions.Item>
        <Descriptions.Item label={t('compute.market.hourlyPrice')}>
          {formatMoney(m.prices.hour)}
          {t('compute.perGpuHour')}
        </Descriptions.Item>
      </Descriptions>
    </Card>
  );
}

function CreateForm({ machine }: { machine: MachineItem }) {
  const { t } = useT();
  const navigate = useNavigate();
  const images = useQuery(imagesQuery());
  const disk = useQuery(diskQuery(machine.id));
  const create = useCreateOrder();
  // Issue #10 (images): the image asked for by `?imageId=`; looked up in the community (or among
  // the user's own images) when GET /api/v1/image/all doesn't list it.
  const [params] = useSearchParams();
  const wantedId = imageIdParam(params);
  const listed = Boolean(images.data?.some((i) => i.id === wantedId));
  const extraImage = useQuery(pickableImageQuery(wantedId ?? 0, wantedId !== null && images.isSuccess && !listed));
  const extra = listed ? null : (extraImage.data ?? null);
  const wantedResolved = wantedId === null || listed || extraImage.isFetched;
  const [form, setForm] = useState<CreateForm>(() => initialForm(machine, images.data, wantedId));
  const set = (patch: Partial<CreateForm>) => setForm((f) => ({ ...f, ...patch }));

  // The asked-for image once known, else the first ready image once the list is in.
  useEffect(() => {
    if (form.imageId !== null || !images.data || !wantedResolved) return;
    const wanted = wantedId === null ? undefined : [...(extra ? [extra] : []), ...images.data].find((i) => i.id === wantedId && i.status === 'ready');
    const pick = wanted ?? images.data.find((i) => i.status === 'ready');
    if (pick) setForm((f) => ({ ...f, imageId: pick.id }));
  }, [images.data, form.imageId, wantedId, wantedResolved, extra]);

  const imageList = withExtraImage(images.data ?? [], extra);
  const wantedMissing = wantedId !== null && wantedResolved && !imageList.some((i) => i.id === wantedId);
  const bounds = diskBounds(machine, disk.data);
  const problem = formProblem(form, machine, imageList, disk.data);
  const body = useDebounced(previewBody(form, machine, imageList, disk.data));
  const preview = useQuery(pricePreviewQuery(body));
  const gpuMax = maxGpus(machine);
  const prepaid = form.charge !== 'payg';

  const submit = () => {
    const input = orderInput(form, machine, imageList, disk.data);
    if (!input) return;
    create.mutate(input, { onSuccess: (order) => navigate(`${CHECK_PATH}?id=${encodeURIComponent(order.id)}`) });
  };

  return (
    <Row gutter={[20, 20]}>
      <Col xs={24} lg={16}>
        <Flex vertical gap={20}>
          <MachineSummary m={machine} />
          {!machine.rentable && <Alert type="warning" showIcon title={t('compute.create.notRentable')} data-testid="create-not-rentable" />}
          <Card data-testid="create-form">
            <Form layout="vertical" requiredMark={false} onFinish={submit}>
              <Form.Item label={t('compute.create.gpuCount')} extra={t('compute.create.gpuCountHint', { free: machine.gpuFree, max: Math.min(8, Math.max(gpuMax, 1)) })}>
                <Radio.Group
                  value={form.gpuCount}
                  onChange={(e) => set({ gpuCount: e.target.value as number })}
                  optionType="button"
                  options={Array.from({ length: Math.max(gpuMax, 1) }, (_v, i) => ({ value: i + 1, label: t('compute.gpuUnit', { count: i + 1 }), disabled: i + 1 > gpuMax }))}
                  aria-label={t('compute.create.gpuCount')}
                  data-testid="create-gpu-count"
                />
              </Form.Item>
              <Form.Item label={t('compute.create.chargeType')}>
                <Segmented
                  value={form.charge}
                  onChange={(v) => set({ charge: v, quantity: 1 })}
                  options={CHARGES.map((c) => ({ value: c, label: c === 'payg' ? t('compute.chargeTypes.payg') : t(`compute.periods.${c}`) }))}
                  aria-label={t('compute.create.chargeType')}
                  data-testid="create-charge"
                />
              </Form.Item>
              {prepaid && (
                <Form.Item label={t('compute.create.quantity')} validateStatus={problem === 'quantity' ? 'error' : undefined}>
                  <Space>
                    <InputNumber<number>
                      min={1}
                      max={MAX_QUANTITY[form.charge as keyof typeof MAX_QUANTITY]}
                      precision={0}
                      value={form.quantity}
                      onChange={(v) => set({ quantity: v ?? 1 })}
                      aria-label={t('compute.create.quantity')}
                      data-testid="create-quantity"
                    />
                    <span>{t(`compute.periodUnits.${form.charge as 'day'}`)}</span>
                  </Space>
                </Form.Item>
              )}
              <Form.Item label={t('compute.create.image')} validateStatus={problem === 'image' && images.data ? 'error' : undefined} help={problem === 'image' && images.data && imageList.length > 0 ? t('compute.create.imageRequired') : undefined}>
                {images.isPending ? (
                  <Skeleton active paragraph={{ rows: 2 }} title={false} />
                ) : images.isError ? (
                  <Alert
                    type="error"
                    showIcon
                    title={t('compute.create.imagesFailed')}
                    description={<ServerText>{getErrorMessage(images.error)}</ServerText>}
                    action={
                      <Button size="small" onClick={() => void images.refetch()} loading={images.isFetching}>
                        {t('common.retry')}
                      </Button>
                    }
                  />
                ) : wantedId !== null && !wantedResolved ? (
                  <Skeleton active paragraph={{ rows: 2 }} title={false} />
                ) : imageList.length === 0 ? (
                  <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('compute.create.imagesEmpty')} />
                ) : (
                  <Radio.Group value={form.imageId} onChange={(e) => set({ imageId: e.target.value as number })} style={{ width: '100%' }} aria-label={t('compute.create.image')} data-testid="create-image">
                    <Flex vertical gap={8}>
                      {wantedMissing && <Alert type="warning" showIcon title={t('images.picker.notFound')} data-testid="create-image-missing" />}
                      {imageList.map((image) => (
                        <Radio key={image.id} value={image.id} disabled={image.status !== 'ready'} data-testid={`create-image-${image.id}`}>
                          <ImageOption image={image} extra={extra?.id === image.id ? (extra.mine ? 'mine' : 'community') : undefined} />
                        </Radio>
                      ))}
                    </Flex>
                  </Radio.Group>
                )}
              </Form.Item>
              <Form.Item
                label={t('compute.create.dataDisk')}
                validateStatus={problem === 'disk' || problem === 'diskStep' ? 'error' : undefined}
                help={problem === 'diskStep' ? t('compute.create.dataDiskStep', { step: bounds.step }) : undefined}
                extra={t('compute.create.dataDiskHint', { free: bounds.free, max: bounds.max, price: formatMoney(disk.data?.pricePerGbDay ?? machine.dataDiskPricePerGbDay) })}
              >
                <InputNumber<number>
                  min={bounds.min}
                  max={bounds.max}
                  step={bounds.step}
                  precision={0}
                  value={form.dataDiskGb}
                  onChange={(v) => set({ dataDiskGb: v })}
                  suffix="GB"
                  style={{ width: 180 }}
                  aria-label={t('compute.create.dataDisk')}
                  data-testid="create-data-disk"
                />
              </Form.Item>
              <Form.Item label={t('compute.create.name')} validateStatus={problem === 'name' ? 'error' : undefined} help={problem === 'name' ? t('compute.create.nameTooLong') : undefined}>
                <Input value={form.name} onChange={(e) => set({ name: e.target.value })} maxLength={NAME_MAX + 8} placeholder={t('compute.create.namePlaceholder')} style={{ maxWidth: 360 }} aria-label={t('compute.create.name')} data-testid="create-name" />
              </Form.Item>
            </Form>
          </Card>
        </Flex>
      </Col>
      <Col xs={24} lg={8}>
        <Card title={t('compute.create.price')} data-testid="create-price" style={{ position: 'sticky', top: 76 }}>
          {body === null ? (
            <Typography.Text type="secondary">{problem ? t(PROBLEM_KEYS[problem]) : t('compute.create.priceLoading')}</Typography.Text>
          ) : preview.isPending ? (
            <Skeleton active paragraph={{ rows: 3 }} data-testid="create-price-loading" />
          ) : preview.isError ? (
            <Alert type="error" showIcon title={t('compute.create.priceFailed')} description={<ServerText>{getErrorMessage(preview.error)}</ServerText>} data-testid="create-price-error" />
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
                data-testid="create-price-lines"
              />
              {prepaid ? (
                <Flex justify="space-between" align="baseline" style={{ marginTop: 16 }}>
                  <Typography.Text type="secondary">{t('compute.create.total')}</Typography.Text>
                  <span className={styles.figure} data-testid="create-total">
                    {formatMoney(preview.data.total)}
                  </span>
                </Flex>
              ) : (
                <>
                  <Flex justify="space-between" align="baseline" style={{ marginTop: 16 }}>
                    <Typography.Text type="secondary">{t('compute.create.hourly')}</Typography.Text>
                    <span className={styles.figure} data-testid="create-hourly">
                      {formatMoney(preview.data.hourly)}
                      <small style={{ fontSize: 13, fontWeight: 400 }}>{t('compute.perHour')}</small>
                    </span>
                  </Flex>
                  <Flex justify="space-between" style={{ marginTop: 8 }}>
                    <Typography.Text type="secondary">{t('compute.create.required')}</Typography.Text>
                    <span data-testid="create-required">{formatMoney(preview.data.requiredBalance)}</span>
                  </Flex>
                  <Typography.Paragraph type="secondary" style={{ fontSize: 12, marginTop: 8, marginBottom: 0 }}>
                    {t('compute.create.paygTotal')}
                  </Typography.Paragraph>
                </>
              )}
            </div>
          )}
          {create.isError && <Alert type="error" showIcon style={{ marginTop: 16 }} title={t('compute.create.createFailed')} description={<ServerText>{getErrorMessage(create.error)}</ServerText>} data-testid="create-error" />}
          <Button type="primary" size="large" block style={{ marginTop: 20 }} disabled={problem !== null} loading={create.isPending} onClick={submit} data-testid="create-submit">
            {create.isPending ? t('compute.create.submitting') : t('compute.create.submit')}
          </Button>
        </Card>
      </Col>
    </Row>
  );
}

/** /market/create and /control/create (?machineId=…): configure, see the price, order. */
export function CreateInstancePage() {
  const { t } = useT();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const machineId = Number(params.get('machineId'));
  const valid = Number.isInteger(machineId) && machineId > 0;
  const machine = useQuery(machineQuery(valid ? machineId : 0));

  let body;
  if (!valid) body = <Result status="info" title={t('compute.create.missingMachine')} extra={<Button type="primary" onClick={() => navigate(MARKET_PATH)}>{t('compute.create.toMarket')}</Button>} data-testid="create-missing" />;
  else if (machine.isPending) body = <Card><Skeleton active paragraph={{ rows: 6 }} /></Card>;
  else if (machine.isError)
    body = (
      <Result
        status="warning"
        title={t('compute.create.machineLoadFailed')}
        subTitle={<ServerText>{getErrorMessage(machine.error)}</ServerText>}
        extra={<Button type="primary" onClick={() => void machine.refetch()} loading={machine.isFetching}>{t('common.retry')}</Button>}
        data-testid="create-machine-error"
      />
    );
  else if (!machine.data) body = <Result status="404" title={t('compute.create.machineNotFound')} extra={<Button type="primary" onClick={() => navigate(MARKET_PATH)}>{t('compute.create.toMarket')}</Button>} data-testid="create-machine-missing" />;
  else body = <CreateForm key={machine.data.id} machine={machine.data} />;

  return (
    <div className={styles.page} data-testid="create-page">
      <div className={styles.container}>
        <div className={styles.head}>
          <h1>{t('compute.create.title')}</h1>
          <p>{t('compute.create.subtitle')}</p>
        </div>
        {body}
      </div>
    </div>
  );
}
