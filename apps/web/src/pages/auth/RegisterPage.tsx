import { useState } from 'react';
import { Button, Checkbox, Form, Input } from 'antd';
import { useFeedback } from '../../modules/feedback.ts';
import { LockOutlined, UserOutlined } from '@ant-design/icons';
import { useLocation, useNavigate } from 'react-router';
import { useRegister } from '../../api/queries/user.ts';
import { getErrorMessage } from '../../api/errors.ts';
import { afterLoginPath } from '../../guards.ts';
import { useT } from '../../locales/i18n.ts';
import { AgreementModal, type AgreementKind } from './AgreementModal.tsx';
import { AuthLayout } from './AuthLayout.tsx';
import { FormErrorAlert, iconStyle, PhoneField, SmsCodeField, type FormError } from './AuthFields.tsx';
import { confirmRules, newPasswordRules, userNameRules } from './rules.ts';

type Values = { phone: string; code: string; password: string; confirm: string; userName?: string; agree: boolean };


/** /register: phone + SMS code + password (PRODUCT.md "Accounts"); signs the new user in. */
export function RegisterPage() {
  const { t } = useT();
  const { message } = useFeedback();
  const navigate = useNavigate();
  const location = useLocation();
  const [form] = Form.useForm<Values>();
  const register = useRegister();
  const [error, setError] = useState<FormError>(null);
  const [reading, setReading] = useState<AgreementKind | null>(null);

  async function submit(values: Values) {
    setError(null);
    try {
      const userName = values.userName?.trim();
      await register.mutateAsync({ phone: values.phone.trim(), code: values.code.trim(), password: values.password, ...(userName ? { userName } : {}) });
      void message.success(t('auth.register.success'));
      navigate(afterLoginPath(location.search), { replace: true });
    } catch (err) {
      setError({ title: t('auth.register.failedTitle'), message: getErrorMessage(err) });
    }
  }

  const docLink = (kind: AgreementKind) => (
    <a
      href="#"
      style={{ color: 'var(--brand)' }}
      onClick={(e) => {
        e.preventDefault();
        setReading(kind);
      }}
      data-testid={`register-read-${kind}`}
    >
      {t(`auth.register.${kind}`)}
    </a>
  );

  return (
    <AuthLayout page="register">
      <Form form={form} size="large" requiredMark={false} onFinish={(v) => void submit(v)} initialValues={{ agree: false }}>
        <FormErrorAlert error={error} testId="register-error" />
        <PhoneField testId="register-phone" />
        <SmsCodeField purpose="register" testIdPrefix="register" onError={setError} />
        <Form.Item name="password" rules={newPasswordRules()} hasFeedback>
          <Input.Password
            prefix={<LockOutlined style={iconStyle} />}
            maxLength={64}
            autoComplete="new-password"
            placeholder={t('auth.field.newPasswordPlaceholder')}
            aria-label={t('auth.field.password')}
            data-testid="register-password"
          />
        </Form.Item>
        <Form.Item name="confirm" dependencies={['password']} rules={confirmRules('password')} hasFeedback>
          <Input.Password
            prefix={<LockOutlined style={iconStyle} />}
            maxLength={64}
            autoComplete="new-password"
            placeholder={t('auth.field.confirmPlaceholder')}
            aria-label={t('auth.field.confirm')}
            data-testid="register-confirm"
          />
        </Form.Item>
        <Form.Item name="userName" rules={userNameRules()}>
          <Input
            prefix={<UserOutlined style={iconStyle} />}
            maxLength={32}
            autoComplete="nickname"
            placeholder={t('auth.field.userNamePlaceholder')}
            aria-label={t('auth.field.userName')}
            data-testid="register-username"
          />
        </Form.Item>
        <Form.Item
          name="agree"
          valuePropName="checked"
          style={{ marginBottom: 16 }}
          rules={[{ validator: (_r, v: boolean) => (v ? Promise.resolve() : Promise.reject(new Error(t('auth.register.agreeRequired')))) }]}
        >
          <Checkbox data-testid="register-agree">
            {t('auth.register.agreePrefix')}
            {docLink('agreement')}
            {t('auth.register.and')}
            {docLink('privacy')}
          </Checkbox>
        </Form.Item>
        <Form.Item style={{ marginBottom: 12 }}>
          <Button type="primary" htmlType="submit" block loading={register.isPending} data-testid="register-submit">
            {t('auth.register.submit')}
          </Button>
        </Form.Item>
      </Form>
      <AgreementModal
        kind={reading}
        onClose={() => setReading(null)}
        onAgree={() => {
          form.setFieldValue('agree', true);
          void form.validateFields(['agree']).catch(() => undefined);
        }}
      />
    </AuthLayout>
  );
}
