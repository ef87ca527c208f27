import { listOf, okEnvelope, pageQuery } from '@suanli/contract/envelope';
import { questionBody, questionCreated, questionItem } from '@suanli/contract/question';
import { RATE_LIMITS, type App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import { authOf } from '../plugins/auth.ts';
import type { QuestionService } from '../../modules/question/question.service.ts';

export function questionRoutes(app: App, questions: QuestionService) {
  app.post(
    '/api/v1/questions/',
    {
      // Signed-in or not: the guard of the web sends visitors here signed in, but sales leads are welcome either way.
      config: { idempotent: true, rateLimit: RATE_LIMITS.question },
      onRequest: app.optionalUser,
      schema: { tags: ['咨询'], summary: '提交预约咨询（联系销售）', body: questionBody, response: { 200: okEnvelope(questionCreated) } },
    },
    async (req) => ok(await questions.submit(req.tenant.id, req.auth?.user.id ?? null, req.body)),
  );

  app.get(
    '/api/v1/operate/questions',
    {
      onRequest: app.requireOperator,
      schema: { tags: ['运营'], summary: '本租户的预约咨询列表（最新在前）', security: [{ bearer: [] }], querystring: pageQuery, response: { 200: okEnvelope(listOf(questionItem)) } },
    },
    async (req) => ok(await questions.listForOperator(authOf(req), req.query)),
  );
}
