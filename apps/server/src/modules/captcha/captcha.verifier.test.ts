import { describe, expect, it } from 'vitest';
import { angleDistance, CaptchaTolerance, isRightAnswer } from './captcha.verifier.ts';

describe('captcha answers', () => {
  it('accepts a slide within the tolerance on both axes and nothing beyond', () => {
    const secret = { type: 'slide' as const, x: 120, y: 40 };
    expect(isRightAnswer(secret, { x: 120 + CaptchaTolerance.puzzlePx, y: 40 })).toBe(true);
    expect(isRightAnswer(secret, { x: 120 - CaptchaTolerance.puzzlePx - 1, y: 40 })).toBe(false);
    expect(isRightAnswer(secret, { x: 120, y: 40 + CaptchaTolerance.puzzlePx + 1 })).toBe(false);
    expect(isRightAnswer(secret, { angle: 120 })).toBe(false);
  });

  it('measures rotation on the circle', () => {
    expect(angleDistance(359, 1)).toBe(2);
    expect(angleDistance(-10, 350)).toBe(0);
    expect(angleDistance(720 + 30, 40)).toBe(10);
    const secret = { type: 'rotate' as const, angle: 355 };
    expect(isRightAnswer(secret, { angle: 3 })).toBe(true);
    expect(isRightAnswer(secret, { angle: 355 - CaptchaTolerance.rotateDegrees - 1 })).toBe(false);
    expect(isRightAnswer(secret, { x: 355, y: 0 })).toBe(false);
  });

  it('needs every character, in order, each once', () => {
    const secret = { type: 'click' as const, points: [{ x: 50, y: 50 }, { x: 150, y: 100 }, { x: 250, y: 180 }] };
    const right = [
      { index: 0, x: 55, y: 45 },
      { index: 1, x: 150, y: 100 },
      { index: 2, x: 240, y: 190 },
    ];
    expect(isRightAnswer(secret, { points: right })).toBe(true);
    // Posted out of array order but indexed right: still the same clicks.
    expect(isRightAnswer(secret, { points: [right[2]!, right[0]!, right[1]!] })).toBe(true);
    // Clicked in the wrong order.
    expect(isRightAnswer(secret, { points: [{ ...right[1]!, index: 0 }, { ...right[0]!, index: 1 }, right[2]!] })).toBe(false);
    // Missing one, one extra, a repeated index, one too far off.
    expect(isRightAnswer(secret, { points: right.slice(0, 2) })).toBe(false);
    expect(isRightAnswer(secret, { points: [...right, { index: 3, x: 0, y: 0 }] })).toBe(false);
    expect(isRightAnswer(secret, { points: [right[0]!, right[1]!, { ...right[2]!, index: 1 }] })).toBe(false);
    expect(isRightAnswer(secret, { points: [right[0]!, right[1]!, { index: 2, x: 250 + CaptchaTolerance.clickPx + 1, y: 180 }] })).toBe(false);
  });
});
