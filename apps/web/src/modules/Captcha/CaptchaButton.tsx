import { useEffect, useRef, useState } from 'react';
import { Button } from 'antd';
import { CheckCircleFilled, SafetyCertificateOutlined } from '@ant-design/icons';
import type { CaptchaType } from '@suanli/contract/tenant';
import { AccountRules } from '@suanli/domain/account-rules';
import { useT } from '../../locales/i18n.ts';
import { CaptchaModal } from './CaptchaModal.tsx';

export type CaptchaButtonProps = {
  type: CaptchaType;
  /** The ticket of a solved captcha, or null when there is none (again). */
  onTicket(ticket: string | null): void;
  disabled?: boolean;
};

/**
 * SPEC §9 「点击按钮进行验证」: opens the captcha and turns into 「验证成功」 once solved. A ticket
 * lives as long as a challenge, so the button returns to its first state when it runs out; clicking
 * it again starts over. Remount it (a new `key`) after the ticket is spent to ask again.
 */
export function CaptchaButton({ type, onTicket, disabled }: CaptchaButtonProps) {
  const { t } = useT();
  const [open, setOpen] = useState(false);
  const [verified, setVerified] = useState(false);
  const expiry = useRef<ReturnType<typeof setTimeout>>(undefined);
  const latestOnTicket = useRef(onTicket);
  useEffect(() => {
    latestOnTicket.current = onTicket;
  });
  useEffect(() => () => clearTimeout(expiry.current), []);

  const start = () => {
    if (verified) {
      clearTimeout(expiry.current);
      setVerified(false);
      onTicket(null);
    }
    setOpen(true);
  };

  const solved = (ticket: string) => {
    setOpen(false);
    setVerified(true);
    onTicket(ticket);
    expiry.current = setTimeout(() => {
      setVerified(false);
      latestOnTicket.current(null);
    }, AccountRules.captchaTtlSeconds * 1000);
  };

  return (
    <>
      <Button
        block
        data-testid="captcha-button"
        data-verified={verified}
        disabled={disabled}
        onClick={start}
        icon={verified ? <CheckCircleFilled /> : <SafetyCertificateOutlined />}
        color={verified ? 'green' : 'primary'}
        variant={verified ? 'filled' : 'outlined'}
      >
        {verified ? t('captcha.verified') : t('captcha.buttonText')}
      </Button>
      <CaptchaModal open={open} type={type} onSuccess={solved} onCancel={() => setOpen(false)} />
    </>
  );
}
