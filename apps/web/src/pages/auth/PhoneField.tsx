import { Form, Input } from 'antd';
import { MobileOutlined } from '@ant-design/icons';
import { useT } from '../../locales/i18n.ts';
import { CHANGE_AND_BLUR, phoneRules } from './rules.ts';

/** The muted colour of the icons inside the sign-in forms' inputs. */
export const iconStyle = { color: 'rgba(0,0,0,.35)' };

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
