import { Alert, Button, Card, Flex, Result, Skeleton, Typography } from 'antd';
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useSearchParams } from 'react-router';
import type { Order } from '@suanli/contract/order';
import { formatMoney } from '@suanli/domain/format';
import { orderQuery } from '../../api/queries/compute.ts';
import { getErrorMessage } from '../../api/errors.ts';
import { useFeedback } from '../../modules/feedback.ts';
import { useT } from '../../locales/i18n.ts';
import { pathOf } from '../../route-table.ts';
import { OrderSummary } from './OrderSummary.tsx';
import { useOrderPayment } from './useOrderPayment.ts';
import { ServerText } from './ServerText.tsx';
import { clockDuration } from './labels.ts';
import styles from './market.module.css';

const RECHARGE_PATH = pathOf('recharge');
const INSTANCES_PATH = pathOf('centerControl');
const MARKET_PATH = pathOf('market');

/** The pay / cancel part of an unpaid order: countdown, balance, short-balance message. */
export function PayPanel({ order }: { order: Order }) {
  const { t } = useT();
  const navigate = useNavigate();
  const { message, modal } = useFeedback();
  const { balance, pay, cancel, left, expired, needed, short, missing, insufficient, payNow: doPay } = useOrderPayment(order, () => {
    void message.success(t('compute.check.paid'));
    void navigate(INSTANCES_PATH);
  });

  const doCancel = () =>
    modal.confirm({
      title: t('compute.check.cancelConfirmTitle'),
      content: t('compute.check.cancelConfirm'),
      okText: t('compute.check.cancel'),
      okButtonProps: { danger: true },
      cancelText: t('common.cancel'),
      onOk: () =>
        cancel.mutateAsync(order.id).then(
          () => void message.success(t('compute.check.cancelled')),
          (err: unknown) => void message.error(`${t('compute.check.cancelFailed')}：${getErrorMessage(err)}`),
        ),
    });

  return (
    <Flex vertical gap={12} data-testid="pay-panel">
      {expired ? (
        <Alert type="warning" showIcon title={t('compute.check.expired')} data-testid="check-expired" />
      ) : (
        <Alert type="info" showIcon title={t('compute.check.countdown', { time: clockDuration(left) })} data-testid="check-countdown" />
      )}
      <Flex justify="space-between" align="center" wrap gap={8}>
        <Typography.Text type="secondary">{t('compute.check.balance')}</Typography.Text>
        {balance.isPending ? (
          <Skeleton.Input active size="small" />
        ) : balance.isError ? (
          <Flex gap={8} align="center">
            <Typography.Text type="danger">{t('compute.check.balanceFailed')}</Typography.Text>
            <Button size="small" onClick={() => void balance.refetch()}>
              {t('common.retry')}
            </Button>
          </Flex>
        ) : (
          <strong data-testid="check-balance">{formatMoney(balance.data.balance)}</strong>
        )}
      </Flex>
      {short && !expired && (
        <Alert
          type="warning"
          showIcon
          title={order.chargeType === 'payg' ? t('compute.check.paygShort', { amount: formatMoney(needed) }) : t('compute.check.short', { amount: formatMoney(missing) })}
          description={order.chargeType === 'payg' ? t('compute.check.short', { amount: formatMoney(missing) }) : undefined}
          action={
            <Link to={RECHARGE_PATH} data-testid="check-recharge">
              {t('compute.check.recharge')}
            </Link>
          }
          data-testid="check-short"
        />
      )}
      {pay.isError && !insufficient && (
        <Alert type="error" showIcon title={t('compute.check.payFailed')} description={<ServerText>{getErrorMessage(pay.error)}</ServerText>} data-testid="check-pay-error" />
      )}
      <Flex gap={12} justify="end" wrap>
        <Button danger onClick={doCancel} loading={cancel.isPending} disabled={pay.isPending} data-testid="check-cancel">
          {cancel.isPending ? t('compute.check.cancelling') : t('compute.check.cancel')}
        </Button>
        <Button type="primary" size="large" onClick={doPay} loading={pay.isPending} disabled={expired || short || cancel.isPending} data-testid="check-pay">
          {pay.isPending ? t('compute.check.paying') : t('compute.check.pay')}
        </Button>
      </Flex>
    </Flex>
  );
}

/** /market/orderdetail?id=…: check the order, pay it from the balance or cancel it. */
export function OrderCheckPage() {
  const { t } = useT();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const id = params.get('id') ?? '';
  const order = useQuery(orderQuery(id));

  let body;
  if (!/^\d{8,32}$/.test(id)) body = <Result status="info" title={t('compute.check.missingId')} extra={<Button onClick={() => navigate(MARKET_PATH)}>{t('compute.check.toMarket')}</Button>} data-testid="check-missing" />;
  else if (order.isPending) body = <Skeleton active paragraph={{ rows: 8 }} />;
  else if (order.isError)
    body = (
      <Result
        status="warning"
        title={t('compute.check.loadFailed')}
        subTitle={<ServerText>{getErrorMessage(order.error)}</ServerText>}
        extra={<Button type="primary" onClick={() => void order.refetch()} loading={order.isFetching}>{t('common.retry')}</Button>}
        data-testid="check-error"
      />
    );
  else
    body = (
      <Flex vertical gap={20}>
        <OrderSummary order={order.data} />
        {order.data.status === 'unpaid' ? (
          <PayPanel order={order.data} />
        ) : (
          <Alert
            type={order.data.status === 'paid' ? 'success' : 'info'}
            showIcon
            title={t('compute.check.closed', { status: t(`compute.orderStatuses.${order.data.status}`) })}
            action={
              order.data.status === 'paid' ? (
                <Button type="primary" size="small" onClick={() => navigate(INSTANCES_PATH)}>
                  {t('compute.check.toInstances')}
                </Button>
              ) : (
                <Button size="small" onClick={() => navigate(MARKET_PATH)}>
                  {t('compute.check.toMarket')}
                </Button>
              )
            }
            data-testid="check-closed"
          />
        )}
      </Flex>
    );

  return (
    <div className={styles.page} data-testid="check-page">
      <div className={styles.container} style={{ maxWidth: 960 }}>
        <div className={styles.head}>
          <h1>{t('compute.check.title')}</h1>
        </div>
        <Card>{body}</Card>
      </div>
    </div>
  );
}
