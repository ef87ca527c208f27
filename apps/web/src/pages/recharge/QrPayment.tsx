import { useEffect } from 'react';
import { Button, Card, Descriptions, Flex, Popconfirm, QRCode, Result, Skeleton, Spin, Typography } from 'antd';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { formatDuration, formatMoney } from '@suanli/domain/format';
import { paymentQuery } from '../../api/queries/payment.ts';
import { getErrorMessage } from '../../api/errors.ts';
import { useT } from '../../locales/i18n.ts';
import { METHOD_LOOK } from './methods.tsx';
import { useNow } from './useNow.ts';
import styles from './recharge.module.css';

/** Where a settled payment sends the payer. */
export const RESULT_PATH = { paid: '/recharge/success', failed: '/recharge/failure', expired: '/recharge/timeout' } as const;

/**
 * The waiting view of a QR payment (WeChat Native, Alipay QR): the code, the amount, the time left,
 * and GET /payments/:id every 3 s until it is paid, failed or expired, then the result page.
 */
export function QrPayment({ id, onCancel }: { id: string; onCancel: () => void }) {
  const { t } = useT();
  const navigate = useNavigate();
  const payment = useQuery(paymentQuery(id));
  const status = payment.data?.status;
  const now = useNow(status === 'pending');

  useEffect(() => {
    if (status && status !== 'pending') void navigate(`${RESULT_PATH[status]}?id=${encodeURIComponent(id)}`, { replace: true });
  }, [status, id, navigate]);

  if (payment.isPending) {
    return (
      <Card data-testid="recharge-qr">
        <Skeleton active paragraph={{ rows: 6 }} />
      </Card>
    );
  }
  if (payment.isError && !payment.data) {
    return (
      <Card data-testid="recharge-qr">
        <Result
          status="warning"
          title={t('wallet.qr.loadFailed')}
          subTitle={getErrorMessage(payment.error)}
          extra={[
            <Button key="retry" type="primary" onClick={() => void payment.refetch()} loading={payment.isFetching}>
              {t('common.retry')}
            </Button>,
            <Button key="back" onClick={onCancel}>
              {t('common.back')}
            </Button>,
          ]}
        />
      </Card>
    );
  }

  const p = payment.data;
  const left = Math.max(0, Math.floor((Date.parse(p.expiresAt) - now) / 1000));
  const expired = left === 0;
  const methodName = t(`wallet.methods.${p.method}`);
  const look = METHOD_LOOK[p.method];

  return (
    <Card title={t('wallet.qr.title')} data-testid="recharge-qr" data-payment-id={p.id}>
      <Flex gap={32} wrap justify="center" align="center">
        <div className={styles.qrBox}>
          <Typography.Text type="secondary">{t('wallet.qr.scanWith', { method: methodName })}</Typography.Text>
          {p.qrCode ? (
            <QRCode value={p.qrCode} size={220} status={expired ? 'expired' : 'active'} onRefresh={onCancel} data-testid="recharge-qr-code" />
          ) : p.payUrl ? (
            <Button type="primary" href={p.payUrl}>
              {methodName}
            </Button>
          ) : (
            <Typography.Text type="danger">{t('wallet.qr.noQr')}</Typography.Text>
          )}
          <Flex align="center" gap={8}>
            <Spin size="small" />
            <Typography.Text type="secondary">{t('wallet.qr.waiting')}</Typography.Text>
          </Flex>
        </div>
        <div style={{ minWidth: 260 }}>
          <Descriptions column={1} size="small" colon={false} styles={{ label: { width: 96, color: 'rgba(0,0,0,.62)' } }}>
            <Descriptions.Item label={t('wallet.qr.amount')}>
              <span className={styles.payable} data-testid="recharge-qr-amount">
                {formatMoney(p.amount)}
              </span>
            </Descriptions.Item>
            <Descriptions.Item label={t('wallet.result.method')}>
              <span style={{ color: look.color, marginRight: 6 }}>{look.icon}</span>
              {methodName}
            </Descriptions.Item>
            <Descriptions.Item label={t('wallet.qr.expiresIn')}>
              {expired ? (
                <Typography.Text type="danger">{t('wallet.qr.expired')}</Typography.Text>
              ) : (
                <span className={styles.countdown} data-testid="recharge-qr-countdown">
                  {formatDuration(left, 'mmss')}
                </span>
              )}
            </Descriptions.Item>
            <Descriptions.Item label={t('wallet.qr.orderId')}>
              <Typography.Text copyable style={{ fontSize: 12 }}>
                {p.id}
              </Typography.Text>
            </Descriptions.Item>
          </Descriptions>
          <Typography.Paragraph type="secondary" style={{ fontSize: 12, margin: '8px 0 16px' }}>
            {t('wallet.qr.autoRefresh')}
          </Typography.Paragraph>
          <Popconfirm title={t('wallet.qr.cancelTitle')} description={t('wallet.qr.cancelContent')} okText={t('common.confirm')} cancelText={t('common.cancel')} onConfirm={onCancel}>
            <Button data-testid="recharge-qr-cancel">{t('wallet.qr.cancel')}</Button>
          </Popconfirm>
        </div>
      </Flex>
    </Card>
  );
}
