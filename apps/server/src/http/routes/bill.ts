import { okEnvelope } from '@suanli/contract/envelope';
import { billListQuery, billPage, dailyBillListQuery, dailyBillPage } from '@suanli/contract/bill';
import type { App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import { authOf } from '../plugins/auth.ts';
import type { MeteringService } from '../../modules/metering/metering.service.ts';

/** Bills (PRODUCT.md "Orders, bills"): one row per settled charge, and per day (Asia/Shanghai) and instance. */
export function billRoutes(app: App, metering: MeteringService) {
  const tags = ['账单'];
  const security = [{ bearer: [] }];

  app.post(
    '/api/v1/bills/list',
    { onRequest: app.requireUser, schema: { tags, summary: '账单明细（每次结算一行）', security, body: billListQuery, response: { 200: okEnvelope(billPage) } } },
    async (req) => ok(await metering.listBills(authOf(req).user, req.body)),
  );

  app.post(
    '/api/v1/bills/daily_bill/list',
    { onRequest: app.requireUser, schema: { tags, summary: '日账单（按北京时间的日期与实例汇总）', security, body: dailyBillListQuery, response: { 200: okEnvelope(dailyBillPage) } } },
    async (req) => ok(await metering.listDailyBills(authOf(req).user, req.body)),
  );
}
