/**
 * Notify handling latency: a signed sandbox notification for a pending payment, verified,
 * logged, marked paid and credited in one transaction, acknowledged. In-process (app.inject),
 * so the figure is the server's own work, on PGlite.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { loadConfig } from '../apps/server/src/config.ts';
import { createContainer } from '../apps/server/src/container.ts';
import { buildApp } from '../apps/server/src/app.ts';
import { seedDemo } from '../apps/server/src/db/seed.ts';
import { tenants } from '../apps/server/src/db/schema/tenant.ts';

export async function benchNotify(count = 300): Promise<string[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-bench-notify-'));
  const container = await createContainer(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', CAPTCHA: 'off', RATE_LIMIT: 'off' }));
  try {
    await seedDemo(container.db, () => {});
    const app = await buildApp(container);
    const [tenant] = await container.db.select().from(tenants).where(eq(tenants.code, 'demo'));
    if (!tenant) throw new Error('no demo tenant');
    const phone = '13612345678';
    await container.accounts.sendCode(tenant.id, { phone, purpose: 'register' });
    const code = container.smsInbox?.().find((m) => m.phone === phone)?.code ?? '';
    const { token } = await container.accounts.register(tenant.id, { phone, code, password: 'Bench2026pw' }, { ip: '127.0.0.1', userAgent: 'bench' });
    const headers = { host: 'localhost', authorization: `Bearer ${token}` };
    const ids: { id: string; amount: number }[] = [];
    for (let i = 0; i < count; i++) {
      const res = await app.inject({ method: 'POST', url: '/api/v1/payments', headers, payload: { amount: 100 * 10_000, method: 'sandbox' } });
      const data = res.json<{ data: { id: string; amount: number } }>().data;
      ids.push({ id: data.id, amount: data.amount });
    }
    const times: number[] = [];
    for (const p of ids) {
      const { body, signature } = container.sandboxGateway.sign({
        out_trade_no: p.id.replaceAll('-', ''),
        trade_no: `SBX${crypto.randomBytes(6).toString('hex')}`,
        amount: p.amount,
        status: 'paid',
        timestamp: new Date().toISOString(),
        nonce: crypto.randomBytes(8).toString('hex'),
      });
      const started = process.hrtime.bigint();
      const res = await app.inject({ method: 'POST', url: '/api/v1/payments/notify/sandbox', headers: { host: 'localhost', 'content-type': 'application/json', 'x-sandbox-signature': signature }, payload: body });
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (res.statusCode >= 300) throw new Error(`notify answered ${res.statusCode}: ${res.body}`);
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
    const mismatches = await container.ledger.check();
    await app.close();
    return [
      `[bench] notify handling (sandbox, ${count} notifications, PGlite, in-process): p50 ${at(0.5)} ms, p99 ${at(0.99)} ms`,
      `[bench] ledger check after the notifications: ${mismatches.length === 0 ? 'ok' : `${mismatches.length} mismatches`}`,
    ];
  } finally {
    await container.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
