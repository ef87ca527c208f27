import { useState } from 'react';
import { Button, Card, Empty, Flex, Result, Select, Space, Table, Tag, Typography, type TableColumnsType } from 'antd';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { orderKinds, orderStatuses, type Order, type OrderKind, type OrderStatus } from '@suanli/contract/order';
import { formatDateTime, formatMoney } from '@suanli/domain/format';
import { ordersPageQuery } from '../../../api/queries/compute.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { useScrollRegion } from '../../../modules/useScrollRegion.ts';
import { useT } from '../../../locales/i18n.ts';
import { pathOf } from '../../../route-table.ts';
import { ServerText } from '../../market/ServerText.tsx';
import { ORDER_STATUS_COLOR } from '../../market/OrderSummary.tsx';
import { chargeLabel } from '../../market/labels.ts';
import { checkPathOf } from '../control/check-path.ts'; // Issue #10: a change of an instance is paid on its own check page

const DETAIL_PATH = pathOf('orderDetail');

/** /center/expense/order/order (我的订单): every order, filtered by status and kind. */
export function OrdersPage() {
  const { t } = useT();
  const navigate = useNavigate();
  const [status, setStatus] = useState<OrderStatus | undefined>();
  const [kind, setKind] = useState<OrderKind | undefined>();
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(20);
  const list = useQuery(ordersPageQuery({ page, pageSize, status, kind }));
  const tableBox = useScrollRegion<HTMLDivElement>(t('compute.orders.title'));

  const columns: TableColumnsType<Order> = [
    { title: t('compute.orders.colId'), dataIndex: 'id', key: 'id', width: 200, render: (v: string) => <Typography.Text style={{ fontFamily: 'monospace', fontSize: 12 }}>{v}</Typography.Text> },
    { title: t('compute.orders.colKind'), dataIndex: 'kind', key: 'kind', width: 100, render: (v: OrderKind) => t(`compute.orderKinds.${v}`) },
    { title: t('compute.orders.colSpec'), key: 'spec', width: 220, render: (_v, o) => (
      <Flex vertical style={{ fontSize: 12 }}>
        <span>{o.gpuTypeName} × {o.gpuCount}</span>
        <Typography.Text type="secondary" style={{ fontSize: 12 }}><ServerText>{o.datacenterName}</ServerText> · <ServerText>{o.imageName}</ServerText></Typography.Text>
      </Flex>
    ) },
    { title: t('compute.orders.colCharge'), key: 'charge', width: 130, render: (_v, o) => chargeLabel(o.chargeType, o.period, o.quantity) },
    { title: t('compute.orders.colAmount'), dataIndex: 'amount', key: 'amount', width: 120, align: 'right', render: (v: number) => <span style={{ fontVariantNumeric: 'tabular-nums' }}>{formatMoney(v)}</span> },
    { title: t('compute.orders.colStatus'), dataIndex: 'status', key: 'status', width: 100, render: (v: OrderStatus) => <Tag color={ORDER_STATUS_COLOR[v]} data-testid="orders-status">{t(`compute.orderStatuses.${v}`)}</Tag> },
    { title: t('compute.orders.colCreated'), dataIndex: 'createdAt', key: 'createdAt', width: 170, render: (v: string) => formatDateTime(v) },
    {
      title: t('compute.orders.colActions'),
      key: 'actions',
      width: 150,
      render: (_v, o) => (
        <Space size={0}>
          <Button type="link" size="small" onClick={() => navigate(`${DETAIL_PATH}?id=${encodeURIComponent(o.id)}`)} data-testid="orders-detail">{t('compute.orders.detail')}</Button>
          {o.status === 'unpaid' && <Button type="link" size="small" onClick={() => navigate(checkPathOf(o.kind, o.id))} data-testid="orders-pay">{t('compute.orders.pay')}</Button>}
        </Space>
      ),
    },
  ];

  return (
    <div data-testid="orders-page">
      <Typography.Title level={2} style={{ margin: '4px 0 12px', fontSize: 20 }}>{t('compute.orders.title')}</Typography.Title>
      <Card size="small" style={{ marginBottom: 16 }}>
        <Flex gap={16} wrap align="center">
          <Space size={8}>
            <Typography.Text type="secondary" id="orders-status-label">{t('compute.orders.status')}</Typography.Text>
            <Select<OrderStatus> aria-labelledby="orders-status-label" allowClear style={{ width: 140 }} placeholder={t('compute.orders.all')} value={status} options={orderStatuses.map((s) => ({ value: s, label: t(`compute.orderStatuses.${s}`) }))} onChange={(v) => { setStatus(v); setPage(1); }} data-testid="orders-status-filter" />
          </Space>
          <Space size={8}>
            <Typography.Text type="secondary" id="orders-kind-label">{t('compute.orders.kind')}</Typography.Text>
            <Select<OrderKind> aria-labelledby="orders-kind-label" allowClear style={{ width: 140 }} placeholder={t('compute.orders.allKinds')} value={kind} options={orderKinds.map((k) => ({ value: k, label: t(`compute.orderKinds.${k}`) }))} onChange={(v) => { setKind(v); setPage(1); }} data-testid="orders-kind-filter" />
          </Space>
        </Flex>
      </Card>
      <Card ref={tableBox}>
        {list.isError ? (
          <Result status="warning" title={t('compute.orders.loadFailed')} subTitle={<ServerText>{getErrorMessage(list.error)}</ServerText>} extra={<Button type="primary" onClick={() => void list.refetch()} loading={list.isFetching}>{t('common.retry')}</Button>} data-testid="orders-error" />
        ) : (
          <Table<Order>
            rowKey="id"
            size="middle"
            columns={columns}
            dataSource={list.data?.list ?? []}
            loading={list.isFetching}
            scroll={{ x: 1190 }}
            locale={{ emptyText: list.isPending ? <div style={{ height: 96 }} /> : <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('compute.orders.empty')} data-testid="orders-empty" /> }}
            pagination={{
              current: page,
              pageSize,
              total: list.data?.total ?? 0,
              showSizeChanger: true,
              showTotal: (total) => t('compute.orders.totalText', { total }),
              onChange: (p, size) => { setPage(size !== pageSize ? 1 : p); setPageSize(size); },
            }}
            data-testid="orders-table"
          />
        )}
      </Card>
    </div>
  );
}
