/**
 * `npm run tenant:payments -- <tenant-code> <settings.json>`: sets a tenant's payment gateway
 * settings (docs/operator-guide.md). The file is checked before anything is written. Uses
 * DATABASE_URL, else the PGlite data in DATA_DIR (stop the server first: PGlite is one process's
 * database; a running server picks the change up within 30 s).
 */
import fs from 'node:fs';
import path from 'node:path';
import { tenantPaymentSettings } from '@suanli/contract/payment-settings';
import { createAlipayGateway } from '../adapters/payments/alipay.ts';
import { createWechatGateway } from '../adapters/payments/wechat.ts';
import { loadConfig } from '../config.ts';
import { openPglite, openPostgres } from '../db/client.ts';
import { alipayOptionsOf, wechatOptionsOf } from '../modules/payment/gateways.ts';
import { createTenantRepository } from '../modules/tenant/tenant.repository.ts';

const [code, file] = process.argv.slice(2);
if (!code || !file) {
  console.error('usage: npm run tenant:payments -- <tenant-code> <settings.json>');
  process.exit(2);
}
let json: unknown;
try {
  json = JSON.parse(fs.readFileSync(file, 'utf8'));
} catch (err) {
  console.error(`${file}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
const parsed = tenantPaymentSettings.safeParse(json);
if (!parsed.success) {
  for (const issue of parsed.error.issues) console.error(`${issue.path.join('.') || '(file)'}: ${issue.message}`);
  process.exit(1);
}
// Build the gateways once (no network): unreadable keys, a certificate that doesn't match the
// private key or doesn't chain to Alipay's root are refused here, not at the first payment.
try {
  if (parsed.data.alipay) createAlipayGateway(alipayOptionsOf(parsed.data.alipay));
  if (parsed.data.wechat) createWechatGateway(wechatOptionsOf(parsed.data.wechat));
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
const config = loadConfig();
const database = config.DATABASE_URL ? await openPostgres(config.DATABASE_URL, { max: 2 }) : await openPglite(path.join(config.dataDir, 'db'));
try {
  if (!(await createTenantRepository(database.db).setPaymentSettings(code, parsed.data))) {
    console.error(`no tenant with code ${code}`);
    process.exitCode = 1;
  } else {
    const enabled = Object.entries(parsed.data).filter(([, v]) => v?.enabled).map(([k]) => k);
    console.log(`tenant ${code}: payment settings saved; enabled: ${enabled.join(', ') || 'none'}`);
  }
} finally {
  await database.close();
}
