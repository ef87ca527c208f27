import { useState } from 'react';
import { Alert, Button, Card, Form, Input, Typography } from 'antd';
import { useFeedback } from '../../../modules/feedback.ts';
import { useChangePassword } from '../../../api/queries/user.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { useT } from '../../../locales/i18n.ts';
import { confirmRules, newPasswordRules } from '../../auth/rules.ts';
import { confirmAsync } from './confirm.ts';

type Values = { oldPassword: string; newPassword: string; confirm: string };
type Outcome = { ok: true } | { ok: false; message: string } | null;

/** PUT /api/v1/user/password; the server signs every other device out, so the user is told. */
export function ChangePasswordCard() {
  const { t } = useT();
  const { modal } = useFeedback();
  const [form] = Form.useForm<Values>();
  const change = useChangePassword();
  const [outcome, setOutcome] = useState<Outcome>(null);

  async function submit(values: Values) {
    setOutcome(null);
    if (!(await confirmAsync(modal, { title: t('safe.password.confirmTitle'), content: t('safe.password.confirmContent') }))) return;
    try {
      await change.mutateAsync({ oldPassword: values.oldPassword, newPassword: values.newPassword });
      form.resetFields();
      setOutcome({ ok: true });
    } catch (err) {
      setOutcome({ ok: false, message: getErrorMessage(err) });
    }
  }

  return (
    <Card title={t('safe.password.title')} style={{ height: '100%' }} data-testid="safe-password">
      <Typography.Paragraph type="secondary">{t('safe.password.desc')}</Typography.Paragraph>
      {outcome?.ok === true && (
        <Alert type="success" showIcon title={t('safe.password.success')} description={t('safe.password.successDesc')} closable={{ onClose: () => setOutcome(null) }} style={{ marginBottom: 16 }} data-testid="safe-password-success" />
      )}
      {outcome?.ok === false && <Alert type="error" showIcon title={t('safe.password.failedTitle')} description={outcome.message} style={{ marginBottom: 16 }} data-testid="safe-password-error" />}
      <Form form={form} layout="vertical" requiredMark={false} onFinish={(v) => void submit(v)} style={{ maxWidth: 420 }}>
        <Form.Item name="oldPassword" label={t('safe.password.old')} rules={[{ required: true, message: t('safe.password.oldRequired') }]}>
          <Input.Password autoComplete="current-password" maxLength={64} placeholder={t('safe.password.oldPlaceholder')} data-testid="safe-old-password" />
        </Form.Item>
        <Form.Item
          name="newPassword"
          label={t('safe.password.new')}
          dependencies={['oldPassword']}
          hasFeedback
          rules={[
            ...newPasswordRules(),
            ({ getFieldValue }) => ({
              validator: (_r, v: unknown) => (!v || v !== getFieldValue('oldPassword') ? Promise.resolve() : Promise.reject(new Error(t('safe.password.sameAsOld')))),
            }),
          ]}
        >
          <Input.Password autoComplete="new-password" maxLength={64} placeholder={t('auth.field.newPasswordPlaceholder')} data-testid="safe-new-password" />
        </Form.Item>
        <Form.Item name="confirm" label={t('safe.password.confirm')} dependencies={['newPassword']} hasFeedback rules={confirmRules('newPassword')}>
          <Input.Password autoComplete="new-password" maxLength={64} placeholder={t('auth.field.confirmPlaceholder')} data-testid="safe-confirm-password" />
        </Form.Item>
        <Form.Item style={{ marginBottom: 0 }}>
          <Button type="primary" htmlType="submit" loading={change.isPending} data-testid="safe-password-submit">
            {t('safe.password.submit')}
          </Button>
        </Form.Item>
      </Form>
    </Card>
  );
}
