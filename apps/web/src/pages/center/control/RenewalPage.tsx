import { Alert, Card } from 'antd';
import { formatDateTime } from '@suanli/domain/format';
import { useT } from '../../../locales/i18n.ts';
import { PeriodOrderForm } from './PeriodOrderForm.tsx';
import { BackResult, OpsHead, WithInstance } from './ops-shared.tsx';

/** /center/control/renewal?instanceId=: a prepaid instance's term extended (also an expired, unreleased one). */
export function RenewalPage() {
  const { t } = useT();
  return (
    <div data-testid="renewal-page">
      <OpsHead title={t('ops.renewal.title')} subtitle={t('ops.renewal.subtitle')} />
      <WithInstance>
        {(inst) => {
          if (inst.chargeType !== 'prepaid')
            return (
              <Card>
                <BackResult status="info" title={t('ops.renewal.notPrepaid')} testId="renewal-not-prepaid" />
              </Card>
            );
          const expired = inst.expiresAt !== null && Date.parse(inst.expiresAt) <= Date.now();
          return (
            <PeriodOrderForm
              inst={inst}
              kind="renewal"
              testPrefix="renewal"
              submitLabel={t('ops.renewal.submit')}
              notice={
                expired || inst.releaseAt ? (
                  <Alert
                    type="warning"
                    showIcon
                    title={expired && inst.expiresAt ? t('ops.renewal.expired', { time: formatDateTime(inst.expiresAt) }) : t('ops.renewal.releaseAt', { time: formatDateTime(inst.releaseAt) })}
                    description={expired && inst.releaseAt ? t('ops.renewal.releaseAt', { time: formatDateTime(inst.releaseAt) }) : undefined}
                    data-testid="renewal-expired"
                  />
                ) : undefined
              }
            />
          );
        }}
      </WithInstance>
    </div>
  );
}
