import { Descriptions, Flex, Table, Tag, Typography } from 'antd';
import type { Order, OrderStatus } from '@suanli/contract/order';
import { formatDateTime, formatMoney } from '@suanli/domain/format';
import { useT } from '../../locales/i18n.ts';
import { ServerText } from './ServerText.tsx';
import { chargeLabel } from './labels.ts';
import styles from './market.module.css';

export const ORDER_STATUS_COLOR: Record<OrderStatus, string> = { unpaid: 'orange', paid: 'green', cancelled: 'default', expired: 'default' };

/** An order's facts, its lines and its total (the check page and the order detail page). */
export function OrderSummary({ order, extra }: { order: Order; extra?: { paidAt?: boolean } }) {
  const { t } = useT();
  return (
    <>
      <Descriptions column={{ xs: 1, sm: 2 }} size="small" data-testid="order-facts">
        <Descriptions.Item label={t('compute.check.orderId')}>
          <Typography.Text copyable={{ text: order.id, tooltips: [t('compute.instances.copy'), t('compute.instances.copied')] }} data-testid="order-id">
            {order.id}
          </Typography.Text>
        </Descriptions.Item>
        <Descriptions.Item label={t('compute.check.status')}>
          <Tag color={ORDER_STATUS_COLOR[order.status]} data-testid="order-status" data-status={order.status}>
            {t(`compute.orderStatuses.${order.status}`)}
          </Tag>
        </Descriptions.Item>
        <Descriptions.Item label={t('compute.check.machine')}>
          <ServerText>{order.datacenterName}</ServerText> · {order.hostName}
        </Descriptions.Item>
        <Descriptions.Item label={t('compute.check.gpus')}>
          {order.gpuTypeName} × {order.gpuCount}
        </Descriptions.Item>
        <Descriptions.Item label={t('compute.check.image')}>
          <ServerText>{order.imageName}</ServerText>
        </Descriptions.Item>
        <Descriptions.Item label={t('compute.check.dataDisk')}>{order.dataDiskGb} GB</Descriptions.Item>
        <Descriptions.Item label={t('compute.check.chargeType')}>{chargeLabel(order.chargeType, order.period, order.quantity)}</Descriptions.Item>
        <Descriptions.Item label={t('compute.check.instanceName')}>{order.instanceName ? <ServerText>{order.instanceName}</ServerText> : '—'}</Descriptions.Item>
        <Descriptions.Item label={t('compute.check.createdAt')}>{formatDateTime(order.createdAt)}</Descriptions.Item>
        {extra?.paidAt && order.paidAt && <Descriptions.Item label={t('compute.orders.paidAt')}>{formatDateTime(order.paidAt)}</Descriptions.Item>}
        {extra?.paidAt && order.closedAt && <Descriptions.Item label={t('compute.orders.closedAt')}>{formatDateTime(order.closedAt)}</Descriptions.Item>}
        {order.instanceId && <Descriptions.Item label={t('compute.orders.instance')}>{order.instanceId}</Descriptions.Item>}
      </Descriptions>
      <Typography.Title level={2} style={{ fontSize: 16, margin: '16px 0 8px' }}>
        {t('compute.check.lines')}
      </Typography.Title>
      <Table
        size="small"
        pagination={false}
        rowKey={(r) => r.label}
        dataSource={order.lines}
        columns={[
          { title: t('compute.check.item'), dataIndex: 'label', key: 'label', render: (v: string) => <ServerText>{v}</ServerText> },
          { title: t('compute.check.amount'), dataIndex: 'amount', key: 'amount', align: 'right', render: (v: number) => formatMoney(v) },
        ]}
        data-testid="order-lines"
      />
      <Flex justify="end" align="baseline" gap={12} style={{ marginTop: 12 }}>
        <Typography.Text type="secondary">{t('compute.check.total')}</Typography.Text>
        <span className={styles.figure} data-testid="order-total">
          {formatMoney(order.amount)}
        </span>
      </Flex>
      {order.chargeType === 'payg' && (
        <Typography.Paragraph type="secondary" style={{ textAlign: 'right', margin: '4px 0 0' }} data-testid="order-hourly">
          {t('compute.check.hourly', { amount: formatMoney(order.hourly) })}
        </Typography.Paragraph>
      )}
    </>
  );
}
