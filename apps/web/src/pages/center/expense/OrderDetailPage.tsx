import { Button, Card, Flex, Result, Skeleton, Typography } from 'antd';
import { ArrowLeftOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import { useNavigate, useSearchParams } from 'react-router';
import { orderQuery } from '../../../api/queries/compute.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { useT } from '../../../locales/i18n.ts';
import { pathOf } from '../../../route-table.ts';
import { ServerText } from '../../market/ServerText.tsx';
import { OrderSummary } from '../../market/OrderSummary.tsx';
import { checkPathOf } from '../control/check-path.ts'; // Issue #10: a change of an instance is paid on its own check page

const ORDERS_PATH = pathOf('orders');

/** /center/expense/order/orderDetail?id=…: one order, with a way to pay it while unpaid. */
export function OrderDetailPage() {
  const { t } = useT();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const id = params.get('id') ?? '';
  const order = useQuery(orderQuery(id));
  const valid = /^\d{8,32}$/.test(id);

  return (
    <div data-testid="order-detail-page">
      <Flex align="center" gap={8} style={{ margin: '4px 0 12px' }}>
        <Button type="text" icon={<ArrowLeftOutlined />} onClick={() => navigate(ORDERS_PATH)} aria-label={t('compute.orders.back')} />
        <Typography.Title level={2} style={{ margin: 0, fontSize: 20 }}>{t('compute.orders.detailTitle')}</Typography.Title>
      </Flex>
      <Card>
        {!valid ? (
          <Result status="info" title={t('compute.check.missingId')} extra={<Button onClick={() => navigate(ORDERS_PATH)}>{t('compute.orders.back')}</Button>} />
        ) : order.isPending ? (
          <Skeleton active paragraph={{ rows: 8 }} />
        ) : order.isError ? (
          <Result status="warning" title={t('compute.check.loadFailed')} subTitle={<ServerText>{getErrorMessage(order.error)}</ServerText>} extra={<Button type="primary" onClick={() => void order.refetch()} loading={order.isFetching}>{t('common.retry')}</Button>} data-testid="order-detail-error" />
        ) : (
          <>
            <OrderSummary order={order.data} extra={{ paidAt: true }} />
            {order.data.status === 'unpaid' && (
              <Flex justify="end" style={{ marginTop: 16 }}>
                <Button type="primary" onClick={() => navigate(checkPathOf(order.data.kind, order.data.id))} data-testid="order-detail-pay">{t('compute.orders.pay')}</Button>
              </Flex>
            )}
          </>
        )}
      </Card>
    </div>
  );
}
