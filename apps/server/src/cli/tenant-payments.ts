/**
 * `npm run tenant:payments -- <tenant-code> <settings.json>`: sets a tenant's payment gateway
 * settings (docs/operator-guide.md). The file is checked before anything is written. Uses
 * DATABASE_URL, else the PGlite data in DATA_DIR (stop the server first: PGlite is one process's
 * database; a running server picks the change up within 30 s).
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { loadConfig } from '../config.ts';
import { openPglite, openPostgres } from '../db/client.ts';
import { createTenantRepository } from '../modules/tenant/tenant.repository.ts';

const pem = z.string().min(32, 'must be a PEM key or its base64 body');
const settingsSchema = z.strictObject({
  sandbox: z.strictObject({ enabled: z.boolean(), alongsideRealGateways: z.boolean().optional() }).optional(),
  alipay: z
    .strictObject({
      enabled: z.boolean(),
      appId: z.string().min(1),
      privateKeyPem: pem,
      alipayPublicKeyPem: pem,
      sellerId: z.string().optional(),
      gatewayUrl: z.url().optional(),
      mode: z.enum(['page', 'qr']),
    })
    .optional(),
  wechat: z
    .strictObject({
      enabled: z.boolean(),
      mchId: z.string().min(1),
      appId: z.string().min(1),
      merchantSerialNo: z.string().min(1),
      merchantPrivateKeyPem: pem,
      apiV3Key: z.string().length(32, 'the API v3 key is exactly 32 characters'),
      platformPublicKeyPem: pem,
      platformSerialNo: z.string().min(1),
      baseUrl: z.url().optional(),
    })
    .optional(),
});

const [code, file] = process.argv.slice(2);
if (!code || !file) {
  console.error('usage: npm run tenant:payments -- <tenant-code> <settings.json>');
  process.exit(2);
}
const parsed = settingsSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
if (!parsed.success) {
  for (const issue of parsed.error.issues) console.error(`${issue.path.join('.') || '(file)'}: ${issue.message}`);
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
