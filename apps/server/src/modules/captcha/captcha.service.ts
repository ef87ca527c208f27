import type { CaptchaAnswer, CaptchaChallenge, CaptchaTicket, CaptchaTrack } from '@suanli/contract/captcha';
import type { CaptchaType } from '@suanli/contract/tenant';
import { AccountRules } from '@suanli/domain/account-rules';
import type { Db } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { randomToken, sha256 } from '../../lib/crypto.ts';
import { badRequest } from '../../lib/errors.ts';
import { createCaptchaRepository } from './captcha.repository.ts';
import { renderChallenge } from './captcha.renderer.ts';
import { storedAnswer, verifyCaptcha } from './captcha.verifier.ts';

export const CaptchaMessages = {
  wrong: '验证失败，请重试',
  expired: '验证码已过期，请刷新后重试',
  /** Unknown, already checked, or another tenant's key: the same answer, so keys can't be probed. */
  invalid: '验证码已失效，请刷新后重试',
} as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Expired challenges are kept an hour (for support questions), then swept while issuing new ones. */
const KEEP_EXPIRED_MS = 60 * 60_000;
/** At most one sweep a minute per process: issuing stays one INSERT almost always. */
const SWEEP_EVERY_MS = 60_000;

export function createCaptchaService(deps: { db: Db; clock: Clock; enabled: boolean }) {
  const repo = createCaptchaRepository(deps.db);
  const ttlMs = AccountRules.captchaTtlSeconds * 1000;
  let lastSweep = Number.NEGATIVE_INFINITY;

  async function sweep(now: Date) {
    if (now.getTime() - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = now.getTime();
    await repo.deleteExpiredBefore(new Date(now.getTime() - KEEP_EXPIRED_MS));
  }

  return {
    enabled: deps.enabled,

    /** A new challenge of `type` for the tenant; the answer stays in the database. */
    async issue(tenantId: number, type: CaptchaType): Promise<CaptchaChallenge> {
      const { view, answer } = await renderChallenge(type);
      const now = deps.clock();
      await sweep(now);
      const expiresAt = new Date(now.getTime() + ttlMs);
      const key = await repo.insert({ tenantId, type, answer, createdAt: now, expiresAt });
      return { key, type, ...view, expiresAt: expiresAt.toISOString() };
    },

    /**
     * One check per challenge, right or wrong. The answer must come with the widget's record of
     * how it was reached (captcha.verifier.ts isPlausibleTrack). A right answer earns a one-use ticket valid for the
     * captcha TTL from now, so a user who solved it late in its life still has time to use it.
     */
    async check(tenantId: number, input: { key: string; answer: CaptchaAnswer; track: CaptchaTrack }): Promise<CaptchaTicket> {
      if (!UUID.test(input.key)) throw badRequest(CaptchaMessages.invalid);
      const now = deps.clock();
      const row = await repo.claimForCheck(tenantId, input.key, now);
      if (!row) throw badRequest(CaptchaMessages.invalid);
      if (row.expiresAt <= now) throw badRequest(CaptchaMessages.expired);
      const secret = storedAnswer.safeParse(row.answer);
      const elapsedMs = now.getTime() - row.createdAt.getTime();
      if (!secret.success || secret.data.type !== row.type || !verifyCaptcha(secret.data, input.answer, input.track, elapsedMs)) throw badRequest(CaptchaMessages.wrong);
      const ticket = randomToken();
      await repo.grantTicket(row.id, sha256(ticket), new Date(now.getTime() + ttlMs));
      return { ticket };
    },

    async consumeTicket(tenantId: number, ticket: string | undefined): Promise<boolean> {
      if (!ticket) return false;
      return repo.spendTicket(tenantId, sha256(ticket), deps.clock());
    },
  };
}
export type CaptchaService = ReturnType<typeof createCaptchaService>;
