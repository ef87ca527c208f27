import { Select, Space, Typography } from 'antd';
import type { ChargeType } from '@suanli/contract/order';
import { useT, type MessageKey } from '../../locales/i18n.ts';

/** A labelled "charge type" filter (pay-as-you-go / prepaid / all) for the instance and bill lists. */
export function ChargeTypeFilter(props: { id: string; label: MessageKey; allLabel: MessageKey; width: number; value: ChargeType | undefined; onChange(v: ChargeType | undefined): void }) {
  const { t } = useT();
  return (
    <Space size={8}>
      <Typography.Text type="secondary" id={props.id}>
        {t(props.label)}
      </Typography.Text>
      <Select<ChargeType>
        aria-labelledby={props.id}
        allowClear
        style={{ width: props.width }}
        placeholder={t(props.allLabel)}
        value={props.value}
        options={[
          { value: 'payg', label: t('compute.chargeTypes.payg') },
          { value: 'prepaid', label: t('compute.chargeTypes.prepaid') },
        ]}
        onChange={props.onChange}
      />
    </Space>
  );
}
