import { useState } from 'react';
import { Button, Card, Col, DatePicker, Empty, Flex, Input, Result, Row, Space, Statistic, Table, Tabs, Typography, type TableColumnsType } from 'antd';
import { useQuery } from '@tanstack/react-query';
import dayjs, { type Dayjs } from 'dayjs';
import type { BillItem, BillListQuery, DailyBillItem } from '@suanli/contract/bill';
import type { ChargeType } from '@suanli/contract/order';
import { formatDateTime, formatMoney } from '@suanli/domain/format';
import { billsQuery, dailyBillsQuery } from '../../../api/queries/compute.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { useScrollRegion } from '../../../modules/useScrollRegion.ts';
import { useT } from '../../../locales/i18n.ts';
import { ServerText } from '../../market/ServerText.tsx';
import { ChargeTypeFilter } from '../../market/ChargeTypeFilter.tsx';
import { clockDuration } from '../../market/labels.ts';
import { rangeToTimes } from './filters.ts';

type View = 'instance' | 'day';
const INSTANCE_ID = /^i-[a-z0-9]{10}$/;

/** /center/expense/check (账单明细): settled charges by instance and by day, filtered and totalled. */
export function BillsPage() {
  const { t } = useT();
  const [view, setView] = useState<View>('instance');
  const [range, setRange] = useState<[Dayjs, Dayjs] | null>(null);
  const [instanceText, setInstanceText] = useState('');
  const [instanceId, setInstanceId] = useState<string | undefined>();
  const [chargeType, setChargeType] = useState<ChargeType | undefined>();
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(20);
  const instanceInvalid = instanceText.trim() !== '' && !INSTANCE_ID.test(instanceText.trim());

  const q: BillListQuery = { page, pageSize, instanceId, chargeType, ...rangeToTimes(range) };
  const bills = useQuery({ ...billsQuery(q), enabled: view === 'instance' });
  const daily = useQuery({ ...dailyBillsQuery(q), enabled: view === 'day' });
  const current = view === 'instance' ? bills : daily;
  const tableBox = useScrollRegion<HTMLDivElement>(t('compute.bills.title'));
  const changed = () => setPage(1);
  const today = dayjs();

  const instanceCol = (v: string, r: { instanceId: string; instanceName: string }) => (
    <Flex vertical style={{ minWidth: 0 }}>
      <ServerText>{r.instanceName || v}</ServerText>
      <Typography.Text type="secondary" style={{ fontSize: 12 }}>
        {r.instanceId}
      </Typography.Text>
    </Flex>
  );
  const chargeCol = (v: ChargeType) => t(`compute.chargeTypes.${v}`);
  const amountCol = (v: number) => (
    <span style={{ fontVariantNumeric: 'tabular-nums', fontWeight: 600 }} data-testid="bill-amount">
      {formatMoney(v)}
    </span>
  );

  const billColumns: TableColumnsType<BillItem> = [
    { title: t('compute.bills.colInstance'), dataIndex: 'instanceId', key: 'instance', width: 200, render: instanceCol },
    { title: t('compute.bills.colCharge'), dataIndex: 'chargeType', key: 'charge', width: 120, render: chargeCol },
    { title: t('compute.bills.colPeriod'), key: 'period', width: 320, render: (_v, r) => `${formatDateTime(r.periodStart)} ~ ${formatDateTime(r.periodEnd)}` },
    { title: t('compute.bills.colDuration'), dataIndex: 'seconds', key: 'seconds', width: 110, render: (v: number) => clockDuration(v) },
    { title: t('compute.bills.colAmount'), dataIndex: 'amount', key: 'amount', width: 130, align: 'right', render: amountCol },
    { title: t('compute.bills.colCreated'), dataIndex: 'createdAt', key: 'createdAt', width: 180, render: (v: string) => formatDateTime(v) },
  ];
  const dailyColumns: TableColumnsType<DailyBillItem> = [
    { title: t('compute.bills.colDay'), dataIndex: 'day', key: 'day', width: 130 },
    { title: t('compute.bills.colInstance'), dataIndex: 'instanceId', key: 'instance', width: 220, render: instanceCol },
    { title: t('compute.bills.colCharge'), dataIndex: 'chargeType', key: 'charge', width: 120, render: chargeCol },
    { title: t('compute.bills.colDuration'), dataIndex: 'seconds', key: 'seconds', width: 120, render: (v: number) => clockDuration(v) },
    { title: t('compute.bills.colAmount'), dataIndex: 'amount', key: 'amount', width: 140, align: 'right', render: amountCol },
  ];

  const pagination = {
    current: page,
    pageSize,
    total: current.data?.total ?? 0,
    showSizeChanger: true,
    pageSizeOptions: [10, 20, 50, 100],
    showTotal: (total: number) => t('compute.bills.totalText', { total }),
    onChange: (p: number, size: number) => {
      setPage(size !== pageSize ? 1 : p);
      setPageSize(size);
    },
  };
  const emptyText = current.isPending ? <div style={{ height: 96 }} /> : <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('compute.bills.empty')} data-testid="bills-empty" />;

  return (
    <div data-testid="bills-page">
      <Typography.Title level={2} style={{ margin: '4px 0 12px', fontSize: 20 }}>
        {t('compute.bills.title')}
      </Typography.Title>
      <Card size="small" style={{ marginBottom: 16 }}>
        <Tabs
          activeKey={view}
          onChange={(k) => {
            setView(k as View);
            changed();
          }}
          items={[
            { key: 'instance', label: t('compute.bills.byInstance') },
            { key: 'day', label: t('compute.bills.byDay') },
          ]}
          data-testid="bills-view"
        />
        <Flex gap={16} wrap align="center">
          <Space size={8} wrap>
            <Typography.Text type="secondary" id="bills-range-label">
              {t('compute.bills.range')}
            </Typography.Text>
            <DatePicker.RangePicker
              value={range}
              allowEmpty={[false, false]}
              placeholder={[t('compute.bills.rangeStart'), t('compute.bills.rangeEnd')]}
              disabledDate={(d) => d.isAfter(today, 'day')}
              onChange={(v) => {
                setRange(v && v[0] && v[1] ? [v[0], v[1]] : null);
                changed();
              }}
            />
          </Space>
          <Space size={8} wrap>
            <label htmlFor="bills-instance" style={{ color: 'rgba(0,0,0,.62)' }}>
              {t('compute.bills.instance')}
            </label>
            <Input.Search
              id="bills-instance"
              allowClear
              status={instanceInvalid ? 'error' : undefined}
              style={{ width: 240 }}
              placeholder={t('compute.bills.instancePlaceholder')}
              value={instanceText}
              onChange={(e) => {
                setInstanceText(e.target.value);
                if (e.target.value === '') {
                  setInstanceId(undefined);
                  changed();
                }
              }}
              onSearch={(v) => {
                const id = v.trim();
                if (id && !INSTANCE_ID.test(id)) return;
                setInstanceId(id || undefined);
                changed();
              }}
              data-testid="bills-instance"
            />
            {instanceInvalid && <Typography.Text type="danger">{t('compute.bills.instanceInvalid')}</Typography.Text>}
          </Space>
          <ChargeTypeFilter
            id="bills-charge-label"
            label="compute.bills.chargeType"
            allLabel="compute.bills.allCharges"
            width={140}
            value={chargeType}
            onChange={(v) => {
              setChargeType(v);
              changed();
            }}
          />
          <Button
            disabled={!range && !instanceId && !chargeType && !instanceText}
            onClick={() => {
              setRange(null);
              setInstanceText('');
              setInstanceId(undefined);
              setChargeType(undefined);
              changed();
            }}
          >
            {t('compute.bills.reset')}
          </Button>
        </Flex>
      </Card>
      <Row gutter={[16, 16]} style={{ marginBottom: 16 }}>
        <Col xs={24} md={12}>
          <Card size="small">
            <Statistic title={t('compute.bills.totalAmount')} value={current.data ? formatMoney(current.data.totalAmount) : '—'} loading={current.isPending} data-testid="bills-total" />
          </Card>
        </Col>
        <Col xs={24} md={12}>
          <Card size="small">
            <Statistic title={t('compute.bills.count')} value={current.data ? t('compute.bills.countValue', { count: current.data.total }) : '—'} loading={current.isPending} data-testid="bills-count" />
          </Card>
        </Col>
      </Row>
      <Card ref={tableBox}>
        {current.isError ? (
          <Result
            status="warning"
            title={t('compute.bills.loadFailed')}
            subTitle={<ServerText>{getErrorMessage(current.error)}</ServerText>}
            extra={
              <Button type="primary" onClick={() => void current.refetch()} loading={current.isFetching}>
                {t('common.retry')}
              </Button>
            }
            data-testid="bills-error"
          />
        ) : view === 'instance' ? (
          <Table<BillItem> rowKey="id" size="middle" columns={billColumns} dataSource={bills.data?.list ?? []} loading={bills.isFetching} scroll={{ x: 1060 }} locale={{ emptyText }} pagination={pagination} data-testid="bills-table" />
        ) : (
          <Table<DailyBillItem>
            rowKey={(r) => `${r.day}:${r.instanceId}:${r.chargeType}`}
            size="middle"
            columns={dailyColumns}
            dataSource={daily.data?.list ?? []}
            loading={daily.isFetching}
            scroll={{ x: 730 }}
            locale={{ emptyText }}
            pagination={pagination}
            data-testid="bills-daily-table"
          />
        )}
      </Card>
    </div>
  );
}
