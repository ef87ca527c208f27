import { QUESTION_HOURLY_LIMIT, type QuestionBody } from '@suanli/contract/question';
import type { Db } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { forbidden, tooMany } from '../../lib/errors.ts';
import type { Authenticated } from '../user/account.service.ts';
import { createQuestionRepository } from './question.repository.ts';
import { presentQuestion } from './question.presenter.ts';

const HOUR_MS = 3_600_000;

/** Contact-sales requests (/reservationForm) and the operator's view of them. */
export function createQuestionService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  const repo = createQuestionRepository(db);

  return {
    /**
     * Stores a request of the tenant, tied to the signed-in user when there is one. Text is kept
     * exactly as validated: it is rendered escaped, never interpreted.
     */
    async submit(tenantId: number, userId: number | null, input: QuestionBody): Promise<{ id: string }> {
      return db.transaction(async (tx) => {
        const r = createQuestionRepository(tx);
        const now = clock();
        await r.lockSender(tenantId, input.phone, userId);
        const recent = await r.countSince(tenantId, input.phone, userId, new Date(now.getTime() - HOUR_MS));
        if (recent.count >= QUESTION_HOURLY_LIMIT) {
          const waitMs = recent.oldest ? recent.oldest.getTime() + HOUR_MS - now.getTime() : HOUR_MS;
          const minutes = Math.max(1, Math.ceil(waitMs / 60_000));
          throw tooMany(`提交过于频繁：每小时最多提交 ${QUESTION_HOURLY_LIMIT} 次咨询，请 ${minutes} 分钟后再试`, waitMs / 1000);
        }
        const row = await r.insert({
          tenantId,
          userId,
          name: input.name,
          phone: input.phone,
          company: input.company ?? null,
          email: input.email ?? null,
          gpuType: input.gpuType ?? null,
          gpuCount: input.gpuCount ?? null,
          content: input.content,
          createdAt: now,
        });
        return { id: row.id };
      });
    },

    /** The operator's tenant only, newest first. */
    async listForOperator(auth: Authenticated, page: { page: number; pageSize: number }) {
      if (auth.user.role !== 'operator') throw forbidden();
      const { rows, total } = await repo.listByTenant(auth.user.tenantId, page.page, page.pageSize);
      return { list: rows.map(presentQuestion), total };
    },
  };
}
export type QuestionService = ReturnType<typeof createQuestionService>;
