import { Alert, Card } from 'antd';
import { useT } from '../../../locales/i18n.ts';
import { PeriodOrderForm } from './PeriodOrderForm.tsx';
import { BackResult, OpsHead, WithInstance } from './ops-shared.tsx';

/** /center/control/changeContract?instanceId=: pay-as-you-go → prepaid, the term from now. */
export function ChangeContractPage() {
  const { t } = useT();
  return (
    <div data-testid="change-contract-page">
      <OpsHead title={t('ops.changeContract.title')} subtitle={t('ops.changeContract.subtitle')} />
      <WithInstance>
        {(inst) =>
          inst.chargeType !== 'payg' ? (
            <Card>
              <BackResult status="info" title={t('ops.changeContract.notPayg')} testId="change-contract-not-payg" />
            </Card>
          ) : (
            <PeriodOrderForm
              inst={inst}
              kind="prepay"
              testPrefix="change-contract"
              submitLabel={t('ops.changeContract.submit')}
              notice={<Alert type="info" showIcon title={inst.status === 'running' ? t('ops.changeContract.runningHint') : t('ops.changeContract.stoppedHint')} />}
            />
          )
        }
      </WithInstance>
    </div>
  );
}
