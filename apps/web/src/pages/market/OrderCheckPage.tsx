import { useRef, useState } from 'react';
import { Alert, Button, Card, Flex, Result, Skeleton, Typography } from 'antd';
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useSearchParams } from 'react-router';
import type { Order } from '@suanli/contract/order';
import { ErrorReason } from '@suanli/contract/errors';
import { formatMoney } from '@suanli/domain/format';
import { orderQuery, useCancelOrder, usePayOrder } from '../../api/queries/compute.ts';
import { balanceQuery } from '../../api/queries/wallet.ts';
import { ApiError, getErrorMessage } from '../../api/errors.ts';
import { useFeedback } from '../../modules/feedback.ts';
import { useT } from '../../locales/i18n.ts';
import { pathOf } from '../../route-table.ts';
import { newIdempotencyKey } from '../recharge/idempotency-key.ts';
import { useNow } from '../recharge/useNow.ts';
import { OrderSummary } from './OrderSummary.tsx';
import { ServerText } from './ServerText.tsx';
import { clockDuration } from './labels.ts';
import styles from './market.module.css';

const RECHARGE_PATH = pathOf('recharge');
const INSTANCES_PATH = pathOf('centerControl');
const MARKET_PATH = pathOf('market');

/** What paying needs in the balance: the total, or for pay-as-you-go one hour of running. */
export function neededBalance(order: Pick<Order, 'chargeType' | 'amount' | 'hourly'>): number {
  return order.chargeType === 'payg' ? Math.max(order.amount, order.hourly) : order.amount;
}

/** The pay / cancel part of an unpaid order: countdown, balance, short-balance message. */
export function PayPanel({ order }: { order: Order }) {
  const { t } = useT();
  const navigate = useNavigate();
  const { message, modal } = useFeedback();
  const balance = useQuery(balanceQuery());
  const pay = usePayOrder();
  const cancel = useCancelOrder();
  const now = useNow(true);
  /** One key per click; a retry after a lost answer (no status) reuses it, so nothing is paid twice. */
  const attempt = useRef<string | null>(null);
  const [serverShort, setServerShort] = useState(false);

  const left = Math.max(0, Math.floor((Date.parse(order.expiresAt) - now) / 1000));
  const expired = left === 0;
  const needed = neededBalance(order);
  const short = serverShort || (balance.data !== undefined && balance.data.balance < needed);
  const missing = balance.data ? Math.max(0, needed - balance.data.balance) : needed;

  const doPay = () => {
    attempt.current ??= newIdempotencyKey();
    pay.mutate(
      { orderId: order.id, idempotencyKey: attempt.current },
      {
        onSuccess: () => {
          attempt.current = null;
          void message.success(t('compute.check.paid'));
          void navigate(INSTANCES_PATH);
        },
        onError: (err) => {
          // An answer came back: the next click is a new attempt. No answer: the same one again.
          if (err instanceof ApiError && err.status > 0) attempt.current = null;
          if (err instanceof ApiError && err.reason === ErrorReason.InsufficientBalance) setServerShort(true);
          void balance.refetch();
        },
      },
    );
  };

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
      {pay.isError && !(pay.error instanceof ApiError && pay.error.reason === ErrorReason.InsufficientBalance) && (
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
