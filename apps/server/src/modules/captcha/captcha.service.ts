import type { Db } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { sha256 } from '../../lib/crypto.ts';
import { createCaptchaRepository } from './captcha.repository.ts';

export function createCaptchaService(deps: { db: Db; clock: Clock; enabled: boolean }) {
  const repo = createCaptchaRepository(deps.db);
  return {
    enabled: deps.enabled,
    async consumeTicket(tenantId: number, ticket: string | undefined): Promise<boolean> {
      if (!ticket) return false;
      return repo.spendTicket(tenantId, sha256(ticket), deps.clock());
    },
  };
}
export type CaptchaService = ReturnType<typeof createCaptchaService>;
