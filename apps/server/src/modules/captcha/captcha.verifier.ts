import { z } from 'zod';
import type { CaptchaAnswer, CaptchaTrack } from '@suanli/contract/captcha';

/**
 * How far off a right answer may be. Tight enough that a guess rarely lands (see the blind-rate
 * test in test/security/accounts.test.ts), loose enough for a finger on a phone.
 */
export const CaptchaTolerance = {
  /** Slide and drag: px per axis between the piece's top-left and the hole's. */
  puzzlePx: 3,
  /** Rotate: degrees either way, on the circle (359° is 2° from 1°). */
  rotateDegrees: 4,
  /** Click: px per axis around each character's centre (characters are 28–36 px). */
  clickPx: 16,
} as const;

/** What a human's record of an answer looks like at the least (PRODUCT: one drag, or a few clicks). */
export const TrackRules = {
  /** Samples of a drag (slide, drag, rotate): a real pointer reports many moves. */
  minDragPoints: 6,
  /** A drag takes at least this long: no one aligns a piece in a blink. */
  minDragMs: 250,
  /** Click: the first click comes at least this long after the picture is shown, and clicks this far apart. */
  minFirstClickMs: 200,
  minClickGapMs: 80,
  /** The record must start at the piece's start (px or degrees) and end exactly at the answer. */
  startSlack: 2,
  endSlack: 1,
  /**
   * A drag that never strays further than this from one constant pace (px or degrees, or this share
   * of its length) is a machine's even interpolation.
   */
  minPaceDeparture: 2,
  minPaceDepartureShare: 0.04,
  /** Allowance for the client clock between its record and the server's issue-to-check time. */
  clockSlackMs: 2_000,
} as const;

const point = z.object({ x: z.number(), y: z.number() });

/** The secret answer kept in captcha_challenges.answer (jsonb), per type. */
export const storedAnswer = z.discriminatedUnion('type', [
  z.object({ type: z.literal('slide'), x: z.number(), y: z.number(), startX: z.number().optional(), startY: z.number().optional() }),
  z.object({ type: z.literal('drag'), x: z.number(), y: z.number(), startX: z.number().optional(), startY: z.number().optional() }),
  z.object({ type: z.literal('rotate'), angle: z.number() }),
  z.object({ type: z.literal('click'), points: z.array(point).min(1) }),
]);
export type StoredAnswer = z.infer<typeof storedAnswer>;

const near = (a: number, b: number, tolerance: number) => Math.abs(a - b) <= tolerance;

/** Smallest distance between two angles in degrees, in [0, 180]. */
export function angleDistance(a: number, b: number): number {
  const d = (((a - b) % 360) + 360) % 360;
  return Math.min(d, 360 - d);
}

/**
 * Whether a posted answer solves the challenge. An answer of another type's shape is simply wrong.
 * Click: exactly one point per character, indexes 0..n-1 each once, each near its character.
 */
export function isRightAnswer(secret: StoredAnswer, given: CaptchaAnswer): boolean {
  switch (secret.type) {
    case 'slide':
    case 'drag':
      return 'x' in given && near(given.x, secret.x, CaptchaTolerance.puzzlePx) && near(given.y, secret.y, CaptchaTolerance.puzzlePx);
    case 'rotate':
      return 'angle' in given && angleDistance(given.angle, secret.angle) <= CaptchaTolerance.rotateDegrees;
    case 'click': {
      if (!('points' in given) || given.points.length !== secret.points.length) return false;
      const byIndex = [...given.points].sort((a, b) => a.index - b.index);
      return byIndex.every((p, i) => {
        const want = secret.points[i];
        return p.index === i && want !== undefined && near(p.x, want.x, CaptchaTolerance.clickPx) && near(p.y, want.y, CaptchaTolerance.clickPx);
      });
    }
  }
}

