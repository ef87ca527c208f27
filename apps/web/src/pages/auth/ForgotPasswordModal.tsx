import { useState } from 'react';
import { Alert, Form, Input, Modal, Typography } from 'antd';
import { useFeedback } from '../../modules/feedback.ts';
import { LockOutlined } from '@ant-design/icons';
import { useFindPassword } from '../../api/queries/user.ts';
import { getErrorMessage } from '../../api/errors.ts';
import { useT } from '../../locales/i18n.ts';
import { iconStyle, PhoneField, SmsCodeField } from './AuthFields.tsx';
import { confirmRules, newPasswordRules } from './rules.ts';

type Values = { phone: string; code: string; password: string; confirm: string };


/** 忘记密码: PUT /user/password/find with an SMS code of purpose 'reset'. */
export function ForgotPasswordModal({ open, initialPhone, onClose, onDone }: { open: boolean; initialPhone?: string; onClose: () => void; onDone: (phone: string) => void }) {
  const { t } = useT();
  const { message } = useFeedback();
  const [form] = Form.useForm<Values>();
  const findPassword = useFindPassword();
  const [error, setError] = useState<{ title: string; message: string } | null>(null);

  async function submit(values: Values) {
    setError(null);
    try {
      await findPassword.mutateAsync({ phone: values.phone.trim(), code: values.code.trim(), password: values.password });
      void message.success(t('auth.forgot.success'));
      onDone(values.phone.trim());
    } catch (err) {
      setError({ title: t('auth.forgot.failedTitle'), message: getErrorMessage(err) });
    }
  }

  return (
    <Modal
      open={open}
      title={t('auth.forgot.title')}
      onCancel={onClose}
      onOk={() => form.submit()}
      okText={t('auth.forgot.submit')}
      okButtonProps={{ loading: findPassword.isPending }}
      cancelText={t('common.cancel')}
      destroyOnHidden
      afterOpenChange={(visible) => !visible && setError(null)}
      width={460}
    >
      <Typography.Paragraph type="secondary">{t('auth.forgot.desc')}</Typography.Paragraph>
      {error && <Alert type="error" showIcon title={error.title} description={error.message} style={{ marginBottom: 16 }} data-testid="forgot-error" />}
      <Form form={form} layout="vertical" requiredMark={false} onFinish={(v) => void submit(v)} initialValues={{ phone: initialPhone }} preserve={false}>
        <PhoneField testId="forgot-phone" withLabel />
        <SmsCodeField purpose="reset" testIdPrefix="forgot" withLabel size="middle" onError={setError} />
        <Form.Item name="password" label={t('auth.forgot.newPassword')} rules={newPasswordRules()} hasFeedback>
          <Input.Password prefix={<LockOutlined style={iconStyle} />} autoComplete="new-password" placeholder={t('auth.field.newPasswordPlaceholder')} data-testid="forgot-password" />
        </Form.Item>
        <Form.Item name="confirm" label={t('auth.field.confirm')} dependencies={['password']} rules={confirmRules('password')} hasFeedback>
          <Input.Password prefix={<LockOutlined style={iconStyle} />} autoComplete="new-password" placeholder={t('auth.field.confirmPlaceholder')} data-testid="forgot-confirm" />
        </Form.Item>
      </Form>
    </Modal>
  );
}
