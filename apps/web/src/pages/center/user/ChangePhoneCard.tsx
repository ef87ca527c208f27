import { useState } from 'react';
import { Alert, Button, Card, Form, Input, Typography } from 'antd';
import { useFeedback } from '../../../modules/feedback.ts';
import { maskPhone } from '@suanli/domain/account-rules';
import { useChangePhone } from '../../../api/queries/user.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { useT } from '../../../locales/i18n.ts';
import { SmsCodeInput } from '../../auth/SmsCodeInput.tsx';
import { CHANGE_AND_BLUR, phoneRules, smsCodeRules } from '../../auth/rules.ts';
import { confirmAsync } from './confirm.ts';

type Values = { phone: string; code: string; password: string };

/**
 * PUT /api/v1/user/phoneNumber with a code (purpose 'change_phone') sent to the new number and the
 * current password; the server signs every other device out.
 */
export function ChangePhoneCard({ currentPhone }: { currentPhone: string }) {
  const { t } = useT();
  const { modal, message } = useFeedback();
  const [form] = Form.useForm<Values>();
  const change = useChangePhone();
  const [error, setError] = useState<{ title: string; message: string } | null>(null);

  async function submit(values: Values) {
    setError(null);
    const phone = values.phone.trim();
    if (!(await confirmAsync(modal, { title: t('safe.phone.confirmTitle'), content: t('safe.phone.confirmContent', { phone }) }))) return;
    try {
      await change.mutateAsync({ phone, code: values.code.trim(), password: values.password });
      form.resetFields();
      void message.success(t('safe.phone.success', { phone: maskPhone(phone) }));
    } catch (err) {
      setError({ title: t('safe.phone.failedTitle'), message: getErrorMessage(err) });
    }
  }

  return (
    <Card title={t('safe.phone.title')} style={{ height: '100%' }} data-testid="safe-change-phone">
      <Typography.Paragraph type="secondary">{t('safe.phone.desc', { phone: maskPhone(currentPhone) })}</Typography.Paragraph>
      {error && <Alert type="error" showIcon title={error.title} description={error.message} style={{ marginBottom: 16 }} data-testid="safe-phone-error" />}
      <Form form={form} layout="vertical" requiredMark={false} onFinish={(v) => void submit(v)} style={{ maxWidth: 420 }}>
        <Form.Item
          name="phone"
          label={t('safe.phone.newPhone')}
          validateTrigger={CHANGE_AND_BLUR}
          rules={[
            ...phoneRules(),
            { validator: (_r, v: unknown) => (typeof v === 'string' && v.trim() === currentPhone ? Promise.reject(new Error(t('safe.phone.sameAsCurrent'))) : Promise.resolve()) },
          ]}
        >
          <Input maxLength={11} inputMode="numeric" autoComplete="tel" placeholder={t('safe.phone.newPhonePlaceholder')} data-testid="safe-new-phone" />
        </Form.Item>
        <Form.Item name="code" label={t('auth.field.code')} rules={smsCodeRules()} validateTrigger={CHANGE_AND_BLUR}>
          <SmsCodeInput purpose="change_phone" testIdPrefix="safe-phone" size="middle" prefixIcon={false} onError={(message) => setError(message ? { title: t('auth.sms.failedTitle'), message } : null)} />
        </Form.Item>
        <Form.Item name="password" label={t('safe.phone.password')} rules={[{ required: true, message: t('safe.phone.passwordRequired') }]}>
          <Input.Password autoComplete="current-password" maxLength={64} placeholder={t('safe.phone.passwordPlaceholder')} data-testid="safe-phone-password" />
        </Form.Item>
        <Form.Item style={{ marginBottom: 0 }}>
          <Button type="primary" htmlType="submit" loading={change.isPending} data-testid="safe-phone-submit">
            {t('safe.phone.submit')}
          </Button>
        </Form.Item>
      </Form>
    </Card>
  );
}
