import { z } from 'zod';
import { captchaType } from './tenant.ts';

/**
 * SPEC §3 captcha data, plus the challenge key the answer is checked against. Coordinates are in
 * image pixels (width × height). thumbX/thumbY place the thumb's top-left where it starts (slide:
 * x 0 on the hole's row; drag: a random spot; rotate: the disk's box; click: 0, the thumb is the
 * 150×40 strip of characters to click). `angle` is the rotate thumb's starting turn: always 0, the
 * secret turn is baked into the thumb image.
 */
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

/**
 * click: the points clicked, index = click order from 0; slide/drag: where the piece's top-left
 * was dropped; rotate: the clockwise turn in degrees the user applied to the thumb.
 */
export const captchaAnswer = z.union([
  z.strictObject({ points: z.array(clickPoint).min(1).max(10) }),
  z.strictObject({ x: z.number(), y: z.number() }),
  z.strictObject({ angle: z.number() }),
], { error: '验证答案格式不正确' });
export type CaptchaAnswer = z.infer<typeof captchaAnswer>;

/**
 * What the widget recorded while the user answered, as [t, a, b] samples: t in milliseconds
 * (slide, drag, rotate: since the press; click: since the challenge was shown), then slide/drag:
 * the piece's top-left (x, y) in image pixels; rotate: the turn in degrees and 0; click: each click
 * (x, y), in click order. The server checks it is a plausible human record ending at the answer.
 */
export const captchaTrack = z
  .array(z.tuple([z.number(), z.number(), z.number()]), { error: '验证轨迹格式不正确，请刷新后重试' })
  .max(600, { error: '验证轨迹过长，请刷新后重试' });
export type CaptchaTrack = z.infer<typeof captchaTrack>;

export const captchaCheckBody = z.strictObject({
  key: z.string({ error: '验证码标识缺失或格式不正确' }).min(8, { error: '验证码标识格式不正确' }).max(64, { error: '验证码标识格式不正确' }),
  answer: captchaAnswer,
  track: captchaTrack,
});
export type CaptchaCheckBody = z.infer<typeof captchaCheckBody>;

/** A one-use proof that a captcha was solved, spent by send-code or sign-in. */
export const captchaTicket = z.object({ ticket: z.string() });
export type CaptchaTicket = z.infer<typeof captchaTicket>;
