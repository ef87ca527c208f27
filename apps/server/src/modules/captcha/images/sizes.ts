import type { CaptchaChallenge } from '@suanli/contract/captcha';

/** SPEC §9 defaults (300×220 image, 220 rotate image, 150×40 thumbnail) and the piece sizes. */
export const CaptchaSize = {
  width: 300,
  height: 220,
  rotate: 220,
  thumbWidth: 150,
  thumbHeight: 40,
  /** Slide/drag piece box, knobs included (the box margin is transparent). */
  piece: 60,
  /** Rotate: diameter of the round image the user turns. */
  rotateDisk: 140,
} as const;

/** What a renderer hands back to the wire: the challenge without key, type and expiry. */
export type ChallengeView = Omit<CaptchaChallenge, 'key' | 'type' | 'expiresAt'>;
