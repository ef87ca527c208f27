import { createCanvas, type SKRSContext2D } from '@napi-rs/canvas';
import { drawBackground, toPngDataUrl } from './background.ts';
import { secureInt, type IntSource } from './random.ts';
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

/** Where the piece's box must end (x, y) and where it starts (startX, startY), in image pixels. */
export type PuzzleAnswer = { x: number; y: number; startX: number; startY: number };

/** Slide: how far apart the piece's start and the hole are at least, so some dragging is needed. */
const SLIDE_MIN_TRAVEL = 24;
/** Drag: the same, in two dimensions. */
const DRAG_MIN_TRAVEL = 60;

/**
 * The secret of a slide or drag challenge. Slide: the piece starts anywhere along the hole's row
 * and the hole is anywhere else on it (left or right), so the whole width is answer space. Drag:
 * the piece starts anywhere away from the hole.
 */
export function puzzleLayout(kind: 'slide' | 'drag', int: IntSource = secureInt): PuzzleAnswer {
  const { width, height, piece } = CaptchaSize;
  if (kind === 'slide') {
    const y = int(4, height - piece - 4);
    const startX = int(0, width - piece);
    let x: number;
    do x = int(0, width - piece);
    while (Math.abs(x - startX) < SLIDE_MIN_TRAVEL);
    return { x, y, startX, startY: y };
  }
  const x = int(6, width - piece - 6);
  const y = int(6, height - piece - 6);
  let start: { x: number; y: number };
  do start = { x: int(0, width - piece), y: int(0, height - piece) };
  while (Math.hypot(start.x - x, start.y - y) < DRAG_MIN_TRAVEL);
  return { x, y, startX: start.x, startY: start.y };
}

/**
 * Slide and drag: a background with a hole, and the piece cut from the same spot. The answer is
 * the top-left of the piece's box when it covers the hole; the piece starts at (thumbX, thumbY)
 * (slide: on the hole's row, moved along it by the slider).
 */
export async function renderPuzzle(kind: 'slide' | 'drag'): Promise<{ view: ChallengeView; answer: PuzzleAnswer }> {
  const { width, height, piece } = CaptchaSize;
  const bg = drawBackground(width, height);
  const edges = randomEdges();
  const answer = puzzleLayout(kind);
  const target = { x: answer.x, y: answer.y };
  const start = { x: answer.startX, y: answer.startY };

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
    answer,
  };
}
