import { z } from 'zod';
import type { CaptchaAnswer } from '@suanli/contract/captcha';

/** How far off a right answer may be: pointers and fingers are imprecise, bots are precise anyway. */
export const CaptchaTolerance = {
  /** Slide and drag: px per axis between the piece's top-left and the hole's. */
  puzzlePx: 6,
  /** Rotate: degrees either way, on the circle (359° is 2° from 1°). */
  rotateDegrees: 10,
  /** Click: px per axis around each character's centre (characters are 28–36 px). */
  clickPx: 18,
} as const;

const point = z.object({ x: z.number(), y: z.number() });

/** The secret answer kept in captcha_challenges.answer (jsonb), per type. */
export const storedAnswer = z.discriminatedUnion('type', [
  z.object({ type: z.literal('slide'), x: z.number(), y: z.number() }),
  z.object({ type: z.literal('drag'), x: z.number(), y: z.number() }),
  z.object({ type: z.literal('rotate'), angle: z.number() }),
  z.object({ type: z.literal('click'), points: z.array(point).min(1) }),
]);
export type StoredAnswer = z.infer<typeof storedAnswer>;

const near = (a: number, b: number, tolerance: number) => Math.abs(a - b) <= tolerance;

/** Smallest distance between two angles in degrees, in [0, 180]. */
export function angleDistance(a: number, b: number): number {
  const d = (((a - b) % 360) + 360) % 360;
  return Math.min(d, 360 - d);
}

/**
 * Whether a posted answer solves the challenge. An answer of another type's shape is simply wrong.
 * Click: exactly one point per character, indexes 0..n-1 each once, each near its character.
 */
export function isRightAnswer(secret: StoredAnswer, given: CaptchaAnswer): boolean {
  switch (secret.type) {
    case 'slide':
    case 'drag':
      return 'x' in given && near(given.x, secret.x, CaptchaTolerance.puzzlePx) && near(given.y, secret.y, CaptchaTolerance.puzzlePx);
    case 'rotate':
      return 'angle' in given && angleDistance(given.angle, secret.angle) <= CaptchaTolerance.rotateDegrees;
    case 'click': {
      if (!('points' in given) || given.points.length !== secret.points.length) return false;
      const byIndex = [...given.points].sort((a, b) => a.index - b.index);
      return byIndex.every((p, i) => {
        const want = secret.points[i];
        return p.index === i && want !== undefined && near(p.x, want.x, CaptchaTolerance.clickPx) && near(p.y, want.y, CaptchaTolerance.clickPx);
      });
    }
  }
}
