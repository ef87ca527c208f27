import { z } from 'zod';
import { okEnvelope } from '@suanli/contract/envelope';
import { transactionsPage, transactionsQuery } from '@suanli/contract/wallet';
import type { App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import { authOf } from '../plugins/auth.ts';
import type { LedgerService } from '../../modules/wallet/ledger.service.ts';
import type { WalletService } from '../../modules/wallet/wallet.service.ts';
import { balanceData } from '@suanli/contract/account';

const mismatch = z.object({ userId: z.number().int(), problem: z.enum(['balance', 'chain']), entryId: z.number().int().nullable(), detail: z.string() });

export function walletRoutes(app: App, ledger: LedgerService, wallet: WalletService) {
  const tags = ['账户'];
  app.get('/api/v1/account/balance', { onRequest: app.requireUser, schema: { tags, summary: '账户余额', security: [{ bearer: [] }], response: { 200: okEnvelope(balanceData) } } }, async (req) =>
    ok({ balance: await wallet.balanceOf(authOf(req).user.id), frozenBalance: 0 }),
  );

  app.post(
    '/api/v1/transactions/list',
    { onRequest: app.requireUser, schema: { tags, summary: '收支明细（分页，可按时间、类型、收支方向筛选）', security: [{ bearer: [] }], body: transactionsQuery, response: { 200: okEnvelope(transactionsPage) } } },
    async (req) => {
      const { page, pageSize, startTime, endTime, kind, direction } = req.body;
      const filter = { startTime: startTime ? new Date(startTime) : undefined, endTime: endTime ? new Date(endTime) : undefined, kind, direction };
      return ok(await ledger.list(authOf(req).user.id, filter, page, pageSize));
    },
  );

  app.get(
    '/api/v1/operate/ledger/check',
    { onRequest: app.requireOperator, schema: { tags: ['运营'], summary: '账本核对：每个用户的流水之和等于余额、哈希链与余额链无断档（指出第一条断开的流水）', security: [{ bearer: [] }], response: { 200: okEnvelope(z.object({ ok: z.boolean(), mismatches: z.array(mismatch) })) } } },
    async (req) => {
      const mismatches = await ledger.check(req.tenant.id);
      return ok({ ok: mismatches.length === 0, mismatches });
    },
  );
}
