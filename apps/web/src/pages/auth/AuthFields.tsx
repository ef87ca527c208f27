import { Form, Input } from 'antd';
import { MobileOutlined } from '@ant-design/icons';
import { useT } from '../../locales/i18n.ts';
import type { SmsPurpose } from '@suanli/contract/user';
import { CHANGE_AND_BLUR, phoneRules, smsCodeRules } from './rules.ts';
import { SmsCodeInput } from './SmsCodeInput.tsx';
import { iconStyle, type FormError } from './AuthAlert.tsx';

// The alert and the icon colour live in AuthAlert.tsx (the sign-in page uses them without antd Form).
export { FormErrorAlert, iconStyle, type FormError } from './AuthAlert.tsx';

/** The `phone` field of every sign-in form: mainland mobile, validated as the server does. */
export function PhoneField({ testId, withLabel = false }: { testId: string; withLabel?: boolean }) {
  const { t } = useT();
  return (
    <Form.Item name="phone" label={withLabel ? t('auth.field.phone') : undefined} rules={phoneRules()} validateTrigger={CHANGE_AND_BLUR}>
      <Input
        prefix={<MobileOutlined style={iconStyle} />}
        maxLength={11}
        inputMode="numeric"
        autoComplete="tel"
        placeholder={t('auth.field.phonePlaceholder')}
        aria-label={withLabel ? undefined : t('auth.field.phone')}
        data-testid={testId}
      />
    </Form.Item>
  );
}

/**
 * The `code` field with its 获取验证码 button; a failure to send lands in the form's error
 * alert under the common "couldn't send the code" title.
 */
export function SmsCodeField(props: { purpose: SmsPurpose; testIdPrefix: string; withLabel?: boolean; size?: 'middle' | 'large'; onError: (error: FormError) => void }) {
  const { t } = useT();
  return (
    <Form.Item name="code" label={props.withLabel ? t('auth.field.code') : undefined} rules={smsCodeRules()} validateTrigger={CHANGE_AND_BLUR}>
      <SmsCodeInput
        purpose={props.purpose}
        testIdPrefix={props.testIdPrefix}
        size={props.size}
        onError={(message) => props.onError(message ? { title: t('auth.sms.failedTitle'), message } : null)}
      />
    </Form.Item>
  );
}
