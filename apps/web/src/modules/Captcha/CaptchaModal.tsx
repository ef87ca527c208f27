import { useCallback, useEffect, useRef, useState, type ComponentType, type ReactNode } from 'react';
import { Button, Flex, Modal, Result, Skeleton } from 'antd';
import { useQuery } from '@tanstack/react-query';
import type { CaptchaAnswer, CaptchaTrack } from '@suanli/contract/captcha';
import type { CaptchaType } from '@suanli/contract/tenant';
import { captchaChallengeQuery, useCheckCaptcha } from '../../api/queries/captcha.ts';
import { getErrorMessage } from '../../api/errors.ts';
import { useT } from '../../locales/i18n.ts';
import { ClickCaptcha } from './ClickCaptcha.tsx';
import { DragCaptcha } from './DragCaptcha.tsx';
import { RotateCaptcha } from './RotateCaptcha.tsx';
import { SlideCaptcha } from './SlideCaptcha.tsx';
import type { CaptchaStatus, CaptchaViewProps } from './types.ts';

const views: Record<CaptchaType, ComponentType<CaptchaViewProps>> = {
  click: ClickCaptcha,
  slide: SlideCaptcha,
  rotate: RotateCaptcha,
  drag: DragCaptcha,
};

/** SPEC §9 default sizes, for the placeholder while the first challenge loads. */
const placeholder: Record<CaptchaType, { width: number; height: number }> = {
  click: { width: 300, height: 220 },
  slide: { width: 300, height: 220 },
  rotate: { width: 220, height: 220 },
  drag: { width: 300, height: 220 },
};

/** Long enough to see the outcome, short enough not to feel like waiting. */
const SUCCESS_DELAY_MS = 600;
const FAILURE_DELAY_MS = 1000;

export type CaptchaModalProps = {
  open: boolean;
  type: CaptchaType;
  /** A challenge was solved: the one-use ticket for send-code or sign-in. */
  onSuccess(ticket: string): void;
  onCancel(): void;
};

/**
 * Fetches a challenge of `type` when opened and shows its view. A wrong answer shows the server's
 * message, then a new challenge replaces it (each challenge allows one check); a right one shows
 * success and hands the ticket to onSuccess.
 */
export function CaptchaModal({ open, type, onSuccess, onCancel }: CaptchaModalProps) {
  const { t } = useT();
  const query = useQuery({ ...captchaChallengeQuery(type), enabled: open });
  const check = useCheckCaptcha();
  const [status, setStatus] = useState<CaptchaStatus>('idle');
  const [message, setMessage] = useState<string>();
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const latestSuccess = useRef(onSuccess);
  useEffect(() => {
    latestSuccess.current = onSuccess;
  });

  const clearTimer = () => clearTimeout(timer.current);
  useEffect(() => clearTimer, []);

  const { refetch } = query;
  const refresh = useCallback(() => {
    clearTimer();
    setStatus('idle');
    setMessage(undefined);
    void refetch();
  }, [refetch]);

  // Each opening starts clean: a closed modal's pending outcome must not fire later.
  useEffect(() => {
    if (open) return;
    clearTimer();
    setStatus('idle');
    setMessage(undefined);
  }, [open]);

  const data = query.data;
  const onCheck = (answer: CaptchaAnswer, track: CaptchaTrack) => {
    if (!data || status !== 'idle') return;
    setStatus('checking');
    check.mutate(
      { key: data.key, answer, track },
      {
        onSuccess: ({ ticket }) => {
          setStatus('success');
          timer.current = setTimeout(() => latestSuccess.current(ticket), SUCCESS_DELAY_MS);
        },
        onError: (err) => {
          setStatus('fail');
          setMessage(getErrorMessage(err));
          timer.current = setTimeout(refresh, FAILURE_DELAY_MS);
        },
      },
    );
  };

  const View = views[type];
  const size = data ?? placeholder[type];
  let body: ReactNode;
  if (data && data.type === type) {
    // Keyed by challenge: a new one starts with the slider, piece and clicks reset.
    body = <View key={data.key} data={data} status={status} message={message} loading={query.isFetching} onCheck={onCheck} onRefresh={refresh} />;
  } else if (query.isError && !query.isFetching) {
    body = (
      <Result
        status="warning"
        subTitle={getErrorMessage(query.error) || t('captcha.loadFailed')}
        extra={
          <Button type="primary" data-testid="captcha-refresh" onClick={refresh}>
            {t('captcha.reload')}
          </Button>
        }
      />
    );
  } else {
    body = (
      <Flex vertical gap={8} style={{ width: size.width, maxWidth: '100%', margin: '0 auto' }}>
        <Skeleton.Input active size="small" style={{ width: 180 }} />
        <Skeleton.Node active style={{ width: '100%', height: 'auto', aspectRatio: `${size.width} / ${size.height}` }} />
      </Flex>
    );
  }

  return (
    <Modal open={open} title={t('captcha.modalTitle')} footer={null} onCancel={onCancel} destroyOnHidden centered mask={{ closable: false }} width={Math.max(size.width, 300) + 48}>
      <div data-testid="captcha-modal" data-type={type} data-status={status}>
        {body}
      </div>
    </Modal>
  );
}
