import { createCanvas, type Canvas, type SKRSContext2D } from '@napi-rs/canvas';
import { rand, randItem } from './random.ts';

const hsl = (h: number, s: number, l: number, a = 1) => `hsla(${((h % 360) + 360) % 360}, ${s}%, ${l}%, ${a})`;

/**
 * A new landscape-like picture each time: a sky gradient, a sun, mountain ridges and ground, then
 * translucent shapes and speckle noise. The sky-above-ground layout gives the rotate captcha a
 * visible "up", and the shapes and noise make piece edges hard to find by plain image diffing.
 */
export function drawBackground(width: number, height: number): Canvas {
  const canvas = createCanvas(width, height);
  const ctx = canvas.getContext('2d');
  const hue = rand(0, 360);

  const sky = ctx.createLinearGradient(0, 0, rand(-width / 3, width / 3), height);
  sky.addColorStop(0, hsl(hue, rand(45, 75), rand(55, 70)));
  sky.addColorStop(0.55, hsl(hue + rand(20, 60), rand(40, 70), rand(75, 88)));
  sky.addColorStop(1, hsl(hue + 90, 40, 85));
  ctx.fillStyle = sky;
  ctx.fillRect(0, 0, width, height);

  drawSun(ctx, width, height, hue);
  const ridges = 3;
  for (let i = 0; i < ridges; i++) {
    const base = height * (0.45 + (i * 0.4) / ridges) + rand(-10, 10);
    drawRidge(ctx, width, height, base, hsl(hue + 150 + i * rand(10, 30), rand(25, 55), 55 - i * 12));
  }
  drawShapes(ctx, width, height, hue);
  drawNoise(ctx, width, height);
  return canvas;
}

function drawSun(ctx: SKRSContext2D, width: number, height: number, hue: number) {
  const x = rand(width * 0.15, width * 0.85);
  const y = rand(height * 0.1, height * 0.35);
  const r = rand(14, 30);
  const glow = ctx.createRadialGradient(x, y, r * 0.2, x, y, r * 2.4);
  glow.addColorStop(0, hsl(hue + 200, 90, 92, 0.95));
  glow.addColorStop(0.4, hsl(hue + 200, 90, 80, 0.6));
  glow.addColorStop(1, hsl(hue + 200, 90, 80, 0));
  ctx.fillStyle = glow;
  ctx.beginPath();
  ctx.arc(x, y, r * 2.4, 0, Math.PI * 2);
  ctx.fill();
}

function drawRidge(ctx: SKRSContext2D, width: number, height: number, base: number, color: string) {
  ctx.beginPath();
  ctx.moveTo(0, height);
  let x = 0;
  ctx.lineTo(0, base + rand(-25, 25));
  while (x < width) {
    x += rand(18, 55);
    ctx.lineTo(x, base + rand(-35, 20));
  }
  ctx.lineTo(width, height);
  ctx.closePath();
  const g = ctx.createLinearGradient(0, base - 35, 0, height);
  g.addColorStop(0, color);
  g.addColorStop(1, 'rgba(20, 30, 40, 0.9)');
  ctx.fillStyle = g;
  ctx.fill();
}

function drawShapes(ctx: SKRSContext2D, width: number, height: number, hue: number) {
  const count = Math.round(rand(8, 14));
  for (let i = 0; i < count; i++) {
    ctx.fillStyle = hsl(hue + rand(0, 360), rand(50, 90), rand(35, 75), rand(0.15, 0.45));
    ctx.strokeStyle = hsl(hue + rand(0, 360), 70, rand(30, 80), rand(0.3, 0.6));
    ctx.lineWidth = rand(1, 3);
    const x = rand(0, width);
    const y = rand(0, height);
    const s = rand(8, 34);
    ctx.beginPath();
    const kind = randItem(['circle', 'triangle', 'square', 'curve'] as const);
    if (kind === 'circle') {
      ctx.arc(x, y, s, 0, Math.PI * 2);
      ctx.fill();
    } else if (kind === 'triangle') {
      const a = rand(0, Math.PI * 2);
      for (let k = 0; k < 3; k++) ctx.lineTo(x + s * Math.cos(a + (k * 2 * Math.PI) / 3), y + s * Math.sin(a + (k * 2 * Math.PI) / 3));
      ctx.closePath();
      ctx.fill();
    } else if (kind === 'square') {
      ctx.save();
      ctx.translate(x, y);
      ctx.rotate(rand(0, Math.PI));
      ctx.fillRect(-s / 2, -s / 2, s, s);
      ctx.restore();
    } else {
      ctx.moveTo(rand(0, width), rand(0, height));
      ctx.bezierCurveTo(rand(0, width), rand(0, height), rand(0, width), rand(0, height), rand(0, width), rand(0, height));
      ctx.stroke();
    }
  }
}

/** Sparse speckles rather than per-pixel noise: enough texture, and the PNG stays small. */
function drawNoise(ctx: SKRSContext2D, width: number, height: number) {
  const dots = Math.round((width * height) / 120);
  for (let i = 0; i < dots; i++) {
    ctx.fillStyle = Math.random() < 0.5 ? `rgba(255,255,255,${rand(0.1, 0.4)})` : `rgba(0,0,0,${rand(0.05, 0.25)})`;
    ctx.fillRect(rand(0, width), rand(0, height), rand(1, 2.5), rand(1, 2.5));
  }
}

/** PNG data URL, encoded off the event loop. */
export async function toPngDataUrl(canvas: Canvas): Promise<string> {
  const png = await canvas.encode('png');
  return `data:image/png;base64,${png.toString('base64')}`;
}
