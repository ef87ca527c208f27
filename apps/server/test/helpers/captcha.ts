import { eq } from 'drizzle-orm';
import { captchaAnswer, type CaptchaAnswer, type CaptchaChallenge, type CaptchaTrack } from '@suanli/contract/captcha';
import type { CaptchaType } from '@suanli/contract/tenant';
import { captchaChallenges } from '../../src/db/schema/captcha.ts';
import { storedAnswer, type StoredAnswer } from '../../src/modules/captcha/captcha.verifier.ts';
import type { TestApp } from './app.ts';

/** Tests only: the secret answer of a challenge, read from the database. */
export async function secretOf(t: TestApp, key: string): Promise<StoredAnswer> {
  const [row] = await t.container.db.select({ answer: captchaChallenges.answer }).from(captchaChallenges).where(eq(captchaChallenges.id, key));
  if (!row) throw new Error(`no captcha challenge ${key}`);
  return storedAnswer.parse(row.answer);
}

/** The answer a user would post for the secret: exactly right. */
export function rightAnswer(secret: StoredAnswer): CaptchaAnswer {
  switch (secret.type) {
    case 'slide':
    case 'drag':
      return { x: secret.x, y: secret.y };
    case 'rotate':
      return { angle: secret.angle };
    case 'click':
      return { points: secret.points.map((p, index) => ({ index, x: p.x, y: p.y })) };
  }
}

/** Ease in and out: a hand speeds up, then slows down to place the piece. */
const ease = (p: number) => p * p * (3 - 2 * p);

/**
 * The record the web widget would send for `answer`, as a person would leave it: a dozen samples
 * over half a second from the piece's start to the answer (rotate: from 0°), or one per click.
 */
export function humanTrack(secret: StoredAnswer, answer: CaptchaAnswer): CaptchaTrack {
  const steps = 12;
  if ('points' in answer) return [...answer.points].sort((a, b) => a.index - b.index).map((p, i) => [400 + i * 450, p.x, p.y]);
  const from = 'angle' in answer ? [0, 0] : secret.type === 'slide' || secret.type === 'drag' ? [secret.startX ?? 0, secret.startY ?? answer.y] : [0, 0];
  const to = 'angle' in answer ? [answer.angle, 0] : [answer.x, answer.y];
  return Array.from({ length: steps + 1 }, (_, i) => {
    const p = ease(i / steps);
    const at = i === steps ? to : [Math.round((from[0] ?? 0) + ((to[0] ?? 0) - (from[0] ?? 0)) * p), Math.round((from[1] ?? 0) + ((to[1] ?? 0) - (from[1] ?? 0)) * p)];
    return [i * 45, at[0] ?? 0, at[1] ?? 0] as [number, number, number];
  });
}

/** A check body with the record a person would leave, for a well-formed answer to a known challenge. */
export async function withTrack(t: TestApp, payload: unknown): Promise<unknown> {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload) || 'track' in payload) return payload;
  const { key, answer } = payload as { key?: unknown; answer?: unknown };
  const parsed = captchaAnswer.safeParse(answer);
  if (typeof key !== 'string' || !/^[0-9a-f-]{36}$/.test(key) || !parsed.success) return payload;
  const secret = await secretOf(t, key).catch(() => undefined);
  return secret ? { ...payload, track: humanTrack(secret, parsed.data) } : payload;
}

/** Issues a challenge (the tenant's configured type when `type` is omitted). */
export async function issueCaptcha(t: TestApp, type?: CaptchaType, opts: { host?: string } = {}): Promise<CaptchaChallenge> {
  const res = await t.request({ method: 'GET', url: type ? `/user/captcha/${type}` : '/user/captcha', host: opts.host });
  if (res.statusCode !== 200) throw new Error(`captcha issue failed: ${res.statusCode} ${res.body}`);
  return (res.json() as { data: CaptchaChallenge }).data;
}

/**
 * Solves a captcha the way the web would, with the answer read from the database, and returns the
 * ticket the account endpoints accept (captchaTicket). `host` picks the tenant (default localhost).
 */
export async function solveCaptcha(t: TestApp, type?: CaptchaType, opts: { host?: string } = {}): Promise<string> {
  const challenge = await issueCaptcha(t, type, opts);
  const secret = await secretOf(t, challenge.key);
  const answer = rightAnswer(secret);
  const res = await t.request({ method: 'POST', url: '/user/captcha/check', host: opts.host, payload: { key: challenge.key, answer, track: humanTrack(secret, answer) } });
  if (res.statusCode !== 200) throw new Error(`captcha check failed: ${res.statusCode} ${res.body}`);
  return (res.json() as { data: { ticket: string } }).data.ticket;
}
