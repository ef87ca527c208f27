/**
 * WCAG 2.x contrast: relative luminance, contrast ratio, and a brand colour made safe for text.
 * A tenant's colour is used as given where it reaches the ratio and darkened (same hue and
 * saturation, less lightness) where it does not, so no tenant can break the console's contrast.
 */

export type Rgb = { r: number; g: number; b: number };

/** WCAG AA for normal text. */
export const AA_TEXT = 4.5;

/** `#rgb` or `#rrggbb` (case-insensitive) to channels 0..255; null for anything else. */
export function parseHex(color: string): Rgb | null {
  const m = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(color.trim());
  if (!m?.[1]) return null;
  const hex = m[1].length === 3 ? [...m[1]].map((c) => c + c).join('') : m[1];
  const n = Number.parseInt(hex, 16);
  return { r: (n >> 16) & 255, g: (n >> 8) & 255, b: n & 255 };
}

export function toHex({ r, g, b }: Rgb): string {
  return `#${[r, g, b].map((c) => Math.round(Math.min(255, Math.max(0, c))).toString(16).padStart(2, '0')).join('')}`;
}

/** WCAG relative luminance, 0 (black) .. 1 (white). */
export function relativeLuminance({ r, g, b }: Rgb): number {
  const lin = (c: number) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/** The WCAG contrast ratio of two colours, 1 .. 21, whichever is lighter. */
export function contrastRatio(a: Rgb, b: Rgb): number {
  const la = relativeLuminance(a);
  const lb = relativeLuminance(b);
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

type Hsl = { h: number; s: number; l: number };

function toHsl({ r, g, b }: Rgb): Hsl {
  const [rr, gg, bb] = [r / 255, g / 255, b / 255];
  const max = Math.max(rr, gg, bb);
  const min = Math.min(rr, gg, bb);
  const l = (max + min) / 2;
  if (max === min) return { h: 0, s: 0, l };
  const d = max - min;
  const s = l > 0.5 ? d / (2 - max - min) : d / (max + min);
  const h = max === rr ? (gg - bb) / d + (gg < bb ? 6 : 0) : max === gg ? (bb - rr) / d + 2 : (rr - gg) / d + 4;
  return { h: h / 6, s, l };
}

function fromHsl({ h, s, l }: Hsl): Rgb {
  if (s === 0) return { r: l * 255, g: l * 255, b: l * 255 };
  const q = l < 0.5 ? l * (1 + s) : l + s - l * s;
  const p = 2 * l - q;
  const ch = (t0: number) => {
    const t = t0 < 0 ? t0 + 1 : t0 > 1 ? t0 - 1 : t0;
    if (t < 1 / 6) return p + (q - p) * 6 * t;
    if (t < 1 / 2) return q;
    if (t < 2 / 3) return p + (q - p) * (2 / 3 - t) * 6;
    return p;
  };
  return { r: ch(h + 1 / 3) * 255, g: ch(h) * 255, b: ch(h - 1 / 3) * 255 };
}

/**
 * The colour itself when it reaches `min` against `background` (white by default), else the
 * lightest darker shade of it that does. Unparseable input gives `fallback`.
 */
export function readableOn(color: string, background = '#ffffff', min = AA_TEXT, fallback = '#0958d9'): string {
  const rgb = parseHex(color);
  const bg = parseHex(background) ?? { r: 255, g: 255, b: 255 };
  if (!rgb) return fallback;
  if (contrastRatio(rgb, bg) >= min) return toHex(rgb);
  const hsl = toHsl(rgb);
  // Lightness falls monotonically towards black (21:1 on white): find the lightest that passes.
  let lo = 0;
  let hi = hsl.l;
  for (let i = 0; i < 24; i++) {
    const mid = (lo + hi) / 2;
    if (contrastRatio(fromHsl({ ...hsl, l: mid }), bg) >= min) lo = mid;
    else hi = mid;
  }
  const out = fromHsl({ ...hsl, l: lo });
  // Rounding to 8-bit channels may land a hair under: step down until it passes.
  let hex = toHex(out);
  for (let l = lo; contrastRatio(parseHex(hex) ?? out, bg) < min && l > 0; l -= 0.005) hex = toHex(fromHsl({ ...hsl, l: Math.max(0, l - 0.005) }));
  return hex;
}

/**
 * The brand as the console uses it: text on white and on the light brand tints behind selected
 * menu items and badges (about 12 % of the brand on white), and behind white button text. 5.6:1 on
 * white keeps 4.5:1 on those tints.
 */
export const BRAND_ON_WHITE = 5.6;

export function brandColor(color: string): string {
  return readableOn(color, '#ffffff', BRAND_ON_WHITE);
}
