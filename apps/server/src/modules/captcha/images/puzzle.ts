import { createCanvas, type SKRSContext2D } from '@napi-rs/canvas';
import { drawBackground, toPngDataUrl } from './background.ts';
import { secureInt } from './random.ts';
import { CaptchaSize, type ChallengeView } from './sizes.ts';

/** -1: knob cut into the piece, 0: flat edge, 1: knob sticking out. */
type Edge = -1 | 0 | 1;
type Pt = { x: number; y: number };

const KNOB_RADIUS = 7;
/** How far a knob's centre sits off the edge, as a share of its radius. */
const KNOB_OFFSET = 0.55;
/** Room for an outward knob: centre offset + radius. */
const MARGIN = Math.ceil(KNOB_RADIUS * (1 + KNOB_OFFSET));

/** Adds one side of the piece to the path, from p0 to p1, with its outward normal n. */
function edge(ctx: SKRSContext2D, p0: Pt, p1: Pt, n: Pt, kind: Edge) {
  if (kind !== 0) {
    const len = Math.hypot(p1.x - p0.x, p1.y - p0.y);
    const dir = { x: (p1.x - p0.x) / len, y: (p1.y - p0.y) / len };
    const mid = { x: (p0.x + p1.x) / 2, y: (p0.y + p1.y) / 2 };
    const o = KNOB_RADIUS * KNOB_OFFSET;
    const half = Math.sqrt(KNOB_RADIUS ** 2 - o ** 2);
    const c = { x: mid.x + n.x * o * kind, y: mid.y + n.y * o * kind };
    const a = { x: mid.x - dir.x * half, y: mid.y - dir.y * half };
    const b = { x: mid.x + dir.x * half, y: mid.y + dir.y * half };
    ctx.lineTo(a.x, a.y);
    // The outline runs clockwise, so an outward knob bulges with increasing angles, an inward one against.
    ctx.arc(c.x, c.y, KNOB_RADIUS, Math.atan2(a.y - c.y, a.x - c.x), Math.atan2(b.y - c.y, b.x - c.x), kind < 0);
  }
  ctx.lineTo(p1.x, p1.y);
}

/** The jigsaw outline of a piece whose box has its top-left corner at (x, y). */
function tracePiece(ctx: SKRSContext2D, x: number, y: number, edges: readonly [Edge, Edge, Edge, Edge]) {
  const l = x + MARGIN;
  const t = y + MARGIN;
  const r = x + CaptchaSize.piece - MARGIN;
  const b = y + CaptchaSize.piece - MARGIN;
  ctx.beginPath();
  ctx.moveTo(l, t);
  edge(ctx, { x: l, y: t }, { x: r, y: t }, { x: 0, y: -1 }, edges[0]);
  edge(ctx, { x: r, y: t }, { x: r, y: b }, { x: 1, y: 0 }, edges[1]);
  edge(ctx, { x: r, y: b }, { x: l, y: b }, { x: 0, y: 1 }, edges[2]);
  edge(ctx, { x: l, y: b }, { x: l, y: t }, { x: -1, y: 0 }, edges[3]);
  ctx.closePath();
}

const randomEdges = (): [Edge, Edge, Edge, Edge] => {
  const knob = (): Edge => (secureInt(0, 1) === 0 ? -1 : 1);
  const any = (): Edge => (secureInt(-1, 1) as Edge);
  // At least two knobs so the outline never degenerates into a plain square.
  return [knob(), knob(), any(), any()];
};

export type PuzzleAnswer = { x: number; y: number };

/**
 * Slide and drag: a background with a hole, and the piece cut from the same spot. The answer is
 * the top-left of the piece's box when it covers the hole. Slide gives thumbY (the piece moves
 * along one row, starting at thumbX = 0); drag starts the piece at a random spot away from the hole.
 */
export async function renderPuzzle(kind: 'slide' | 'drag'): Promise<{ view: ChallengeView; answer: PuzzleAnswer }> {
  const { width, height, piece } = CaptchaSize;
  const bg = drawBackground(width, height);
  const edges = randomEdges();

  // Slide: the hole is right of the piece's start, so at least one piece width must be dragged.
  const target =
    kind === 'slide'
      ? { x: secureInt(piece + 10, width - piece - 4), y: secureInt(4, height - piece - 4) }
      : { x: secureInt(6, width - piece - 6), y: secureInt(6, height - piece - 6) };
  let start = { x: 0, y: target.y };
  if (kind === 'drag') {
    do start = { x: secureInt(0, width - piece), y: secureInt(0, height - piece) };
    while (Math.hypot(start.x - target.x, start.y - target.y) < 90);
  }

  const thumb = createCanvas(piece, piece);
  const tctx = thumb.getContext('2d');
  tracePiece(tctx, 0, 0, edges);
  tctx.save();
  tctx.clip();
  tctx.drawImage(bg, -target.x, -target.y);
  tctx.restore();
  tctx.lineWidth = 2;
  tctx.strokeStyle = 'rgba(255, 255, 255, 0.9)';
  tctx.stroke();

  const ctx = bg.getContext('2d');
  tracePiece(ctx, target.x, target.y, edges);
  ctx.fillStyle = 'rgba(0, 0, 0, 0.5)';
  ctx.fill();
  ctx.lineWidth = 1.5;
  ctx.strokeStyle = 'rgba(255, 255, 255, 0.75)';
  ctx.stroke();

  const [image, thumbUrl] = await Promise.all([toPngDataUrl(bg), toPngDataUrl(thumb)]);
  return {
    view: {
      image,
      thumb: thumbUrl,
      thumbX: start.x,
      thumbY: start.y,
      thumbWidth: piece,
      thumbHeight: piece,
      angle: 0,
      width,
      height,
    },
    answer: target,
  };
}
