import { createCanvas } from '@napi-rs/canvas';
import { drawBackground, toPngDataUrl } from './background.ts';
import { rand, secureInt, type IntSource } from './random.ts';
import { CaptchaSize, type ChallengeView } from './sizes.ts';

/** The clockwise turn, in whole degrees [0, 360), that puts the round image upright again. */
export type RotateAnswer = { angle: number };

/**
 * Rotate: a square picture whose centre disk is blanked out, and that disk as the thumb, turned by
 * a secret angle. The reply's `angle` is 0: the thumb is shown as delivered and the user turns it
 * clockwise by the answer; the secret never appears on the wire.
 */
/** The secret turn: never near upright (a user could pass without turning), else any whole degree. */
export function rotateLayout(int: IntSource = secureInt): { turned: number; answer: RotateAnswer } {
  const turned = int(20, 340);
  return { turned, answer: { angle: (360 - turned) % 360 } };
}

export async function renderRotate(): Promise<{ view: ChallengeView; answer: RotateAnswer }> {
  const size = CaptchaSize.rotate;
  const disk = CaptchaSize.rotateDisk;
  const offset = (size - disk) / 2;
  const bg = drawBackground(size, size);
  const { turned, answer } = rotateLayout();

  const thumb = createCanvas(disk, disk);
  const tctx = thumb.getContext('2d');
  tctx.beginPath();
  tctx.arc(disk / 2, disk / 2, disk / 2, 0, Math.PI * 2);
  tctx.save();
  tctx.clip();
  tctx.translate(disk / 2, disk / 2);
  tctx.rotate((turned * Math.PI) / 180);
  tctx.drawImage(bg, -size / 2, -size / 2);
  tctx.restore();
  tctx.lineWidth = 3;
  tctx.strokeStyle = 'rgba(255, 255, 255, 0.85)';
  tctx.beginPath();
  tctx.arc(disk / 2, disk / 2, disk / 2 - 1.5, 0, Math.PI * 2);
  tctx.stroke();

  // Blank the disk in the picture so the upright content can't be read off the background.
  const ctx = bg.getContext('2d');
  const fill = ctx.createRadialGradient(size / 2, size / 2, 4, size / 2, size / 2, disk / 2);
  const grey = Math.round(rand(120, 170));
  fill.addColorStop(0, `rgb(${grey}, ${grey}, ${grey + 8})`);
  fill.addColorStop(1, `rgb(${grey - 30}, ${grey - 30}, ${grey - 22})`);
  ctx.fillStyle = fill;
  ctx.beginPath();
  ctx.arc(size / 2, size / 2, disk / 2, 0, Math.PI * 2);
  ctx.fill();

  const [image, thumbUrl] = await Promise.all([toPngDataUrl(bg), toPngDataUrl(thumb)]);
  return {
    view: { image, thumb: thumbUrl, thumbX: offset, thumbY: offset, thumbWidth: disk, thumbHeight: disk, angle: 0, width: size, height: size },
    answer,
  };
}
