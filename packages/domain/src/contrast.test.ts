import { describe, expect, it } from 'vitest';
import { AA_TEXT, contrastRatio, parseHex, readableOn, relativeLuminance } from './contrast.ts';

const ratio = (a: string, b: string) => contrastRatio(parseHex(a)!, parseHex(b)!);

describe('#23 contrast', () => {
  it('computes WCAG luminance and ratios', () => {
    expect(relativeLuminance(parseHex('#fff')!)).toBeCloseTo(1);
    expect(relativeLuminance(parseHex('#000000')!)).toBe(0);
    expect(ratio('#000', '#fff')).toBeCloseTo(21);
    expect(ratio('#fff', '#fff')).toBe(1);
    // antd's default blue on white: the 4.1:1 the audit found
    expect(ratio('#1677ff', '#ffffff')).toBeCloseTo(4.1, 1);
    expect(ratio('#777777', '#ffffff')).toBeCloseTo(4.48, 2);
  });

  it('keeps a brand colour that already passes, darkens one that does not', () => {
    expect(readableOn('#0958D9')).toBe('#0958d9');
    expect(readableOn('#123')).toBe('#112233');
    for (const brand of ['#1677ff', '#faad14', '#52c41a', '#13c2c2', '#ffff00', '#ffffff', '#ff4d4f']) {
      expect(ratio(brand, '#ffffff'), brand).toBeLessThan(AA_TEXT);
      const safe = readableOn(brand);
      expect(ratio(safe, '#ffffff'), brand).toBeGreaterThanOrEqual(AA_TEXT);
      // only as dark as needed: a touch lighter would fail (white has no hue: it becomes grey)
      expect(ratio(safe, '#ffffff'), brand).toBeLessThan(AA_TEXT + 0.35);
    }
    expect(readableOn('#722ed1')).toBe('#722ed1');
    // the hue survives: a blue stays blue
    const blue = parseHex(readableOn('#1677ff'))!;
    expect(blue.b).toBeGreaterThan(blue.r);
  });

  it('works against another background and refuses garbage', () => {
    expect(ratio(readableOn('#1677ff', '#f5f7fa'), '#f5f7fa')).toBeGreaterThanOrEqual(AA_TEXT);
    expect(readableOn('red')).toBe('#0958d9');
    expect(readableOn('#12345g', '#fff', AA_TEXT, '#000000')).toBe('#000000');
    expect(parseHex('javascript:alert(1)')).toBeNull();
  });
});

describe('#23 brand colour', () => {
  it('keeps 4.5:1 on the light tints antd and the pages put behind brand text', async () => {
    const { brandColor } = await import('./contrast.ts');
    for (const brand of ['#1677ff', '#13a8a8', '#722ed1', '#faad14', '#00ff00']) {
      const safe = brandColor(brand);
      for (const tint of ['#e6f4ff', '#e2f0f0', '#f5f7fa', '#f0f6ff']) expect(ratio(safe, tint), `${brand} on ${tint}`).toBeGreaterThanOrEqual(AA_TEXT);
    }
    expect(brandColor('#003a8c')).toBe('#003a8c');
  });
});
