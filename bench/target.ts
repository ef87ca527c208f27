/**
 * Benchmark target, run as a child process so the load generator doesn't share its event loop:
 * the real app (fresh data dir, demo seed, one signed-in user) and, in the same process, a bare
 * Fastify route as the yardstick. Prints one JSON line with the ports and a session token.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { loadConfig } from '../apps/server/src/config.ts';
import { createContainer } from '../apps/server/src/container.ts';
import { buildApp } from '../apps/server/src/app.ts';
import { seedDemo } from '../apps/server/src/db/seed.ts';
import { tenants } from '../apps/server/src/db/schema/tenant.ts';
import { eq } from 'drizzle-orm';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-bench-'));
const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', CAPTCHA: 'off', ...(process.env.BENCH_DATABASE_URL ? { DATABASE_URL: process.env.BENCH_DATABASE_URL } : {}) });
const container = await createContainer(config);
await seedDemo(container.db, () => {});
const webDist = process.env.WEB_DIST;
const app = await buildApp(container, webDist ? { webDist } : {});
await app.listen({ port: 0, host: '127.0.0.1' });

const [tenant] = await container.db.select().from(tenants).where(eq(tenants.code, 'demo'));
if (!tenant) throw new Error('no demo tenant');
const phone = '13712345678';
await container.accounts.sendCode(tenant.id, { phone, purpose: 'register' });
const inbox = container.smsInbox?.() ?? [];
const code = inbox.find((m) => m.phone === phone)?.code;
if (!code) throw new Error('no code');
const { token } = await container.accounts.register(tenant.id, { phone, code, password: 'Bench2026pw' }, { ip: '127.0.0.1', userAgent: 'bench' });

const bare = Fastify({ logger: false });
bare.get('/bare', async () => ({ code: 200, msg: '操作成功', data: { userName: 'bench', realNameAuth: false, uuid: '00000000-0000-0000-0000-000000000000' } }));
await bare.listen({ port: 0, host: '127.0.0.1' });

const portOf = (s: { address(): unknown }) => (s.address() as { port: number }).port;
console.log(JSON.stringify({ appPort: portOf(app.server), barePort: portOf(bare.server), token, engine: container.database.engine }));

process.on('SIGTERM', async () => {
  await bare.close();
  await app.close();
  await container.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
});
