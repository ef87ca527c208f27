import { useState } from 'react';
import { Alert, Button, Card, Col, Descriptions, Flex, Result, Row, Skeleton, Typography, type ButtonProps } from 'antd';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import type { InstanceItem } from '@suanli/contract/instance';
import type { Order } from '@suanli/contract/order';
import { formatDateTime, formatMoney } from '@suanli/domain/format';
import { changePreviewQuery, useCreateChange } from '../../../api/queries/instance-ops.ts';
import { useFeedback } from '../../../modules/feedback.ts';
import { useT } from '../../../locales/i18n.ts';
import { pathOf } from '../../../route-table.ts';
import { BackResult, INSTANCES_PATH, InstanceFacts, OpsHead, PriceLines, ServerError, WithInstance, remainingText } from './ops-shared.tsx';

const INCOME_PATH = pathOf('incomeExpend');

/** What a refund order gave back: its amount is the refund, negative. */
const refundOf = (amount: number) => Math.max(0, -amount);

/** The refunded amount once converted, with the way to the income and expense page. */
function Converted({ order }: { order: Order }) {
  const { t } = useT();
  const navigate = useNavigate();
  return (
    <Card>
      <Result
        status="success"
        title={t('ops.toPayg.done')}
        subTitle={<span data-testid="payg-refunded">{t('ops.toPayg.doneRefund', { amount: formatMoney(refundOf(order.amount)) })}</span>}
        extra={[
          <Button key="income" type="primary" onClick={() => navigate(INCOME_PATH)} data-testid="payg-to-income">
            {t('ops.toPayg.toIncome')}
          </Button>,
          <Button key="list" onClick={() => navigate(INSTANCES_PATH)} data-testid="payg-to-instances">
            {t('ops.common.toInstances')}
          </Button>,
        ]}
        data-testid="payg-success"
      />
    </Card>
  );
}

function ToPayg({ inst, onDone }: { inst: InstanceItem; onDone: (order: Order) => void }) {
  const { t } = useT();
  const { modal } = useFeedback();
  const preview = useQuery(changePreviewQuery({ kind: 'payg', body: { instanceId: inst.id } }));
  const convert = useCreateChange();

  const confirm = () => {
    if (!preview.data) return;
    const refund = formatMoney(refundOf(preview.data.amount));
    modal.confirm({
      title: t('ops.toPayg.confirmTitle', { name: inst.name }),
      content: t('ops.toPayg.confirmContent', { amount: refund, hourly: formatMoney(preview.data.hourly) }),
      okText: t('ops.toPayg.confirm'),
      okButtonProps: { danger: true, 'data-testid': 'payg-confirm-ok' } as ButtonProps,
      cancelText: t('common.cancel'),
      onOk: () =>
        convert.mutateAsync({ kind: 'payg', body: { instanceId: inst.id } }).then(
          (order) => onDone(order),
          () => undefined,
        ),
    });
  };

  return (
    <Row gutter={[16, 16]}>
      <Col xs={24} lg={15}>
        <Flex vertical gap={16}>
          <Card size="small">
            <InstanceFacts inst={inst} />
          </Card>
          <Alert type="info" showIcon title={inst.status === 'running' ? t('ops.toPayg.runningHint') : t('ops.toPayg.stoppedHint')} />
        </Flex>
      </Col>
      <Col xs={24} lg={9}>
        <Card title={t('ops.toPayg.refund')} data-testid="payg-preview">
          {preview.isPending ? (
            <Skeleton active paragraph={{ rows: 4 }} data-testid="payg-preview-loading" />
          ) : preview.isError ? (
            <Flex vertical gap={12}>
              <ServerError title={t('ops.common.priceFailed')} error={preview.error} testId="payg-preview-error" />
              <Button onClick={() => void preview.refetch()} loading={preview.isFetching}>
                {t('common.retry')}
              </Button>
            </Flex>
          ) : (
            <Flex vertical gap={12}>
              <Flex justify="space-between" align="baseline" wrap gap={8}>
                <Typography.Text type="secondary">{t('ops.toPayg.refund')}</Typography.Text>
                <strong style={{ fontSize: 26, color: '#389e0d' }} data-testid="payg-preview-refund">
                  {formatMoney(refundOf(preview.data.amount))}
                </strong>
              </Flex>
              <Typography.Text type="secondary" style={{ fontSize: 12 }}>
                {t('ops.toPayg.refundHint')}
              </Typography.Text>
              <Descriptions column={1} size="small">
                <Descriptions.Item label={t('ops.toPayg.remaining')}>
                  <span data-testid="payg-preview-remaining">{remainingText(preview.data.remainingSeconds)}</span>
                </Descriptions.Item>
                {inst.expiresAt && <Descriptions.Item label={t('ops.toPayg.expiresAt')}>{formatDateTime(inst.expiresAt)}</Descriptions.Item>}
                <Descriptions.Item label={t('ops.toPayg.newHourly')}>
                  <span data-testid="payg-preview-hourly">
                    {formatMoney(preview.data.hourly)}
                    {t('ops.common.perHour')}
                  </span>
                </Descriptions.Item>
              </Descriptions>
              {preview.data.lines.length > 0 && <PriceLines lines={preview.data.lines} testId="payg-preview-lines" />}
            </Flex>
          )}
          {convert.isError && (
            <div style={{ marginTop: 16 }}>
              <ServerError title={t('ops.toPayg.failed')} error={convert.error} testId="payg-error" />
            </div>
          )}
          <Button type="primary" danger size="large" block style={{ marginTop: 20 }} disabled={!preview.data || preview.isFetching} loading={convert.isPending} onClick={confirm} data-testid="payg-confirm">
            {convert.isPending ? t('ops.toPayg.converting') : t('ops.toPayg.confirm')}
          </Button>
        </Card>
      </Col>
    </Row>
  );
}

/** /center/control/changeContractPreview?instanceId=: prepaid → pay-as-you-go, the unused time refunded to the second. */
export function ChangeContractPreviewPage() {
  const { t } = useT();
  // Kept here: once converted the instance reloads as pay-as-you-go, and the result must stay.
  const [done, setDone] = useState<Order | null>(null);
  return (
    <div data-testid="change-contract-preview-page">
      <OpsHead title={t('ops.toPayg.title')} subtitle={t('ops.toPayg.subtitle')} />
      {done ? (
        <Converted order={done} />
      ) : (
        <WithInstance>
          {(inst) =>
            inst.chargeType !== 'prepaid' ? (
              <Card>
                <BackResult status="info" title={t('ops.toPayg.notPrepaid')} testId="payg-not-prepaid" />
              </Card>
            ) : (
              <ToPayg inst={inst} onDone={setDone} />
            )
          }
        </WithInstance>
      )}
    </div>
  );
}
