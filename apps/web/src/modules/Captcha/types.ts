import type { CaptchaAnswer, CaptchaChallenge, CaptchaTrack } from '@suanli/contract/captcha';

/** idle: waiting for the user; checking: answer sent; success/fail: the server's verdict. */
export type CaptchaStatus = 'idle' | 'checking' | 'success' | 'fail';

/** What every captcha view takes; the parent (CaptchaModal) owns fetching and checking. */
export type CaptchaViewProps = {
  data: CaptchaChallenge;
  status: CaptchaStatus;
  /** Shown under the image on failure (the server's message). */
  message?: string;
  /** A new challenge is on its way: the view is shown dimmed and ignores input. */
  loading?: boolean;
  /**
   * Called once with the user's answer and the record of how it was reached (useTrack); the view
   * then waits for `status` to change.
   */
  onCheck(answer: CaptchaAnswer, track: CaptchaTrack): void;
  onRefresh(): void;
};

/** `value` of `total` as a CSS percentage: views position pieces in image pixels and scale with the image. */
export const pct = (value: number, total: number) => `${(value / total) * 100}%`;

export const clamp = (v: number, min: number, max: number) => Math.min(max, Math.max(min, v));
