import { createCanvas, type SKRSContext2D } from '@napi-rs/canvas';
import { drawBackground, toPngDataUrl } from './background.ts';
import { cjkFontFamily, LATIN_FONT_STACK } from './fonts.ts';
import { rand, secureInt, securePick, type IntSource } from './random.ts';
import { CaptchaSize, type ChallengeView } from './sizes.ts';

/** Common characters with clear, distinct shapes (no look-alike pairs such as 日/曰, 己/已). */
const HANZI = [...'天地人山水火木金土日月星云雨风花草竹石田米心手口耳牛羊马鱼鸟龙虎春夏秋冬东南西北上中下左右大小多少高长白红黄青光明安宁和平开关门车船书画歌舞'];
/** Without a CJK font: letters and digits that can't be confused with each other (no I/1, O/0). */
const LATIN = [...'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'];

/** Centres of the characters to click, in click order. */
export type ClickAnswer = { points: { x: number; y: number }[] };

type Glyph = { char: string; x: number; y: number; size: number; rotation: number };

const MIN_GAP = 56;
const EDGE = 26;

/** Spreads `n` glyph centres over the picture, none closer than MIN_GAP, so clicks can't be ambiguous. */
function placeGlyphs(chars: string[], width: number, height: number, int: IntSource): Glyph[] {
  const placed: Glyph[] = [];
  for (const char of chars) {
    let best: { x: number; y: number } | undefined;
    let bestGap = -1;
    // Rejection sampling; keep the most spread-out candidate if the picture gets crowded.
    for (let tries = 0; tries < 60; tries++) {
      const p = { x: int(EDGE, width - EDGE), y: int(EDGE, height - EDGE) };
      const gap = Math.min(Infinity, ...placed.map((g) => Math.hypot(g.x - p.x, g.y - p.y)));
      if (gap > bestGap) {
        best = p;
        bestGap = gap;
      }
      if (gap >= MIN_GAP) break;
    }
    const at = best ?? { x: width / 2, y: height / 2 };
    placed.push({ char, ...at, size: int(28, 36), rotation: int(-40, 40) });
  }
  return placed;
}

function drawGlyph(ctx: SKRSContext2D, g: Glyph, family: string) {
  ctx.save();
  ctx.translate(g.x, g.y);
  ctx.rotate((g.rotation * Math.PI) / 180);
  ctx.font = `bold ${g.size}px ${family}`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  ctx.lineJoin = 'round';
  ctx.lineWidth = 4;
  ctx.strokeStyle = 'rgba(255, 255, 255, 0.9)';
  ctx.strokeText(g.char, 0, 0);
  ctx.fillStyle = `hsl(${Math.round(rand(0, 360))}, 75%, ${Math.round(rand(28, 42))}%)`;
  ctx.fillText(g.char, 0, 0);
  ctx.restore();
}

/**
 * The secret of a click challenge: 3–4 characters to click, in order, among 1–2 decoys, spread
 * over the picture. The characters to click are the first ones picked; their order on screen is random.
 */
export function clickLayout(pool: readonly string[] = HANZI, int: IntSource = secureInt): { glyphs: Glyph[]; wanted: Glyph[] } {
  const { width, height } = CaptchaSize;
  const targets = int(3, 4);
  const decoys = int(1, 2);
  const glyphs = placeGlyphs(securePick(pool, targets + decoys, int), width, height, int);
  return { glyphs, wanted: glyphs.slice(0, targets) };
}

/**
 * Click in order: 3–4 characters to click plus 1–2 decoys drawn over the picture, and a 150×40
 * thumb showing the ones to click in order (also listed in `words`). `fontFamily` is injectable for
 * tests; by default the machine's CJK font, else letters and digits.
 */
export async function renderClick(fontFamily: string | null = cjkFontFamily()): Promise<{ view: ChallengeView; answer: ClickAnswer }> {
  const { width, height, thumbWidth, thumbHeight } = CaptchaSize;
  const family = fontFamily ? `"${fontFamily}", ${LATIN_FONT_STACK}` : LATIN_FONT_STACK;
  const pool = fontFamily ? HANZI : LATIN;
  const { glyphs, wanted } = clickLayout(pool);

  const bg = drawBackground(width, height);
  const ctx = bg.getContext('2d');
  for (const g of glyphs) drawGlyph(ctx, g, family);

  const thumb = createCanvas(thumbWidth, thumbHeight);
  const tctx = thumb.getContext('2d');
  const grad = tctx.createLinearGradient(0, 0, thumbWidth, thumbHeight);
  grad.addColorStop(0, '#f4f7fb');
  grad.addColorStop(1, '#e3e9f2');
  tctx.fillStyle = grad;
  tctx.fillRect(0, 0, thumbWidth, thumbHeight);
  const step = thumbWidth / wanted.length;
  wanted.forEach((g, i) =>
    drawGlyph(tctx, { char: g.char, x: step * (i + 0.5), y: thumbHeight / 2, size: 24, rotation: secureInt(-15, 15) }, family),
  );

  const [image, thumbUrl] = await Promise.all([toPngDataUrl(bg), toPngDataUrl(thumb)]);
  return {
    view: {
      image,
      thumb: thumbUrl,
      thumbX: 0,
      thumbY: 0,
      thumbWidth,
      thumbHeight,
      angle: 0,
      words: wanted.map((g) => g.char),
      width,
      height,
    },
    answer: { points: wanted.map((g) => ({ x: g.x, y: g.y })) },
  };
}
