import { Alert, Button, Card, Flex, Skeleton, Tag, Typography } from 'antd';
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useSearchParams } from 'react-router';
import type { Order } from '@suanli/contract/order';
import { formatMoney } from '@suanli/domain/format';
import { orderQuery } from '../../../api/queries/compute.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { useFeedback } from '../../../modules/feedback.ts';
import { useT } from '../../../locales/i18n.ts';
import { pathOf } from '../../../route-table.ts';
import { OrderSummary } from '../../market/OrderSummary.tsx';
import { useOrderPayment } from '../../market/useOrderPayment.ts';
import { ServerText } from '../../market/ServerText.tsx';
import { clockDuration } from '../../market/labels.ts';
import { BackResult, INSTANCES_PATH, OpsHead, ServerError } from './ops-shared.tsx';

const RECHARGE_PATH = pathOf('recharge');
const INCOME_PATH = pathOf('incomeExpend');

/** Paying a change order: countdown, balance, shortfall with a recharge link, pay or cancel. */
function ChangePayPanel({ order }: { order: Order }) {
  const { t } = useT();
  const navigate = useNavigate();
  const { message, modal } = useFeedback();
  const { balance, pay, cancel, left, expired, short, missing, insufficient, payNow: doPay } = useOrderPayment(order, () => {
    void message.success(t('ops.check.paid'));
    void navigate(INSTANCES_PATH);
  });

  const doCancel = () =>
    modal.confirm({
      title: t('ops.check.cancelConfirmTitle'),
      content: t('ops.check.cancelConfirm'),
      okText: t('ops.check.cancel'),
      okButtonProps: { danger: true },
      cancelText: t('common.cancel'),
      onOk: () =>
        cancel.mutateAsync(order.id).then(
          () => void message.success(t('ops.check.cancelled')),
          (err: unknown) =>
            void message.error({
              content: (
                <>
                  {t('ops.check.cancelFailed')} <ServerText>{getErrorMessage(err)}</ServerText>
                </>
              ),
              duration: 5,
            }),
        ),
    });

  return (
    <Flex vertical gap={12} data-testid="change-pay-panel">
      {expired ? (
        <Alert type="warning" showIcon title={t('ops.check.expired')} data-testid="change-check-expired" />
      ) : (
        <Alert type="info" showIcon title={t('ops.check.countdown', { time: clockDuration(left) })} data-testid="change-check-countdown" />
      )}
      <Flex justify="space-between" align="center" wrap gap={8}>
        <Typography.Text type="secondary">{t('ops.check.balance')}</Typography.Text>
        {balance.isPending ? (
          <Skeleton.Input active size="small" />
        ) : balance.isError ? (
          <Flex gap={8} align="center">
            <Typography.Text type="danger">{t('ops.check.balanceFailed')}</Typography.Text>
            <Button size="small" onClick={() => void balance.refetch()}>
              {t('common.retry')}
            </Button>
          </Flex>
        ) : (
          <strong data-testid="change-check-balance">{formatMoney(balance.data.balance)}</strong>
        )}
      </Flex>
      {short && !expired && (
        <Alert
          type="warning"
          showIcon
          title={t('ops.check.short', { amount: formatMoney(missing) })}
          action={
            <Link to={RECHARGE_PATH} data-testid="change-check-recharge">
              {t('ops.check.recharge')}
            </Link>
          }
          data-testid="change-check-short"
        />
      )}
      {pay.isError && !insufficient && <ServerError title={t('ops.check.payFailed')} error={pay.error} testId="change-check-pay-error" />}
      <Flex gap={12} justify="end" wrap>
        <Button danger onClick={doCancel} loading={cancel.isPending} disabled={pay.isPending} data-testid="change-check-cancel">
          {cancel.isPending ? t('ops.check.cancelling') : t('ops.check.cancel')}
        </Button>
        <Button type="primary" size="large" onClick={doPay} loading={pay.isPending} disabled={expired || short || cancel.isPending} data-testid="change-check-pay">
          {pay.isPending ? t('ops.check.paying') : t('ops.check.pay')}
        </Button>
      </Flex>
    </Flex>
  );
}

/** A change order that needs no payment: applied (a refund shown), or closed. */
function ClosedOrder({ order }: { order: Order }) {
  const { t } = useT();
  const navigate = useNavigate();
  const paid = order.status === 'paid';
  const title = !paid
    ? t('ops.check.closed', { status: t(`compute.orderStatuses.${order.status}`) })
    : order.amount < 0
      ? t('ops.check.refunded', { amount: formatMoney(-order.amount) })
      : t('ops.check.applied');
  return (
    <Alert
      type={paid ? 'success' : 'info'}
      showIcon
      title={title}
      action={
        <Flex gap={8} wrap>
          {paid && order.amount < 0 && (
            <Button size="small" onClick={() => navigate(INCOME_PATH)} data-testid="change-check-income">
              {t('ops.check.toIncome')}
            </Button>
          )}
          <Button type={paid ? 'primary' : 'default'} size="small" onClick={() => navigate(INSTANCES_PATH)} data-testid="change-check-instances">
            {t('ops.check.toInstances')}
          </Button>
        </Flex>
      }
      data-testid="change-check-closed"
    />
  );
}

/** /center/control/changeOrderdetail?id=: check and pay an order that changes an instance (conversion, renewal, resize, disk). */
export function ChangeOrderDetailPage() {
  const { t } = useT();
  const [params] = useSearchParams();
  const id = params.get('id') ?? '';
  const order = useQuery(orderQuery(id));

  let body;
  if (!/^\d{8,32}$/.test(id)) body = <BackResult status="info" title={t('ops.check.missingId')} testId="change-check-missing" />;
  else if (order.isPending) body = <Skeleton active paragraph={{ rows: 8 }} data-testid="change-check-loading" />;
  else if (order.isError)
    body = (
      <BackResult
        status="warning"
        title={t('ops.check.loadFailed')}
        subTitle={<ServerText>{getErrorMessage(order.error)}</ServerText>}
        testId="change-check-error"
        extra={
          <Button type="primary" onClick={() => void order.refetch()} loading={order.isFetching}>
            {t('common.retry')}
          </Button>
        }
      />
    );
  else
    body = (
      <Flex vertical gap={20}>
        <Flex align="center" gap={8}>
          <Typography.Text type="secondary">{t('ops.check.kind')}</Typography.Text>
          <Tag color="blue" data-testid="change-check-kind" data-kind={order.data.kind}>
            {t(`compute.orderKinds.${order.data.kind}`)}
          </Tag>
        </Flex>
        <OrderSummary order={order.data} />
        {order.data.status === 'unpaid' ? <ChangePayPanel order={order.data} /> : <ClosedOrder order={order.data} />}
      </Flex>
    );

  return (
    <div data-testid="change-check-page">
      <OpsHead title={t('ops.check.title')} />
      <Card style={{ maxWidth: 960 }}>{body}</Card>
    </div>
  );
}
