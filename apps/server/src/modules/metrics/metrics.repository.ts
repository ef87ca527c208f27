import { sql } from 'drizzle-orm';
import { queryRows, type DbOrTx } from '../../db/client.ts';

/** What GET /metrics reads at scrape time (all tenants: the endpoint is the installation's). */
export function createMetricsRepository(db: DbOrTx) {
  return {
    async jobDepth(): Promise<{ kind: string; state: string; n: number }[]> {
      const rows = await queryRows<{ kind: string; status: string; n: string | number }>(db, sql`select kind, status, count(*) as n from jobs where status in ('queued', 'running') group by kind, status`);
      return rows.map((r) => ({ kind: r.kind, state: r.status, n: Number(r.n) }));
    },
    async instancesByState(): Promise<{ state: string; driver: string; n: number }[]> {
      const rows = await queryRows<{ status: string; driver: string; n: string | number }>(
        db,
        sql`select i.status, m.driver, count(*) as n from instances i join machines m on m.id = i.machine_id group by i.status, m.driver`,
      );
      return rows.map((r) => ({ state: r.status, driver: r.driver, n: Number(r.n) }));
    },
    /** Every notification is kept (payment_notifications): counted by method and the outcome's first word. */
    async paymentNotifications(): Promise<{ method: string; outcome: string; n: number }[]> {
      const rows = await queryRows<{ method: string; outcome: string; n: string | number }>(
        db,
        sql`select method, split_part(split_part(outcome, ':', 1), ' ', 1) as outcome, count(*) as n from payment_notifications group by 1, 2`,
      );
      return rows.map((r) => ({ method: r.method, outcome: r.outcome, n: Number(r.n) }));
    },
  };
}
