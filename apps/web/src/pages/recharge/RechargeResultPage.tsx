import { useEffect, useRef, useState, type ReactNode } from 'react';
import { Button, Card, Descriptions, Result, Spin, Tag, Typography } from 'antd';
import { ClockCircleOutlined, LoadingOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import { useNavigate, useSearchParams } from 'react-router';
import type { Payment, PaymentStatus } from '@suanli/contract/payment';
import { formatDateTime, formatMoney } from '@suanli/domain/format';
import { paymentQuery, useRefreshBalances } from '../../api/queries/payment.ts';
import { toApiError } from '../../api/errors.ts';
import { useT } from '../../locales/i18n.ts';
import { INCOME_EXPEND_PATH, RECHARGE_PATH } from './paths.ts';
import { METHOD_LOOK } from './methods.tsx';
import { useNow } from './useNow.ts';
import styles from './recharge.module.css';

/** Which page the payer was sent to: it only decides how an unsettled payment is worded. */
type Expect = 'success' | 'failure' | 'timeout';
/** What the page shows: always the payment's real state, never the address's claim. */
type View = 'success' | 'failure' | 'timeout' | 'confirming' | 'unfinished';

/** After this long without a verdict, the confirming view also points to support. */
const CONFIRMING_PATIENCE_MS = 60_000;

/** The details sit on the card itself, not in Result's grey box. */
const RESULT_STYLES = { body: { background: 'transparent', padding: '8px 0 0' } };

const STATUS_TAG: Record<PaymentStatus, string> = { pending: 'processing', paid: 'success', failed: 'error', expired: 'default' };

function viewOf(status: PaymentStatus, expect: Expect): View {
  if (status === 'paid') return 'success';
  if (status === 'failed') return 'failure';
  if (status === 'expired') return 'timeout';
  // Pending: back from the cashier before the gateway's notification arrived.
  return expect === 'success' ? 'confirming' : 'unfinished';
}

function Frame({ children, status, view }: { children: ReactNode; status: string; view?: View }) {
  return (
    <div className={styles.page}>
      <div className={`${styles.container} ${styles.narrow}`}>
        <Card data-testid="recharge-result" data-status={status} data-view={view ?? status}>
          {children}
        </Card>
      </div>
    </div>
  );
}

function Details({ p }: { p: Payment }) {
  const { t } = useT();
  const look = METHOD_LOOK[p.method];
  return (
    <Descriptions
      bordered
      size="small"
      column={{ xs: 1, sm: 2 }}
      style={{ maxWidth: 680, margin: '0 auto' }}
      styles={{ label: { width: 110, whiteSpace: 'nowrap' } }}
      data-testid="recharge-result-details"
    >
      <Descriptions.Item label={t('wallet.result.amount')}>
        <Typography.Text strong data-testid="recharge-result-amount">
          {formatMoney(p.amount)}
        </Typography.Text>
      </Descriptions.Item>
      <Descriptions.Item label={t('wallet.result.method')}>
        <span style={{ color: look.color, marginRight: 6 }}>{look.icon}</span>
        {t(`wallet.methods.${p.method}`)}
      </Descriptions.Item>
      <Descriptions.Item label={t('wallet.result.createdAt')}>{formatDateTime(p.createdAt)}</Descriptions.Item>
      {p.paidAt ? (
        <Descriptions.Item label={t('wallet.result.paidAt')}>{formatDateTime(p.paidAt)}</Descriptions.Item>
      ) : (
        <Descriptions.Item label={t('wallet.result.expiresAt')}>{formatDateTime(p.expiresAt)}</Descriptions.Item>
      )}
      <Descriptions.Item label={t('wallet.result.orderId')} span={{ xs: 1, sm: 2 }}>
        <Typography.Text copyable data-testid="recharge-result-id">
          {p.id}
        </Typography.Text>
      </Descriptions.Item>
      <Descriptions.Item label={t('wallet.result.status')} span={{ xs: 1, sm: 2 }}>
        <Tag color={STATUS_TAG[p.status]}>{t(`wallet.result.statuses.${p.status}`)}</Tag>
      </Descriptions.Item>
    </Descriptions>
  );
}

/**
 * /recharge/success, /recharge/failure and /recharge/timeout: the payment of `?id=`, as it really
 * is. A pending payment is asked again every 3 s until the gateway's verdict arrives; only a paid
 * one is called a success, and then the balances everywhere are refreshed.
 */
function RechargeResult({ expect }: { expect: Expect }) {
  const { t } = useT();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const id = params.get('id')?.trim() ?? '';
  const payment = useQuery({ ...paymentQuery(id), enabled: id !== '' });
  const refreshBalances = useRefreshBalances();
  const refreshed = useRef<string | null>(null);
  const status = payment.data?.status;
  const confirming = status === 'pending';
  const [since] = useState(() => Date.now());
  const now = useNow(confirming, 5_000);

  useEffect(() => {
    if (status !== 'paid' || refreshed.current === id) return;
    refreshed.current = id;
    void refreshBalances();
  }, [status, id, refreshBalances]);

  const again = (
    <Button key="again" type="primary" onClick={() => navigate(RECHARGE_PATH)} data-testid="recharge-again">
      {t('wallet.result.rechargeAgain')}
    </Button>
  );
  const contact = (
    <Button key="contact" onClick={() => navigate('/contact')} data-testid="recharge-contact">
      {t('wallet.result.contact')}
    </Button>
  );
  const consoleButton = (primary: boolean) => (
    <Button key="console" type={primary ? 'primary' : 'default'} onClick={() => navigate('/center/home')} data-testid="recharge-console">
      {t('wallet.result.backConsole')}
    </Button>
  );
  const details = (
    <Button key="details" type="primary" onClick={() => navigate(INCOME_EXPEND_PATH)} data-testid="recharge-details">
      {t('wallet.result.viewDetails')}
    </Button>
  );

  if (!id) {
    return (
      <Frame status="error">
        <Result status="error" title={t('wallet.result.missingId')} subTitle={t('wallet.result.missingIdDesc')} extra={[again, consoleButton(false)]} />
      </Frame>
    );
  }
  if (payment.isPending) {
    return (
      <Frame status="loading">
        <Result icon={<Spin size="large" />} title={t('wallet.result.loading')} />
      </Frame>
    );
  }
  if (!payment.data) {
    const error = toApiError(payment.error);
    // An unknown id, or another user's, is a 404: asking again won't change it.
    const lasting = error.status >= 400 && error.status < 500;
    return (
      <Frame status="error">
        <Result
          status="error"
          title={t('wallet.result.loadFailed')}
          subTitle={error.status === 404 ? t('wallet.result.notFoundDesc') : error.message}
          extra={[
            !lasting && (
              <Button key="retry" onClick={() => void payment.refetch()} loading={payment.isFetching} data-testid="recharge-result-retry">
                {t('common.retry')}
              </Button>
            ),
            again,
            consoleButton(false),
          ]}
        />
      </Frame>
    );
  }

  const p = payment.data;
  const view = viewOf(p.status, expect);
  const amount = formatMoney(p.amount);
  const body = <Details p={p} />;

  switch (view) {
    case 'success':
      return (
        <Frame status={p.status} view={view}>
          <Result styles={RESULT_STYLES} status="success" title={t('wallet.result.successTitle')} subTitle={t('wallet.result.successDesc', { amount })} extra={[details, consoleButton(false)]}>
            {body}
          </Result>
        </Frame>
      );
    case 'failure':
      return (
        <Frame status={p.status} view={view}>
          <Result styles={RESULT_STYLES} status="error" title={t('wallet.result.failureTitle')} subTitle={t('wallet.result.failureDesc')} extra={[again, contact]}>
            {body}
          </Result>
        </Frame>
      );
    case 'timeout':
      return (
        <Frame status={p.status} view={view}>
          <Result styles={RESULT_STYLES} status="warning" icon={<ClockCircleOutlined />} title={t('wallet.result.timeoutTitle')} subTitle={t('wallet.result.timeoutDesc')} extra={[again, consoleButton(false)]}>
            {body}
          </Result>
        </Frame>
      );
    case 'confirming':
      return (
        <Frame status={p.status} view={view}>
          <Result
            styles={RESULT_STYLES}
            icon={<LoadingOutlined style={{ color: 'var(--brand)' }} />}
            title={t('wallet.result.confirmingTitle')}
            subTitle={
              <>
                {t('wallet.result.confirmingDesc')}
                {now - since > CONFIRMING_PATIENCE_MS && <div style={{ marginTop: 8 }}>{t('wallet.result.confirmingLong')}</div>}
              </>
            }
            extra={now - since > CONFIRMING_PATIENCE_MS ? [consoleButton(true), contact] : [consoleButton(false)]}
          >
            {body}
          </Result>
        </Frame>
      );
    case 'unfinished':
      return (
        <Frame status={p.status} view={view}>
          <Result styles={RESULT_STYLES} status="info" title={t('wallet.result.unfinishedTitle')} subTitle={t('wallet.result.unfinishedDesc')} extra={[again, contact]}>
            {body}
          </Result>
        </Frame>
      );
  }
}

export const RechargeSuccessPage = () => <RechargeResult expect="success" />;
export const RechargeFailurePage = () => <RechargeResult expect="failure" />;
export const RechargeTimeoutPage = () => <RechargeResult expect="timeout" />;
