import { useEffect, useRef, useState } from 'react';
import { Alert, Button, Card, Col, Empty, Flex, Form, InputNumber, Row, Skeleton, Typography } from 'antd';
import { ProfileOutlined, WalletOutlined } from '@ant-design/icons';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate, useSearchParams } from 'react-router';
import type { CreatePaymentBody, PaymentMethod } from '@suanli/contract/payment';
import { formatMoney } from '@suanli/domain/format';
import { balanceQuery } from '../../api/queries/wallet.ts';
import { paymentKeys, paymentMethodsQuery, useCreatePayment } from '../../api/queries/payment.ts';
import { getErrorMessage } from '../../api/errors.ts';
import { useT } from '../../locales/i18n.ts';
import { PRESET_YUAN, parseYuan, validateYuan, yuanToUnits } from './amount.ts';
import { METHOD_LOOK } from './methods.tsx';
import { newIdempotencyKey } from './idempotency-key.ts';
import { QrPayment } from './QrPayment.tsx';
import { INCOME_EXPEND_PATH } from './paths.ts';
import styles from './recharge.module.css';


function BalanceCard() {
  const { t } = useT();
  const navigate = useNavigate();
  const balance = useQuery(balanceQuery());
  return (
    <Card className={styles.balance} data-testid="recharge-balance-card">
      <Flex justify="space-between" align="center" gap={16} wrap>
        <div>
          <Typography.Text type="secondary">
            <WalletOutlined /> {t('wallet.recharge.balance')}
          </Typography.Text>
          {balance.isPending ? (
            <Skeleton.Input active size="large" style={{ display: 'block', marginTop: 6 }} />
          ) : balance.isError ? (
            <Flex align="center" gap={8} style={{ marginTop: 6 }}>
              <Typography.Text type="danger">{t('wallet.recharge.balanceFailed')}</Typography.Text>
              <Button size="small" onClick={() => void balance.refetch()} loading={balance.isFetching}>
                {t('common.retry')}
              </Button>
            </Flex>
          ) : (
            <>
              <div className={styles.balanceFigure} data-testid="recharge-balance">
                {formatMoney(balance.data.balance)}
              </div>
              <Typography.Text type="secondary" style={{ fontSize: 12 }}>
                {t('wallet.recharge.frozen', { amount: formatMoney(balance.data.frozenBalance) })}
              </Typography.Text>
            </>
          )}
        </div>
        <Button type="link" icon={<ProfileOutlined />} onClick={() => navigate(INCOME_EXPEND_PATH)} data-testid="recharge-view-details">
          {t('wallet.recharge.viewDetails')}
        </Button>
      </Flex>
    </Card>
  );
}

function RulesCard() {
  const { t, tm } = useT();
  return (
    <Card title={t('wallet.recharge.rulesTitle')} data-testid="recharge-rules">
      <ul className={styles.rules}>
        {tm<string[]>('wallet.recharge.rules').map((rule) => (
          <li key={rule}>{rule}</li>
        ))}
      </ul>
    </Card>
  );
}

type Attempt = { fingerprint: string; key: string };

