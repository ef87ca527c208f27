import { describe, expect, it } from 'vitest';
import { renderClick } from './click.ts';
import { renderPuzzle } from './puzzle.ts';
import { renderRotate } from './rotate.ts';

/** Width and height from a PNG data URL's IHDR chunk. */
function pngSize(dataUrl: string): { width: number; height: number } {
  const prefix = 'data:image/png;base64,';
  expect(dataUrl.startsWith(prefix)).toBe(true);
  const buf = Buffer.from(dataUrl.slice(prefix.length), 'base64');
  expect(buf.subarray(1, 4).toString('latin1')).toBe('PNG');
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

describe('captcha images', () => {
  it('draws a different slide puzzle each time, the hole left or right of the start along its row', async () => {
    const a = await renderPuzzle('slide');
    const b = await renderPuzzle('slide');
    expect(pngSize(a.view.image)).toEqual({ width: 300, height: 220 });
    expect(pngSize(a.view.thumb)).toEqual({ width: 60, height: 60 });
    expect(a.view.image).not.toBe(b.view.image);
    expect(a.view.thumbX).toBe(a.answer.startX);
    expect(a.view.thumbY).toBe(a.answer.y);
    expect(Math.abs(a.answer.x - a.answer.startX)).toBeGreaterThanOrEqual(24);
    expect(a.answer.x).toBeGreaterThanOrEqual(0);
    expect(a.answer.x + 60).toBeLessThanOrEqual(300);
  });

  it('starts a drag piece well away from its hole', async () => {
    for (let i = 0; i < 5; i++) {
      const { view, answer } = await renderPuzzle('drag');
      expect(Math.hypot(view.thumbX - answer.x, view.thumbY - answer.y)).toBeGreaterThanOrEqual(60);
      expect(view.thumbX + view.thumbWidth).toBeLessThanOrEqual(300);
      expect(view.thumbY + view.thumbHeight).toBeLessThanOrEqual(220);
    }
  });

  it('turns the rotate disk by a secret angle that is never upright and never on the wire', async () => {
    const { view, answer } = await renderRotate();
    expect(pngSize(view.image)).toEqual({ width: 220, height: 220 });
    expect(pngSize(view.thumb)).toEqual({ width: 140, height: 140 });
    expect(view.angle).toBe(0);
    expect(answer.angle).toBeGreaterThanOrEqual(20);
    expect(answer.angle).toBeLessThanOrEqual(340);
  });

  it('places 3–4 distinct click characters apart from each other, with a 150×40 hint', async () => {
    const { view, answer } = await renderClick();
    expect(pngSize(view.thumb)).toEqual({ width: 150, height: 40 });
    expect(view.words?.length).toBe(answer.points.length);
    expect(answer.points.length).toBeGreaterThanOrEqual(3);
    expect(answer.points.length).toBeLessThanOrEqual(4);
    expect(new Set(view.words).size).toBe(view.words?.length);
    for (const [i, p] of answer.points.entries()) {
      for (const q of answer.points.slice(i + 1)) expect(Math.hypot(p.x - q.x, p.y - q.y)).toBeGreaterThan(36);
    }
  });

  it('falls back to letters and digits without a CJK font', async () => {
    const { view } = await renderClick(null);
    for (const w of view.words ?? []) expect(w).toMatch(/^[A-Z2-9]$/);
  });
});
