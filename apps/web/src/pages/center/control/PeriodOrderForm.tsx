import { useState, type ReactNode } from 'react';
import { Button, Card, Col, Flex, Form, InputNumber, Row, Segmented, Skeleton, Space, Typography } from 'antd';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import type { InstanceItem } from '@suanli/contract/instance';
import { MAX_PREPAID_QUANTITY, prepaidPeriods, type PrepaidPeriod } from '@suanli/contract/order';
import { formatDateTime, formatMoney } from '@suanli/domain/format';
import { changePreviewQuery, useCreateChange } from '../../../api/queries/instance-ops.ts';
import { useT } from '../../../locales/i18n.ts';
import { pathOf } from '../../../route-table.ts';
import { useDebounced } from '../../market/create-form.ts';
import { InstanceFacts, PriceLines, ServerError } from './ops-shared.tsx';

export const CHANGE_CHECK_PATH = pathOf('changeOrderDetail');

/**
 * Period and quantity of a prepaid order on an instance (pay-as-you-go → prepaid, or a renewal),
 * its price from the preview call, and the order: created unpaid, then checked and paid on
 * /center/control/changeOrderdetail.
 */
export function PeriodOrderForm({ inst, kind, testPrefix, submitLabel, notice }: { inst: InstanceItem; kind: 'prepay' | 'renewal'; testPrefix: string; submitLabel: string; notice?: ReactNode }) {
  const { t } = useT();
  const navigate = useNavigate();
  const [period, setPeriod] = useState<PrepaidPeriod>(inst.period ?? 'month');
  const [quantity, setQuantity] = useState<number | null>(1);
  const max = MAX_PREPAID_QUANTITY[period];
  const valid = quantity !== null && Number.isInteger(quantity) && quantity >= 1 && quantity <= max;
  const body = useDebounced(valid ? { kind, body: { instanceId: inst.id, period, quantity } } : null);
  const preview = useQuery(changePreviewQuery(body));
  const create = useCreateChange();

  const submit = () => {
    if (!valid || create.isPending) return;
    create.mutate(
      { kind, body: { instanceId: inst.id, period, quantity } },
      { onSuccess: (order) => void navigate(`${CHANGE_CHECK_PATH}?id=${encodeURIComponent(order.id)}`) },
    );
  };

  return (
    <Row gutter={[16, 16]}>
      <Col xs={24} lg={15}>
        <Flex vertical gap={16}>
          <Card size="small">
            <InstanceFacts inst={inst} />
          </Card>
          {notice}
          <Card>
            <Form layout="vertical" requiredMark={false} onFinish={submit}>
              <Form.Item label={t('ops.common.period')}>
                <Segmented
                  value={period}
                  onChange={(v) => {
                    setPeriod(v);
                    setQuantity(1);
                  }}
                  options={prepaidPeriods.map((p) => ({ value: p, label: t(`compute.periods.${p}`) }))}
                  aria-label={t('ops.common.period')}
                  data-testid={`${testPrefix}-period`}
                />
              </Form.Item>
              <Form.Item
                label={t('ops.common.quantity')}
                validateStatus={valid ? undefined : 'error'}
                help={t('ops.common.quantityHint', { max, unit: t(`compute.periodUnits.${period}`) })}
              >
                <Space>
                  <InputNumber<number>
                    min={1}
                    max={max}
                    precision={0}
                    value={quantity}
                    onChange={(v) => setQuantity(v)}
                    aria-label={t('ops.common.quantity')}
                    data-testid={`${testPrefix}-quantity`}
                  />
                  <span>{t(`compute.periodUnits.${period}`)}</span>
                </Space>
              </Form.Item>
            </Form>
          </Card>
        </Flex>
      </Col>
      <Col xs={24} lg={9}>
        <Card title={t('ops.common.lines')} data-testid={`${testPrefix}-price`}>
          {body === null ? (
            <Typography.Text type="secondary">{t('ops.common.quantityHint', { max, unit: t(`compute.periodUnits.${period}`) })}</Typography.Text>
          ) : preview.isPending ? (
            <Skeleton active paragraph={{ rows: 3 }} data-testid={`${testPrefix}-price-loading`} />
          ) : preview.isError ? (
            <ServerError title={t('ops.common.priceFailed')} error={preview.error} testId={`${testPrefix}-price-error`} />
          ) : (
            <div aria-live="polite" aria-busy={preview.isFetching}>
              <PriceLines lines={preview.data.lines} testId={`${testPrefix}-lines`} />
              <Flex justify="space-between" align="baseline" style={{ marginTop: 16 }}>
                <Typography.Text type="secondary">{t('ops.common.total')}</Typography.Text>
                <strong style={{ fontSize: 24, color: '#cf1322' }} data-testid={`${testPrefix}-total`}>
                  {formatMoney(preview.data.amount)}
                </strong>
              </Flex>
              {preview.data.expiresAt && (
                <Flex justify="space-between" style={{ marginTop: 8 }} wrap gap={8}>
                  <Typography.Text type="secondary">{t('ops.common.newExpiry')}</Typography.Text>
                  <span data-testid={`${testPrefix}-expiry`}>{formatDateTime(preview.data.expiresAt)}</span>
                </Flex>
              )}
            </div>
          )}
          {create.isError && (
            <div style={{ marginTop: 16 }}>
              <ServerError title={t('ops.common.createFailed')} error={create.error} testId={`${testPrefix}-error`} />
            </div>
          )}
          <Button
            type="primary"
            size="large"
            block
            style={{ marginTop: 20 }}
            disabled={!valid || body === null || preview.isError || preview.isPending}
            loading={create.isPending}
            onClick={submit}
            data-testid={`${testPrefix}-submit`}
          >
            {create.isPending ? t('ops.common.submitting') : submitLabel}
          </Button>
        </Card>
      </Col>
    </Row>
  );
}
