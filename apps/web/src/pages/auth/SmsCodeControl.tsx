import { useRef, useState, type Ref } from 'react';
import { Button, Space } from 'antd';
import Input, { type InputRef } from 'antd/es/input/Input';
import { useFeedback } from '../../modules/feedback.ts';
import { SafetyCertificateOutlined } from '@ant-design/icons';
import type { SmsPurpose } from '@suanli/contract/user';
import { ErrorReason } from '@suanli/contract/errors';
import { useSendCode } from '../../api/queries/user.ts';
import { toApiError } from '../../api/errors.ts';
import { useT } from '../../locales/i18n.ts';
import { useCaptchaGate } from './useCaptchaGate.tsx';
import { useSmsCountdown } from './useSmsCountdown.ts';

export type SmsCodeControlProps = {
  purpose: SmsPurpose;
  /** The phone typed so far (trimmed): the countdown is per phone. */
  phone: string;
  /** Checks the phone field (showing why it fails); the phone to send to, or null. */
  checkPhone: () => Promise<string | null> | string | null;
  /** `${prefix}-code` on the input, `${prefix}-send-code` on the button. */
  testIdPrefix: string;
  /** A send failure for the form's inline alert; null clears it. */
  onError: (message: string | null) => void;
  size?: 'large' | 'middle';
  placeholder?: string;
  /** The shield icon in the input; off where the form's other inputs have no icons. */
  prefixIcon?: boolean;
  id?: string;
  value?: string;
  onChange?: (value: string) => void;
  onBlur?: () => void;
  status?: 'error';
  inputRef?: Ref<InputRef>;
  'aria-invalid'?: boolean;
  'aria-describedby'?: string;
};

/**
 * SMS code input with its 「获取验证码」 button: checks the phone, has the user solve the
 * tenant's captcha (PRODUCT.md: a captcha before every code), sends the code with the ticket,
 * then counts down to the next allowed send for that phone. Needs no antd Form (the sign-in page
 * loads none); `SmsCodeInput` binds it to one.
 */
export function SmsCodeControl({ purpose, phone: typedPhone, checkPhone, testIdPrefix, onError, size = 'large', placeholder, prefixIcon = true, id, value, onChange, onBlur, status, inputRef, ...aria }: SmsCodeControlProps) {
  const { t } = useT();
  const { message } = useFeedback();
  const sendCode = useSendCode();
  const captcha = useCaptchaGate();
  const { remaining, start } = useSmsCountdown(typedPhone);
  const [busy, setBusy] = useState(false);
  const input = useRef<InputRef>(null);

  async function send() {
    const phone = await checkPhone();
    if (phone === null) return; // the phone field shows why
    onError(null);
    setBusy(true);
    try {
      // A ticket can expire between solving and sending; then one more challenge, not a loop.
      for (let round = 0; round < 2; round++) {
        const pass = await captcha.ask();
        if (!pass) return;
        try {
          const res = await sendCode.mutateAsync({ phone, purpose, captchaTicket: pass.ticket });
          start(phone, res.retryAfterSeconds);
          void message.success(t('auth.sms.sent'));
          input.current?.focus();
          return;
        } catch (err) {
          const error = toApiError(err);
          if (error.reason === ErrorReason.CaptchaRequired && round === 0) continue;
          onError(error.message);
          return;
        }
      }
    } finally {
      setBusy(false);
    }
  }

  const waiting = remaining > 0;
  return (
    <>
      <Space.Compact style={{ width: '100%' }}>
        <Input
          ref={(el) => {
            input.current = el;
            if (typeof inputRef === 'function') inputRef(el);
            else if (inputRef) inputRef.current = el;
          }}
          id={id}
          size={size}
          value={value}
          status={status}
          onChange={(e) => onChange?.(e.target.value.replace(/\D/g, '').slice(0, 6))}
          onBlur={onBlur}
          maxLength={6}
          inputMode="numeric"
          autoComplete="one-time-code"
          prefix={prefixIcon ? <SafetyCertificateOutlined style={{ color: 'rgba(0,0,0,.35)' }} /> : undefined}
          placeholder={placeholder ?? t('auth.field.codePlaceholder')}
          aria-label={t('auth.field.code')}
          {...aria}
          data-testid={`${testIdPrefix}-code`}
        />
        <Button
          size={size}
          onClick={() => void send()}
          loading={sendCode.isPending}
          disabled={waiting || (busy && !sendCode.isPending)}
          style={{ minWidth: 140 }}
          data-testid={`${testIdPrefix}-send-code`}
        >
          {waiting ? t('auth.sms.resend', { seconds: remaining }) : t('auth.sms.send')}
        </Button>
      </Space.Compact>
      {captcha.modal}
    </>
  );
}