function RechargeForm({ onQr }: { onQr: (id: string) => void }) {
  const { t } = useT();
  const qc = useQueryClient();
  const methods = useQuery(paymentMethodsQuery());
  const create = useCreatePayment();
  const [preset, setPreset] = useState<number | null>(100);
  const [custom, setCustom] = useState<string | null>(null);
  const [customTouched, setCustomTouched] = useState(false);
  const [submitted, setSubmitted] = useState(false);
  const [chosenMethod, setMethod] = useState<PaymentMethod | null>(null);
  const [redirecting, setRedirecting] = useState(false);
  /** The key of the last submission: the same submission retried reuses it, a changed one doesn't. */
  const attempt = useRef<Attempt | null>(null);

  // Back from the gateway through the browser's cache: the page is live again, not redirecting.
  useEffect(() => {
    const onShow = (e: PageTransitionEvent) => e.persisted && setRedirecting(false);
    window.addEventListener('pageshow', onShow);
    return () => window.removeEventListener('pageshow', onShow);
  }, []);

  const available = methods.data ?? [];
  const method = chosenMethod && available.some((m) => m.method === chosenMethod) ? chosenMethod : (available[0]?.method ?? null);

  const amountError = preset !== null ? null : validateYuan(custom);
  const showAmountError = amountError !== null && (submitted || (customTouched && (custom ?? '') !== ''));
  const units = preset !== null ? yuanToUnits(preset) : amountError === null ? (parseYuan(custom)?.units ?? null) : null;

  const submit = () => {
    setSubmitted(true);
    if (amountError !== null || units === null || !method) return;
    const body: CreatePaymentBody = { amount: units, method };
    const fingerprint = JSON.stringify(body);
    if (attempt.current?.fingerprint !== fingerprint) attempt.current = { fingerprint, key: newIdempotencyKey() };
    create.mutate(
      { body, idempotencyKey: attempt.current.key },
      {
        onSuccess: (payment) => {
          attempt.current = null;
          qc.setQueryData(paymentKeys.detail(payment.id), payment);
          if (payment.payUrl) {
            setRedirecting(true);
            window.location.assign(payment.payUrl);
          } else {
            onQr(payment.id);
          }
        },
      },
    );
  };

  const busy = create.isPending || redirecting;

  return (
    <Card data-testid="recharge-form">
      <div className={styles.sectionLabel}>{t('wallet.recharge.amount')}</div>
      <div className={styles.amounts} role="radiogroup" aria-label={t('wallet.recharge.amount')}>
        {PRESET_YUAN.map((yuan) => (
          <button
            key={yuan}
            type="button"
            role="radio"
            aria-checked={preset === yuan}
            className={styles.option}
            disabled={busy}
            onClick={() => {
              setPreset(yuan);
              setCustom(null);
              setCustomTouched(false);
            }}
            data-testid={`recharge-preset-${yuan}`}
          >
            <span className={styles.amountValue}>¥{yuan}</span>
          </button>
        ))}
      </div>
      <Form.Item
        style={{ margin: '16px 0 0', maxWidth: 360 }}
        validateStatus={showAmountError ? 'error' : undefined}
        help={showAmountError && amountError ? t(amountError) : undefined}
        label={t('wallet.recharge.custom')}
        colon={false}
      >
        <InputNumber<string>
          stringMode
          min="0"
          precision={2}
          controls={false}
          value={custom}
          disabled={busy}
          placeholder={t('wallet.recharge.customPlaceholder')}
          prefix="¥"
          suffix={t('wallet.recharge.yuan')}
          style={{ width: '100%' }}
          onFocus={() => setPreset(null)}
          onChange={(v) => {
            setPreset(null);
            setCustom(v);
          }}
          onBlur={() => setCustomTouched(true)}
          onPressEnter={submit}
          data-testid="recharge-custom"
        />
      </Form.Item>

      <div className={styles.sectionLabel} style={{ marginTop: 28 }}>
        {t('wallet.recharge.method')}
      </div>
      {methods.isPending ? (
        <Skeleton.Button active block style={{ height: 64 }} />
      ) : methods.isError ? (
        <Alert
          type="error"
          showIcon
          title={t('wallet.recharge.methodsFailed')}
          description={getErrorMessage(methods.error)}
          action={
            <Button size="small" onClick={() => void methods.refetch()} loading={methods.isFetching}>
              {t('common.retry')}
            </Button>
          }
        />
      ) : available.length === 0 ? (
        <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('wallet.recharge.methodsEmpty')} />
      ) : (
        <div className={styles.methods} role="radiogroup" aria-label={t('wallet.recharge.method')}>
          {available.map((m) => {
            const look = METHOD_LOOK[m.method];
            return (
              <button
                key={m.method}
                type="button"
                role="radio"
                aria-checked={method === m.method}
                className={`${styles.option} ${styles.method}`}
                disabled={busy}
                onClick={() => setMethod(m.method)}
                data-testid={`recharge-method-${m.method}`}
              >
                <span className={styles.methodIcon} style={{ color: look?.color, background: `color-mix(in srgb, ${look?.color ?? '#999'} 10%, #fff)` }}>
                  {look?.icon}
                </span>
                <span style={{ minWidth: 0 }}>
                  <div className={styles.methodName}>{t(`wallet.methods.${m.method}`)}</div>
                  <div className={styles.methodHint}>{t(`wallet.methodHints.${m.method}`)}</div>
                </span>
              </button>
            );
          })}
        </div>
      )}

      {create.isError && (
        <Alert type="error" showIcon style={{ marginTop: 20 }} title={t('wallet.recharge.createFailed')} description={getErrorMessage(create.error)} data-testid="recharge-error" />
      )}

      <div className={styles.payBar} style={{ marginTop: 28, paddingTop: 20, borderTop: '1px solid #f0f0f0' }}>
        <div>
          <Typography.Text type="secondary">{t('wallet.recharge.payable')}</Typography.Text>
          <div className={styles.payable} style={units === null ? { color: '#cbd5e1' } : undefined} data-testid="recharge-payable">
            {units !== null ? formatMoney(units) : '¥ --'}
          </div>
        </div>
        <Flex vertical align="end" gap={6}>
          <Button type="primary" size="large" style={{ minWidth: 180 }} loading={busy} disabled={!method} onClick={submit} data-testid="recharge-submit">
            {redirecting ? t('wallet.recharge.redirecting') : create.isPending ? t('wallet.recharge.submitting') : t('wallet.recharge.submit')}
          </Button>
          <Typography.Text type="secondary" style={{ fontSize: 12 }}>
            {t('wallet.recharge.agreement')}
          </Typography.Text>
        </Flex>
      </div>
    </Card>
  );
}

/** /recharge/index: balance, amount, payment method, then the gateway's page or a QR code to scan. */
export function RechargePage() {
  const { t } = useT();
  const [params, setParams] = useSearchParams();
  // An open QR payment lives in the address, so a reload keeps waiting for it.
  const qrId = params.get('pay');

  return (
    <div className={styles.page} data-testid="recharge-page">
      <div className={styles.container}>
        <div className={styles.head}>
          <h1>{t('wallet.recharge.title')}</h1>
          <p>{t('wallet.recharge.subtitle')}</p>
        </div>
        <Row gutter={[20, 20]}>
          <Col xs={24} lg={16}>
            <Flex vertical gap={20}>
              <BalanceCard />
              {qrId ? <QrPayment id={qrId} onCancel={() => setParams({}, { replace: true })} /> : <RechargeForm onQr={(id) => setParams({ pay: id })} />}
            </Flex>
          </Col>
          <Col xs={24} lg={8}>
            <RulesCard />
          </Col>
        </Row>
      </div>
    </div>
  );
}
