import { z } from 'zod';
import { captchaType } from './tenant.ts';

/** SPEC §3 captcha data, plus the challenge key the answer is checked against. */
export const captchaChallenge = z.object({
  key: z.string(),
  type: captchaType,
  image: z.string(),
  thumb: z.string(),
  thumbX: z.number(),
  thumbY: z.number(),
  thumbWidth: z.number(),
  thumbHeight: z.number(),
  angle: z.number(),
  /** Click type: the characters to click, in order (shown to the user as text). */
  words: z.array(z.string()).optional(),
  width: z.number().int(),
  height: z.number().int(),
  expiresAt: z.string(),
});
export type CaptchaChallenge = z.infer<typeof captchaChallenge>;

export const clickPoint = z.object({ index: z.number().int().min(0).max(9), x: z.number(), y: z.number() });

export const captchaAnswer = z.union([
  z.strictObject({ points: z.array(clickPoint).min(1).max(10) }),
  z.strictObject({ x: z.number(), y: z.number() }),
  z.strictObject({ angle: z.number() }),
]);

export const captchaCheckBody = z.strictObject({
  key: z.string({ error: '缺少验证码标识' }).min(8).max(64),
  answer: captchaAnswer,
});
export type CaptchaCheckBody = z.infer<typeof captchaCheckBody>;

/** A one-use proof that a captcha was solved, spent by send-code or sign-in. */
export const captchaTicket = z.object({ ticket: z.string() });
