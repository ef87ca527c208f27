import { eq } from 'drizzle-orm';
import type { CaptchaAnswer, CaptchaChallenge } from '@suanli/contract/captcha';
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
  const answer = rightAnswer(await secretOf(t, challenge.key));
  const res = await t.request({ method: 'POST', url: '/user/captcha/check', host: opts.host, payload: { key: challenge.key, answer } });
  if (res.statusCode !== 200) throw new Error(`captcha check failed: ${res.statusCode} ${res.body}`);
  return (res.json() as { data: { ticket: string } }).data.ticket;
}
