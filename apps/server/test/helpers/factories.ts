import { hashPassword } from '../../src/lib/password.ts';
import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import { sessions, users } from '../../src/db/schema/user.ts';
import { wallets } from '../../src/db/schema/wallet.ts';
import type { UserRow } from '../../src/modules/user/user.repository.ts';
import { randomToken, sha256 } from '../../src/lib/crypto.ts';
import type { TestApp } from './app.ts';

const DAY_MS = 86_400_000;

/** A phone no seeded account uses: 137 + 8 random digits. */
export function randomPhone(): string {
  return `137${crypto.randomInt(0, 100_000_000).toString().padStart(8, '0')}`;
}

/**
 * Inserts a user of the tenant on `host` (default localhost) and a live session, the way
 * account.service's startSession does (only the token's sha256 is stored). Without `password` the
 * hash is a placeholder: such users sign in by the returned token only.
 */
export async function createUser(
  t: TestApp,
  opts: { host?: string; role?: 'user' | 'operator'; phone?: string; userName?: string; password?: string } = {},
): Promise<{ token: string; user: UserRow }> {
  const tenant = await t.container.tenants.resolve(opts.host ?? 'localhost');
  const phone = opts.phone ?? randomPhone();
  const [user] = await t.container.db
    .insert(users)
    .values({ tenantId: tenant.id, phone, userName: opts.userName ?? `测试${phone.slice(-4)}`, passwordHash: opts.password ? await hashPassword(opts.password) : 'factory:no-password', role: opts.role ?? 'user' })
    .returning();
  if (!user) throw new Error('factory: user insert failed');
  await t.container.db.insert(wallets).values({ userId: user.id, tenantId: tenant.id });
  const token = randomToken();
  const now = new Date();
  await t.container.db.insert(sessions).values({ tenantId: tenant.id, userId: user.id, tokenHash: sha256(token), createdAt: now, lastSeenAt: now, expiresAt: new Date(now.getTime() + 7 * DAY_MS) });
  return { token, user };
}

/** A session for the operator the seed created on the tenant of `host`. */
export async function signInSeededOperator(t: TestApp, host = 'localhost'): Promise<{ token: string; user: UserRow }> {
  const tenant = await t.container.tenants.resolve(host);
  const rows = await t.container.db.select().from(users).where(eq(users.tenantId, tenant.id));
  const user = rows.find((u) => u.role === 'operator');
  if (!user) throw new Error(`factory: no seeded operator on ${host}`);
  const token = randomToken();
  const now = new Date();
  await t.container.db.insert(sessions).values({ tenantId: tenant.id, userId: user.id, tokenHash: sha256(token), createdAt: now, lastSeenAt: now, expiresAt: new Date(now.getTime() + 7 * DAY_MS) });
  return { token, user };
}
