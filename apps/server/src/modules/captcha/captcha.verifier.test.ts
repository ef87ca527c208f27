import { describe, expect, it } from 'vitest';
import { angleDistance, CaptchaTolerance, isPlausibleTrack, isRightAnswer } from './captcha.verifier.ts';

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
    expect(isRightAnswer(secret, { angle: 358 })).toBe(true);
    expect(isRightAnswer(secret, { angle: 359 + CaptchaTolerance.rotateDegrees - 4 })).toBe(true);
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

  describe('the widget record', () => {
    const secret = { type: 'slide' as const, x: 200, y: 40, startX: 20, startY: 40 };
    const answer = { x: 201, y: 40 };
    // Eased like a hand: fast in the middle, slow at both ends.
    const human: [number, number, number][] = [0, 3, 12, 30, 60, 95, 130, 160, 180, 193, 199, 201].map((dx, i) => [i * 40 + (i % 3) * 7, Math.min(20 + dx * 0.9, 201), 40]);
    human[human.length - 1] = [human.at(-1)![0], 201, 40];

    it('accepts a hand-like drag from the start to the answer', () => {
      expect(isPlausibleTrack(secret, answer, human, 60_000)).toBe(true);
    });

    it('refuses no record, a record not ending at the answer or not starting at the piece, and time going back', () => {
      expect(isPlausibleTrack(secret, answer, [], 60_000)).toBe(false);
      expect(isPlausibleTrack(secret, { x: 150, y: 40 }, human, 60_000)).toBe(false);
      expect(isPlausibleTrack(secret, answer, human.map(([t, x, y], i) => [t, i === 0 ? 100 : x, y]), 60_000)).toBe(false);
      expect(isPlausibleTrack(secret, answer, human.map(([t, x, y], i) => [i === 5 ? 0 : t, x, y]), 60_000)).toBe(false);
      // Longer than the challenge has been out.
      expect(isPlausibleTrack(secret, answer, human.map(([t, x, y]) => [t * 100, x, y]), 1_000)).toBe(false);
    });

    it('refuses a blink and an even machine interpolation', () => {
      expect(isPlausibleTrack(secret, answer, human.map(([t, x, y]) => [t / 10, x, y]), 60_000)).toBe(false);
      const even = Array.from({ length: 12 }, (_, i): [number, number, number] => [i * 40, Math.round(20 + (181 * i) / 11), 40]);
      expect(isPlausibleTrack(secret, answer, even, 60_000)).toBe(false);
    });

    it('wants one click per point, in order, at human gaps', () => {
      const click = { type: 'click' as const, points: [{ x: 50, y: 50 }, { x: 150, y: 100 }] };
      const given = { points: [{ index: 0, x: 52, y: 48 }, { index: 1, x: 150, y: 101 }] };
      expect(isPlausibleTrack(click, given, [[700, 52, 48], [1300, 150, 101]], 60_000)).toBe(true);
      expect(isPlausibleTrack(click, given, [[700, 52, 48], [720, 150, 101]], 60_000)).toBe(false);
      expect(isPlausibleTrack(click, given, [[0, 52, 48], [900, 150, 101]], 60_000)).toBe(false);
      expect(isPlausibleTrack(click, given, [[700, 52, 48]], 60_000)).toBe(false);
    });
  });
});
