/**
 * A settlement in a process of its own, for the crash test (test/api/metering-crash.test.ts): it
 * settles the database at SETTLE_URL as of SETTLE_NOW, and is killed with SIGKILL mid-way.
 */
import { openPostgres } from '../../src/db/client.ts';
import { createLedgerService } from '../../src/modules/wallet/ledger.service.ts';
import { createMeteringService } from '../../src/modules/metering/metering.service.ts';

const url = process.env.SETTLE_URL;
const now = new Date(process.env.SETTLE_NOW ?? '');
if (!url || Number.isNaN(now.getTime())) throw new Error('SETTLE_URL and SETTLE_NOW are required');
const database = await openPostgres(url, { max: 2 });
const clock = () => now;
const ledger = createLedgerService({ db: database.db, clock });
const refuse = async () => {
  throw new Error('not in this child');
};
const metering = createMeteringService({ db: database.db, clock, ledger, platform: { platformStop: refuse, platformRelease: refuse } });
process.stdout.write('settling\n');
const r = await metering.settle(now);
process.stdout.write(`settled ${JSON.stringify(r)}\n`);
await database.close();
