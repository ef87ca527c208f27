import { lazy, Suspense, useCallback, useEffect, useRef, useState } from 'react';
import { useTenant } from '../../modules/tenant.tsx';

/** What `ask()` yields: a solved challenge's ticket (none when captchas are off), or null if closed. */
// Loaded when a captcha is first needed: most visits to the sign-in page never need one.
const CaptchaModal = lazy(() => import('../../modules/Captcha/CaptchaModal.tsx').then((m) => ({ default: m.CaptchaModal })));

export type CaptchaPass = { ticket?: string } | null;

/**
 * The tenant's captcha as a promise: `ask()` opens the modal and resolves with the ticket of a
 * solved challenge, or null when the user closes it. With captchas off on the server it resolves
 * at once with no ticket. Render `modal` once in the component.
 */
export function useCaptchaGate() {
  const { config } = useTenant();
  const [open, setOpen] = useState(false);
  const [used, setUsed] = useState(false);
  const pending = useRef<((pass: CaptchaPass) => void) | null>(null);

  const settle = useCallback((pass: CaptchaPass) => {
    setOpen(false);
    const resolve = pending.current;
    pending.current = null;
    resolve?.(pass);
  }, []);

  const enabled = config.captchaEnabled;
  const ask = useCallback(
    () =>
      new Promise<CaptchaPass>((resolve) => {
        if (!enabled) return resolve({});
        pending.current?.(null);
        pending.current = resolve;
        setUsed(true);
        setOpen(true);
      }),
    [enabled],
  );

  // A form that unmounts mid-captcha must not leave its caller waiting forever.
  useEffect(() => () => pending.current?.(null), []);

  const modal = used ? (
    <Suspense fallback={null}>
      <CaptchaModal open={open} type={config.captchaType} onSuccess={(ticket) => settle({ ticket })} onCancel={() => settle(null)} />
    </Suspense>
  ) : null;
  return { ask, modal };
}