/** Sample times only go forward, and the record is no longer than the challenge has been out. */
function timesPlausible(track: CaptchaTrack, elapsedMs: number): boolean {
  const first = track[0];
  const last = track.at(-1);
  if (!first || !last || first[0] < 0) return false;
  for (let i = 1; i < track.length; i++) if ((track[i]?.[0] ?? 0) < (track[i - 1]?.[0] ?? 0)) return false;
  return last[0] - first[0] <= elapsedMs + TrackRules.clockSlackMs;
}

/**
 * How far the record strays from moving at one constant speed from its first sample to its last
 * (px, or degrees for rotate). A hand speeds up, slows down and pauses; a script that fills in
 * evenly spaced points in evenly spaced time stays on that line, give or take rounding.
 */
function departureFromEvenPace(track: CaptchaTrack): number {
  const first = track[0];
  const last = track.at(-1);
  if (!first || !last || last[0] <= first[0]) return 0;
  const span = last[0] - first[0];
  let worst = 0;
  for (const [t, a, b] of track) {
    const p = (t - first[0]) / span;
    worst = Math.max(worst, Math.hypot(a - (first[1] + (last[1] - first[1]) * p), b - (first[2] + (last[2] - first[2]) * p)));
  }
  return worst;
}

function unevenEnough(track: CaptchaTrack): boolean {
  const first = track[0];
  const last = track.at(-1);
  if (!first || !last) return false;
  const distance = Math.hypot(last[1] - first[1], last[2] - first[2]);
  return departureFromEvenPace(track) >= Math.max(TrackRules.minPaceDeparture, distance * TrackRules.minPaceDepartureShare);
}

/**
 * Whether the widget's record is what a person answering this challenge would leave: enough
 * samples over enough time, going forward in time, starting where the piece started, ending at
 * the posted answer (slide: along its row), not a machine's even interpolation; click: one sample
 * per click, at the clicked spots, human gaps apart. It can't tell a careful forger from a person,
 * but every answer must now come with a drag that ends where it says.
 */
export function isPlausibleTrack(secret: StoredAnswer, given: CaptchaAnswer, track: CaptchaTrack, elapsedMs: number): boolean {
  if (!timesPlausible(track, elapsedMs)) return false;
  const first = track[0];
  const last = track.at(-1);
  if (!first || !last) return false;
  const duration = last[0] - first[0];
  switch (secret.type) {
    case 'slide':
    case 'drag': {
      if (!('x' in given) || track.length < TrackRules.minDragPoints || duration < TrackRules.minDragMs) return false;
      if (secret.startX !== undefined && secret.startY !== undefined) {
        if (!near(first[1], secret.startX, TrackRules.startSlack) || !near(first[2], secret.startY, TrackRules.startSlack)) return false;
      }
      if (!near(last[1], given.x, TrackRules.endSlack) || !near(last[2], given.y, TrackRules.endSlack)) return false;
      if (secret.type === 'slide' && !track.every((s) => near(s[2], given.y, TrackRules.endSlack))) return false;
      return unevenEnough(track);
    }
    case 'rotate': {
      if (!('angle' in given) || track.length < TrackRules.minDragPoints || duration < TrackRules.minDragMs) return false;
      if (angleDistance(first[1], 0) > TrackRules.startSlack || angleDistance(last[1], given.angle) > TrackRules.endSlack) return false;
      return unevenEnough(track);
    }
    case 'click': {
      if (!('points' in given) || track.length !== given.points.length || first[0] < TrackRules.minFirstClickMs) return false;
      const byIndex = [...given.points].sort((a, b) => a.index - b.index);
      return track.every((s, i) => {
        const p = byIndex[i];
        const prev = track[i - 1];
        const gapOk = !prev || s[0] - prev[0] >= TrackRules.minClickGapMs;
        return p !== undefined && gapOk && near(s[1], p.x, TrackRules.endSlack) && near(s[2], p.y, TrackRules.endSlack);
      });
    }
  }
}

/** The whole verdict on a check: the right answer, reached the way a person reaches it. */
export function verifyCaptcha(secret: StoredAnswer, given: CaptchaAnswer, track: CaptchaTrack, elapsedMs: number): boolean {
  return isRightAnswer(secret, given) && isPlausibleTrack(secret, given, track, elapsedMs);
}
