/**
 * `npm run ledger:check`: verifies every user's ledger against their balance and its hash chain
 * (naming the first broken entry of each user); exits 1 on any mismatch. Uses DATABASE_URL, else
 * the PGlite data in DATA_DIR (stop the server first: PGlite is one process's database; or ask a
 * running server: GET /api/v1/operate/ledger/check).
 */
import path from 'node:path';
import { loadConfig } from '../config.ts';
import { openPglite, openPostgres } from '../db/client.ts';
import { createLedgerService } from '../modules/wallet/ledger.service.ts';
import { systemClock } from '../lib/clock.ts';

const config = loadConfig();
const database = config.DATABASE_URL ? await openPostgres(config.DATABASE_URL, { max: 2 }) : await openPglite(path.join(config.dataDir, 'db'));
try {
  const mismatches = await createLedgerService({ db: database.db, clock: systemClock }).check();
  if (mismatches.length === 0) {
    console.log('ledger:check ok — every balance equals its ledger, every chain is unbroken');
  } else {
    for (const m of mismatches) console.error(`user ${m.userId}: ${m.problem}${m.entryId === null ? '' : ` (first broken entry ${m.entryId})`}: ${m.detail}`);
    console.error(`ledger:check FAILED — ${mismatches.length} mismatch(es)`);
    process.exitCode = 1;
  }
} finally {
  await database.close();
}
