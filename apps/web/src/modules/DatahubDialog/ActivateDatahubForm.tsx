import { Alert, Button, Form, Input, Typography } from 'antd';
import { DATAHUB_NAME_MAX } from '@suanli/domain/datahub';
import type { Datacenter } from '@suanli/contract/datahub';
import { useT } from '../../locales/i18n.ts';

// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

type Props = {
  datacenter: Datacenter;
  pending: boolean;
  onActivate: (name: string) => void;
};

/** The not-activated state: what activation does, a name, and the activate button. */
export function ActivateDatahubForm({ datacenter, pending, onActivate }: Props) {
  const { t } = useT();
  return (
    <Form
      layout="vertical"
      requiredMark={false}
      initialValues={{ name: `datahub-${datacenter.dataCenterId}` }}
      onFinish={(values: { name: string }) => onActivate(values.name.trim())}
      disabled={pending}
    >
      <Typography.Paragraph type="secondary" style={{ marginTop: 16 }}>
        {t('datahub.intro')}
      </Typography.Paragraph>
      <Alert type="info" showIcon title={t('datahub.confirmActivate', { name: datacenter.dataCenterName })} style={{ marginBottom: 16 }} />
      <Form.Item
        name="name"
        label={t('datahub.name')}
        rules={[
          { required: true, whitespace: true, message: t('datahub.nameRequired') },
          { max: DATAHUB_NAME_MAX, message: t('datahub.nameTooLong', { max: DATAHUB_NAME_MAX }) },
          { validator: (_, v: string | undefined) => (v && CONTROL_CHARS.test(v) ? Promise.reject(new Error(t('datahub.nameInvalid'))) : Promise.resolve()) },
        ]}
      >
        <Input placeholder={t('datahub.namePlaceholder')} maxLength={DATAHUB_NAME_MAX} showCount autoComplete="off" data-testid="datahub-name" />
      </Form.Item>
      <Button type="primary" htmlType="submit" block loading={pending} data-testid="datahub-activate">
        {t('datahub.activate')}
      </Button>
    </Form>
  );
}
