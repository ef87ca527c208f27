import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../db/client.ts';
import { jobs } from '../../db/schema/job.ts';
import { enqueueJob } from '../../jobs/queue.ts';
import type { Clock } from '../../lib/clock.ts';
import { parseSandboxTrade, SANDBOX_NOTIFY_JOB, sandboxTradePayload, type SandboxTrade, type SandboxTradeStore } from '../../adapters/payments/sandbox.ts';

/**
 * The sandbox gateway's memory of trades, kept in its own notification jobs (see sandbox.ts): the
 * first SANDBOX_NOTIFY_JOB of an order is its trade. An advisory lock on the order id makes
 * "record unless recorded" atomic across concurrent clicks and replicas.
 */
export function createSandboxTradeStore(db: Db, clock: Clock): SandboxTradeStore {
  const find = async (q: DbOrTx, outTradeNo: string): Promise<SandboxTrade | undefined> => {
    const rows = await q
      .select({ payload: jobs.payload })
      .from(jobs)
      .where(and(eq(jobs.kind, SANDBOX_NOTIFY_JOB), sql`${jobs.payload} ->> 'out_trade_no' = ${outTradeNo}`))
      .orderBy(asc(jobs.id))
      .limit(1);
    return rows[0] ? parseSandboxTrade(rows[0].payload) : undefined;
  };
  return {
    async recordOnce(trade) {
      return db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`sandbox-trade:${trade.outTradeNo}`}))`);
        const existing = await find(tx, trade.outTradeNo);
        if (existing) return existing;
        // run_at from the app's clock, like every other time the app decides.
        await enqueueJob(tx, SANDBOX_NOTIFY_JOB, sandboxTradePayload(trade), clock());
        return trade;
      });
    },
    find: (outTradeNo) => find(db, outTradeNo),
  };
}
