import { useMemo, useState } from 'react';
import { Alert, Button, Card, Empty, Flex, InputNumber, Pagination, Result, Select, Skeleton, Space, Tag, Tooltip, Typography } from 'antd';
import { ExperimentOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import { useNavigate, useSearchParams } from 'react-router';
// Issue #10 (images): `?imageId=` is carried to the create page
import { imagesQuery } from '../../api/queries/compute.ts';
import { pickableImageQuery } from '../../api/queries/images.ts';
import { imageIdParam } from './create-form.ts';
import type { MachineItem, MachineListQuery } from '@suanli/contract/machine';
import { formatMoney } from '@suanli/domain/format';
import { MONEY_UNITS_PER_YUAN } from '@suanli/domain/money';
import { gpuTypesQuery, machinesQuery, tagsQuery } from '../../api/queries/compute.ts';
import { getErrorMessage } from '../../api/errors.ts';
import { useT } from '../../locales/i18n.ts';
import { pathOf } from '../../route-table.ts';
import { ServerText } from './ServerText.tsx';
import styles from './market.module.css';

const CREATE_PATH = pathOf('marketCreate');
const FREE_OPTIONS = [1, 2, 4, 8];
const PAGE_SIZE = 12;

const yuanToUnits = (yuan: number | null | undefined) => (yuan === null || yuan === undefined ? undefined : Math.round(yuan * MONEY_UNITS_PER_YUAN));

function MachineCard({ m, imageId }: { m: MachineItem; imageId: number | null }) {
  const { t } = useT();
  const navigate = useNavigate();
  const state = !m.online ? t('compute.market.offline') : m.gpuFree === 0 ? t('compute.market.soldOut') : null;
  return (
    <Card className={styles.machine} data-testid="market-machine" data-machine-id={m.id} data-rentable={m.rentable}>
      <div className={styles.machineHead}>
        <div style={{ minWidth: 0 }}>
          <h2 className={styles.gpuName}>{m.gpuType.name}</h2>
          <Typography.Text type="secondary" style={{ fontSize: 12 }}>
            <ServerText>{m.datacenterName}</ServerText> · {m.hostName} · {t('compute.market.gpuMemory', { gb: m.gpuType.memoryGb })}
          </Typography.Text>
        </div>
        <Flex vertical align="end" gap={4} style={{ flex: 'none' }}>
          <Tag color={m.gpuFree > 0 && m.online ? 'green' : 'default'} style={{ marginInlineEnd: 0 }} data-testid="market-free">
            {t('compute.market.freeGpus')} {t('compute.market.freeOfTotal', { free: m.gpuFree, total: m.gpuTotal })}
          </Tag>
          {m.demo && (
            <Tooltip title={t('compute.demoHint')}>
              <Tag color="gold" icon={<ExperimentOutlined />} style={{ marginInlineEnd: 0 }} tabIndex={0}>
                {t('compute.demo')}
              </Tag>
            </Tooltip>
          )}
        </Flex>
      </div>
      <dl className={styles.specs}>
        <dt>{t('compute.market.perGpu')}</dt>
        <dd>{t('compute.cpuMem', { cpu: m.cpuPerGpu, mem: m.memoryGbPerGpu })}</dd>
        <dt>{t('compute.market.systemDisk')}</dt>
        <dd>{m.systemDiskGb} GB</dd>
        <dt>{t('compute.market.dataDisk')}</dt>
        <dd>{t('compute.market.dataDiskValue', { free: m.dataDiskFreeGb, max: m.dataDiskMaxGb })}</dd>
      </dl>
      {m.tags.length > 0 && (
        <Flex wrap gap={4} style={{ marginBottom: 12 }}>
          {m.tags.map((tag) => (
            <Tag key={tag} color="blue" style={{ marginInlineEnd: 0 }}>
              <ServerText>{tag}</ServerText>
            </Tag>
          ))}
        </Flex>
      )}
      <div className={styles.priceRow}>
        <div>
          <Typography.Text type="secondary" style={{ fontSize: 12 }}>
            {t('compute.market.hourlyPrice')}
          </Typography.Text>
          <div className={styles.price} data-testid="market-price">
            {formatMoney(m.prices.hour)}
            <small>{t('compute.perGpuHour')}</small>
          </div>
        </div>
        {state ? (
          <Button disabled data-testid="market-unavailable">
            {state}
          </Button>
        ) : (
          <Button type="primary" autoInsertSpace={false} onClick={() => navigate(`${CREATE_PATH}?machineId=${m.id}${imageId !== null ? `&imageId=${imageId}` : ''}`)} aria-label={`${t('compute.market.rent')} ${m.gpuType.name} ${m.hostName}`} data-testid="market-rent">
            {t('compute.market.rent')}
          </Button>
        )}
      </div>
    </Card>
  );
}

/** /market/index: the machines of every datacenter, filtered; sold-out and offline ones shown but not rentable. */
export function MarketPage() {
  const { t } = useT();
  const [datacenterId, setDatacenterId] = useState<number | undefined>();
  const [gpuTypeId, setGpuTypeId] = useState<number | undefined>();
  const [minFreeGpus, setMinFree] = useState<number | undefined>();
  const [minYuan, setMinYuan] = useState<number | null>(null);
  const [maxYuan, setMaxYuan] = useState<number | null>(null);
  const [tag, setTag] = useState<string | undefined>();
  const [page, setPage] = useState(1);
  // Issue #10 (images): an image chosen in the community or in 我的镜像, kept until a machine is rented.
  const [params, setParams] = useSearchParams();
  const imageId = imageIdParam(params);
  const platformImages = useQuery({ ...imagesQuery(), enabled: imageId !== null });
  const listedImage = platformImages.data?.find((i) => i.id === imageId);
  const otherImage = useQuery(pickableImageQuery(imageId ?? 0, imageId !== null && platformImages.isSuccess && !listedImage));
  const chosenName = listedImage?.name ?? otherImage.data?.name ?? `#${imageId}`;

  const minPrice = yuanToUnits(minYuan);
  const maxPrice = yuanToUnits(maxYuan);
  const priceSwapped = minPrice !== undefined && maxPrice !== undefined && minPrice > maxPrice;
  const query: MachineListQuery = { page, pageSize: PAGE_SIZE, datacenterId, gpuTypeId, minFreeGpus, minPrice: priceSwapped ? maxPrice : minPrice, maxPrice: priceSwapped ? minPrice : maxPrice, tag };
  const list = useQuery(machinesQuery(query));
  // No datacenter call in the contract: the options are the datacenters the whole market has.
  const everything = useQuery(machinesQuery({ page: 1, pageSize: 100 }));
  const gpuTypes = useQuery(gpuTypesQuery());
  const tags = useQuery(tagsQuery());

  const datacenters = useMemo(() => {
    const seen = new Map<number, string>();
    for (const m of everything.data?.list ?? []) seen.set(m.datacenterId, m.datacenterName);
    return [...seen].map(([value, label]) => ({ value, label: <ServerText>{label}</ServerText>, title: label }));
  }, [everything.data]);

  const changed = <T,>(set: (v: T) => void) => (v: T) => {
    set(v);
    setPage(1);
  };
  const anyFilter = datacenterId !== undefined || gpuTypeId !== undefined || minFreeGpus !== undefined || minYuan !== null || maxYuan !== null || tag !== undefined;

  return (
    <div className={styles.page} data-testid="market-page">
      <div className={styles.container}>
        <div className={styles.head}>
          <h1>{t('compute.market.title')}</h1>
          <p>{t('compute.market.subtitle')}</p>
        </div>
        {imageId !== null && (
          <Alert
            type="info"
            showIcon
            style={{ marginBottom: 16 }}
            title={t('images.picker.chosen', { name: chosenName })}
            action={
              <Button size="small" onClick={() => setParams({}, { replace: true })} data-testid="market-image-clear">
                {t('images.picker.clear')}
              </Button>
            }
            data-testid="market-image-chosen"
          />
        )}
        <Card size="small" style={{ marginBottom: 16 }} data-testid="market-filters">
          <Flex gap={16} wrap align="center">
            <Space size={8} wrap>
              <span className={styles.filterLabel} id="market-dc-label">
                {t('compute.market.datacenter')}
              </span>
              <Select<number>
                aria-labelledby="market-dc-label"
                allowClear
                style={{ width: 180 }}
                placeholder={t('compute.market.allDatacenters')}
                value={datacenterId}
                loading={everything.isPending}
                options={datacenters}
                onChange={changed(setDatacenterId)}
                data-testid="market-datacenter"
              />
            </Space>
            <Space size={8} wrap>
              <span className={styles.filterLabel} id="market-gpu-label">
                {t('compute.market.gpuType')}
              </span>
              <Select<number>
                aria-labelledby="market-gpu-label"
                allowClear
                style={{ width: 180 }}
                placeholder={t('compute.market.allGpuTypes')}
                value={gpuTypeId}
                loading={gpuTypes.isPending}
                options={(gpuTypes.data ?? []).map((g) => ({ value: g.id, label: g.name }))}
                onChange={changed(setGpuTypeId)}
                data-testid="market-gpu-type"
              />
            </Space>
            <Space size={8} wrap>
              <span className={styles.filterLabel} id="market-free-label">
                {t('compute.market.minFree')}
              </span>
              <Select<number>
                aria-labelledby="market-free-label"
                allowClear
                style={{ width: 130 }}
                placeholder={t('compute.market.anyFree')}
                value={minFreeGpus}
                options={FREE_OPTIONS.map((n) => ({ value: n, label: t('compute.market.freeAtLeast', { count: n }) }))}
                onChange={changed(setMinFree)}
                data-testid="market-min-free"
              />
            </Space>
            <Space size={8} wrap>
              <span className={styles.filterLabel}>{t('compute.market.price')}</span>
              <InputNumber<number> min={0} max={100_000} step={1} style={{ width: 96 }} placeholder={t('compute.market.minPrice')} aria-label={`${t('compute.market.price')} ${t('compute.market.minPrice')}`} value={minYuan} onChange={changed(setMinYuan)} data-testid="market-min-price" />
              <span aria-hidden="true">–</span>
              <InputNumber<number> min={0} max={100_000} step={1} style={{ width: 96 }} placeholder={t('compute.market.maxPrice')} aria-label={`${t('compute.market.price')} ${t('compute.market.maxPrice')}`} value={maxYuan} onChange={changed(setMaxYuan)} data-testid="market-max-price" />
            </Space>
            <Space size={8} wrap>
              <span className={styles.filterLabel} id="market-tag-label">
                {t('compute.market.tag')}
              </span>
              <Select<string>
                aria-labelledby="market-tag-label"
                allowClear
                style={{ width: 140 }}
                placeholder={t('compute.market.allTags')}
                value={tag}
                loading={tags.isPending}
                options={(tags.data ?? []).map((x) => ({ value: x.name, label: <ServerText>{x.name}</ServerText>, title: x.name }))}
                onChange={changed(setTag)}
                data-testid="market-tag"
              />
            </Space>
            <Button
              disabled={!anyFilter}
              onClick={() => {
                setDatacenterId(undefined);
                setGpuTypeId(undefined);
                setMinFree(undefined);
                setMinYuan(null);
                setMaxYuan(null);
                setTag(undefined);
                setPage(1);
              }}
            >
              {t('compute.market.reset')}
            </Button>
          </Flex>
        </Card>

        {list.isPending ? (
          <div className={styles.machines} data-testid="market-loading">
            {[0, 1, 2].map((i) => (
              <Card key={i}>
                <Skeleton active paragraph={{ rows: 4 }} />
              </Card>
            ))}
          </div>
        ) : list.isError ? (
          <Card>
            <Result
              status="warning"
              title={t('compute.market.loadFailed')}
              subTitle={<ServerText>{getErrorMessage(list.error)}</ServerText>}
              extra={
                <Button type="primary" onClick={() => void list.refetch()} loading={list.isFetching}>
                  {t('common.retry')}
                </Button>
              }
              data-testid="market-error"
            />
          </Card>
        ) : list.data.list.length === 0 ? (
          <Card>
            <Empty description={t('compute.market.empty')} data-testid="market-empty" />
          </Card>
        ) : (
          <>
            <div className={styles.machines} aria-busy={list.isFetching} data-testid="market-list">
              {list.data.list.map((m) => (
                <MachineCard key={m.id} m={m} imageId={imageId} />
              ))}
            </div>
            <Flex justify="end" style={{ marginTop: 16 }}>
              <Pagination current={page} pageSize={PAGE_SIZE} total={list.data.total} showSizeChanger={false} showTotal={(total) => t('compute.market.total', { total })} onChange={setPage} />
            </Flex>
          </>
        )}
      </div>
    </div>
  );
}
