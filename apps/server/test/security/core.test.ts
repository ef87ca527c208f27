/**
 * Security tests of issue #7 items 7 (the job queue), 18 (one scheduler leader; one request-encryption
 * key across replicas) and 22 (the ledger's hash chain). PostgreSQL ones run in the engines loop,
 * or are skipped without TEST_DATABASE_URL (CI sets it).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { drizzle } from 'drizzle-orm/pglite';
import { PGlite } from '@electric-sql/pglite';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser, signInSeededOperator } from '../helpers/factories.ts';
import crypto from 'node:crypto';
import pg from 'pg';
import { migrationsFolder, openPostgres, type Database, type Db } from '../../src/db/client.ts';
import { loadConfig } from '../../src/config.ts';
import { createContainer, type Container } from '../../src/container.ts';
import { buildApp } from '../../src/app.ts';
import { seedDemo } from '../../src/db/seed.ts';
import { users } from '../../src/db/schema/user.ts';
import { wallets } from '../../src/db/schema/wallet.ts';
import { hashPassword } from '../../src/lib/password.ts';
import { createScheduler } from '../../src/jobs/schedule.ts';
import { advisoryLockLeadership, singleProcessLeadership } from '../../src/jobs/leader.ts';
import { createFakeSms } from '../fakes/sms.ts';
import { encryptLikeClient, decryptLikeClient } from '../helpers/app.ts';
import * as schema from '../../src/db/schema/index.ts';
import { createLedgerService } from '../../src/modules/wallet/ledger.service.ts';
import { systemClock } from '../../src/lib/clock.ts';

const YUAN = 10_000;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

/** A real HTTP server on 127.0.0.1 that accepts requests and never answers them. */
async function blackHole() {
  const pending: http.ServerResponse[] = [];
  const server = http.createServer((_req, res) => void pending.push(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`,
    /** Requests received and still unanswered (their client hasn't given up). */
    waiting: () => pending.filter((r) => !r.req.destroyed).length,
    async close() {
      for (const r of pending) r.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe.each(engines)('#7 the job queue (%s)', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ engine });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => t.close());

  const balance = async (token: string) => (await t.request({ method: 'GET', url: '/api/v1/account/balance', token })).json<{ data: { balance: number } }>().data.balance;
  /** A pending sandbox payment, paid at the sandbox; its signed notification goes to `notifyUrl`. */
  const paidAtSandbox = async (token: string, notifyUrl: string) => {
    const res = await t.request({ method: 'POST', url: '/api/v1/payments', token, payload: { amount: 10 * YUAN, method: 'sandbox' } });
    expect(res.statusCode).toBe(200);
    const { id } = res.json<{ data: { id: string } }>().data;
    await t.container.sandboxGateway.settle({ outTradeNo: id.replaceAll('-', ''), amount: 10 * YUAN, notifyUrl }, 'paid');
  };

  it('#7 four notification targets that never answer don’t hold back an honest credit', async () => {
    const holes = await Promise.all(Array.from({ length: 4 }, () => blackHole()));
    try {
      const victims = await Promise.all(holes.map(() => createUser(t)));
      for (const [i, hole] of holes.entries()) await paidAtSandbox(victims[i]!.token, hole.url);
      // Queued after the four, so a queue running one job at a time reaches it only when they time out.
      const { token } = await createUser(t);
      const port = (t.app.server.address() as AddressInfo).port;
      await paidAtSandbox(token, `http://127.0.0.1:${port}/api/v1/payments/notify/sandbox`);

      const loop = t.container.jobs.start(quiet, 50);
      try {
        const deadline = Date.now() + 20_000;
        while ((await balance(token)) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
        expect(await balance(token)).toBe(10 * YUAN);
        // Credited while all four requests were still hanging: it didn't wait for any of them.
        expect(holes.map((h) => h.waiting())).toEqual([1, 1, 1, 1]);
      } finally {
        await loop.stop(0);
      }
    } finally {
      await Promise.all(holes.map((h) => h.close()));
      // Their retries are no business of the next test.
      await t.container.db.execute(sql`update jobs set status = 'failed' where status <> 'done'`);
    }
  }, 60_000);

  it('#7 a target that never answers is given up after the outbound timeout, and retried later', async () => {
    const hole = await blackHole();
    try {
      const { token } = await createUser(t);
      await paidAtSandbox(token, hole.url);
      expect(await t.container.jobs.runDue()).toBe(1);
      // The job's deadline (5 s, not the old 10 s) aborted the request: the connection is gone.
      for (let i = 0; i < 100 && hole.waiting() > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(hole.waiting()).toBe(0);
      const rows = await t.container.db.execute(sql`select status, attempts, last_error from jobs where payload->>'notify_url' = ${hole.url}`);
      expect((rows as unknown as { rows: { status: string; attempts: number; last_error: string }[] }).rows).toEqual([
        expect.objectContaining({ status: 'queued', attempts: 1, last_error: expect.stringMatching(/timed out after 5000 ms/) }),
      ]);
    } finally {
      await hole.close();
    }
  }, 30_000);
});

describe.each(engines)('#22 the ledger proves itself (%s)', (engine) => {
  let t: TestApp;
  let operatorToken: string;
  beforeAll(async () => {
    t = await buildTestApp({ engine });
    operatorToken = (await signInSeededOperator(t)).token;
  });
  afterAll(() => t.close());

  /** A user with four credits of ¥1..¥4; returns the entry ids in posting order. */
  async function userWithEntries() {
    const { user } = await createUser(t);
    const ids: number[] = [];
    for (let i = 1; i <= 4; i++) {
      const { entry } = await t.container.ledger.post({ tenantId: user.tenantId, userId: user.id, kind: 'recharge', amount: i * YUAN, ref: `sec:${user.id}:${i}` });
      ids.push(entry.id);
    }
    return { user, ids };
  }
  const check = async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/operate/ledger/check', token: operatorToken });
    expect(res.statusCode).toBe(200);
    return res.json<{ data: { ok: boolean; mismatches: { userId: number; problem: string; entryId: number | null; detail: string }[] } }>().data;
  };
  const problemsOf = async (userId: number) => (await check()).mismatches.filter((m) => m.userId === userId);

  it('#22 an edited entry (amount, with the balances after it and the wallet fixed up to match) is named', async () => {
    const { user, ids } = await userWithEntries();
    expect(await problemsOf(user.id)).toEqual([]);
    // A careful edit: ¥2 becomes ¥200 and every later balance and the wallet follow, so the sums agree.
    const delta = 198 * YUAN;
    await t.container.db.execute(sql`update ledger_entries set amount = amount + ${delta} where id = ${ids[1]}`);
    await t.container.db.execute(sql`update ledger_entries set balance_after = balance_after + ${delta} where user_id = ${user.id} and id >= ${ids[1]}`);
    await t.container.db.execute(sql`update wallets set balance = balance + ${delta} where user_id = ${user.id}`);
    expect(await problemsOf(user.id)).toEqual([expect.objectContaining({ problem: 'chain', entryId: ids[1], detail: expect.stringMatching(/hash/) })]);
  });

  it('#22 an edited reference or kind is named', async () => {
    const { user, ids } = await userWithEntries();
    await t.container.db.execute(sql`update ledger_entries set kind = 'refund', ref = 'forged' where id = ${ids[2]}`);
    expect(await problemsOf(user.id)).toEqual([expect.objectContaining({ problem: 'chain', entryId: ids[2] })]);
  });

  it('#22 a deleted entry (balances fixed up to match) is named by the entry after it', async () => {
    const { user, ids } = await userWithEntries();
    await t.container.db.execute(sql`delete from ledger_entries where id = ${ids[1]}`);
    await t.container.db.execute(sql`update ledger_entries set balance_after = balance_after - ${2 * YUAN} where user_id = ${user.id} and id > ${ids[1]}`);
    await t.container.db.execute(sql`update wallets set balance = balance - ${2 * YUAN} where user_id = ${user.id}`);
    expect(await problemsOf(user.id)).toEqual([expect.objectContaining({ problem: 'chain', entryId: ids[2] })]);
  });

  it('#22 deleting the newest entries (balance fixed up) is evident', async () => {
    const { user, ids } = await userWithEntries();
    await t.container.db.execute(sql`delete from ledger_entries where id = ${ids[3]}`);
    await t.container.db.execute(sql`update wallets set balance = balance - ${4 * YUAN} where user_id = ${user.id}`);
    expect(await problemsOf(user.id)).toEqual([expect.objectContaining({ problem: 'chain', entryId: ids[2] })]);
  });

  it('#22 an inserted entry (with a plausible hash, balances matching) is named', async () => {
    const { user } = await userWithEntries();
    const [inserted] = await t.container.db.execute(sql`
      insert into ledger_entries (tenant_id, user_id, kind, amount, balance_after, ref, memo, hash)
      select tenant_id, user_id, 'adjustment', ${50 * YUAN}, balance_after + ${50 * YUAN}, 'gift', '', hash
      from ledger_entries where user_id = ${user.id} order by id desc limit 1
      returning id`).then((r) => (r as unknown as { rows: { id: string }[] }).rows);
    await t.container.db.execute(sql`update wallets set balance = balance + ${50 * YUAN} where user_id = ${user.id}`);
    expect(await problemsOf(user.id)).toEqual([expect.objectContaining({ problem: 'chain', entryId: Number(inserted!.id) })]);
    // Posting goes on chaining off the wallet's hash, so the forgery stays evident.
    await t.container.ledger.post({ tenantId: user.tenantId, userId: user.id, kind: 'recharge', amount: YUAN, ref: `sec:${user.id}:after` });
    expect(await problemsOf(user.id)).toEqual([expect.objectContaining({ problem: 'chain', entryId: Number(inserted!.id) })]);
  });

  it('#22 concurrent postings of one user keep a valid chain, in which a moved time is named', async () => {
    const { user } = await createUser(t);
    await Promise.all(Array.from({ length: 50 }, (_, i) => t.container.ledger.post({ tenantId: user.tenantId, userId: user.id, kind: 'recharge', amount: YUAN, ref: `sec:conc:${i}` })));
    expect(await problemsOf(user.id)).toEqual([]);
    const [victim] = ((await t.container.db.execute(sql`select id from ledger_entries where user_id = ${user.id} order by id offset 25 limit 1`)) as unknown as { rows: { id: string }[] }).rows;
    await t.container.db.execute(sql`update ledger_entries set created_at = created_at - interval '1 microsecond' where id = ${victim!.id}`);
    expect(await problemsOf(user.id)).toEqual([expect.objectContaining({ problem: 'chain', entryId: Number(victim!.id) })]);
  });
});

describe('#22 the migration backfills the chain of entries written before it', () => {
  it('#22 entries from before the hash column verify after migrating', async () => {
    // The migrations up to 0002 (before the chain), then rows as the old code wrote them, then the rest.
    const journal = JSON.parse(fs.readFileSync(path.join(migrationsFolder, 'meta/_journal.json'), 'utf8')) as { entries: { tag: string }[] };
    const hashAt = journal.entries.findIndex((e) => fs.readFileSync(path.join(migrationsFolder, `${e.tag}.sql`), 'utf8').includes('"last_hash"'));
    expect(hashAt).toBeGreaterThan(0);
    const before = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-mig-'));
    try {
      fs.mkdirSync(path.join(before, 'meta'));
      fs.writeFileSync(path.join(before, 'meta/_journal.json'), JSON.stringify({ ...journal, entries: journal.entries.slice(0, hashAt) }));
      for (const e of journal.entries.slice(0, hashAt)) fs.copyFileSync(path.join(migrationsFolder, `${e.tag}.sql`), path.join(before, `${e.tag}.sql`));
      const client = await PGlite.create();
      const db = drizzle(client, { schema });
      await migrate(db, { migrationsFolder: before });
      await db.execute(sql`insert into tenants (code, title, settings) values ('t', 't', '{}'::jsonb)`);
      await db.execute(sql`insert into users (tenant_id, phone, user_name, password_hash) select id, '13700000001', 'a', 'x' from tenants`);
      await db.execute(sql`insert into users (tenant_id, phone, user_name, password_hash) select id, '13700000002', 'b', 'x' from tenants`);
      await db.execute(sql`insert into wallets (user_id, tenant_id, balance) select id, tenant_id, 35000 from users`);
      await db.execute(sql`
        insert into ledger_entries (tenant_id, user_id, kind, amount, balance_after, ref, memo, created_at)
        select u.tenant_id, u.id, 'recharge', v.amount, v.after, 'old:' || v.n || ':' || u.id, '充值', now() - make_interval(mins => 10 - v.n)
        from users u cross join (values (1, 10000, 10000), (2, 20000, 30000), (3, 5000, 35000)) v(n, amount, after)`);
      await migrate(db, { migrationsFolder });
      const ledger = createLedgerService({ db: db as unknown as Db, clock: systemClock });
      expect(await ledger.check()).toEqual([]);
      // and new postings chain off the backfilled hash
      const [u] = (await db.execute(sql`select id, tenant_id from users order by id limit 1`)).rows as { id: number; tenant_id: number }[];
      await ledger.post({ tenantId: Number(u!.tenant_id), userId: Number(u!.id), kind: 'recharge', amount: 1, ref: 'new' });
      expect(await ledger.check()).toEqual([]);
      await db.execute(sql`update ledger_entries set ref = 'x' where ref = ${`old:2:${u!.id}`}`);
      expect((await ledger.check()).map((m) => m.problem)).toEqual(['chain']);
      await client.close();
    } finally {
      fs.rmSync(before, { recursive: true, force: true });
    }
  });
});

const PG_URL = process.env.TEST_DATABASE_URL;

/** A fresh PostgreSQL database opened by `n` separate pools, as `n` replicas would. */
async function replicasOnOneDatabase(n: number): Promise<{ databases: Database[]; drop(): Promise<void> }> {
  if (!PG_URL) throw new Error('TEST_DATABASE_URL is not set');
  const name = `suanli_t_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  const databases: Database[] = [];
  for (let i = 0; i < n; i++) databases.push(await openPostgres(url.toString(), { max: 10 }));
  return {
    databases,
    async drop() {
      // A session still checked out (a failed assertion skipped its release) must not hang the drop.
      await Promise.all(databases.map((d) => Promise.race([d.close().catch(() => undefined), new Promise((r) => setTimeout(r, 2_000))])));
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

describe.skipIf(!PG_URL)('#18 one scheduler leader among replicas (postgres)', () => {
  it('#18 two schedulers on one database: exactly one runs each tick; when the leader stops, the other takes over', async () => {
    const { databases, drop } = await replicasOnOneDatabase(2);
    try {
      const runs = [0, 0];
      const leaderships = databases.map((d) => advisoryLockLeadership({ session: d.session! }));
      const schedulers = databases.map((_d, i) =>
        createScheduler({
          leadership: leaderships[i]!,
          tasks: [{ name: 'reconcile', everyMs: 0, run: async () => void runs[i]!++ }],
          log: quiet,
        }),
      );
      for (let round = 0; round < 10; round++) {
        const ran = await Promise.all(schedulers.map((s) => s.tick()));
        expect(ran.filter((r) => r.length > 0)).toHaveLength(1);
      }
      const leader = runs[0]! > 0 ? 0 : 1;
      const other = 1 - leader;
      expect(runs).toEqual(leader === 0 ? [10, 0] : [0, 10]);

      // The leader stops (started, then stopped like on SIGTERM): the other runs from its next tick on.
      await schedulers[leader]!.start().stop();
      for (let round = 0; round < 3; round++) {
        const ran = await Promise.all([schedulers[other]!.tick()]);
        expect(ran[0]).toEqual(['reconcile']);
      }
      expect(runs[other]).toBe(3);
      await leaderships[other]!.release();
    } finally {
      await drop();
    }
  }, 60_000);

  it('#18 a leader whose session dies stops leading, and the other replica takes over', async () => {
    const { databases, drop } = await replicasOnOneDatabase(2);
    try {
      const leaderships = databases.map((d) => advisoryLockLeadership({ session: d.session! }));
      expect(await leaderships[0]!.check()).toBe(true);
      expect(await leaderships[1]!.check()).toBe(false);
      // The leader's connection is cut (failover, network): PostgreSQL ends its session and lock.
      await databases[1]!.db.execute(sql`select pg_terminate_backend(pid, 5000) from pg_locks where locktype = 'advisory' and objid = 726551002 and granted`);
      // The lock went with the session: the other replica takes it at its next check, and the old
      // leader, finding its session gone, doesn't go on leading beside it.
      expect(await leaderships[1]!.check()).toBe(true);
      expect(await leaderships[0]!.check()).toBe(false);
      expect(await leaderships[0]!.check()).toBe(false);
      expect(await leaderships[1]!.check()).toBe(true);
      await Promise.all(leaderships.map((l) => l.release()));
    } finally {
      await drop();
    }
  }, 60_000);
});

describe('#18 on PGlite the single process leads', () => {
  it('#18 runs every tick', async () => {
    let runs = 0;
    const s = createScheduler({ leadership: singleProcessLeadership(), tasks: [{ name: 'x', everyMs: 0, run: async () => void runs++ }], log: quiet });
    await s.tick();
    await s.tick();
    expect(runs).toBe(2);
  });
});

describe.skipIf(!PG_URL)('#18 replicas agree on the request-encryption key (postgres)', () => {
  const env = { CAPTCHA: 'off', RATE_LIMIT: 'off', DATA_DIR: '/nonexistent-test-data', LOG_LEVEL: 'silent' };
  const containerOn = (database: Database, extra: Record<string, string> = {}) => createContainer(loadConfig({ ...env, ...extra }), { database, sms: createFakeSms() });

  it('#18 a sign-in encrypted with one replica’s public key succeeds on the other', async () => {
    const { databases, drop } = await replicasOnOneDatabase(2);
    const containers: Container[] = [];
    try {
      for (const d of databases) containers.push(await containerOn(d));
      await seedDemo(containers[0]!.db, () => {});
      const [a, b] = await Promise.all(containers.map((c) => buildApp(c)));
      const tenant = await containers[0]!.tenants.resolve('localhost');
      const [user] = await containers[0]!.db.insert(users).values({ tenantId: tenant.id, phone: '13755550001', userName: 'r', passwordHash: await hashPassword('Right2026pw') }).returning();
      await containers[0]!.db.insert(wallets).values({ userId: user!.id, tenantId: tenant.id });

      const publicKey = (await a!.inject({ method: 'GET', url: '/api/v1/crypto/public-key', headers: { host: 'localhost' } })).json<{ data: { publicKey: string } }>().data.publicKey;
      const enc = encryptLikeClient(JSON.stringify({ phone: '13755550001', password: 'Right2026pw' }), publicKey);
      const res = await b!.inject({ method: 'POST', url: '/user/login/password', payload: enc.body, headers: { host: 'localhost', 'content-type': 'text/plain;charset=utf-8', 'encrypt-key': enc.header } });
      const answer = res.headers['encrypt-key'] ? JSON.parse(decryptLikeClient(res.body, enc.aesKey)) : res.json();
      expect(answer).toMatchObject({ code: 200, data: { token: expect.any(String) } });
      await Promise.all([a!.close(), b!.close()]);
    } finally {
      await drop();
    }
  }, 60_000);

  it('#18 a replica configured with another key refuses to start, naming the fix; a sealed key needs the secret', async () => {
    const { databases, drop } = await replicasOnOneDatabase(1);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-key-'));
    try {
      const db = databases[0]!;
      await containerOn(db, { KEY_ENCRYPTION_SECRET: 'a-long-operator-secret' });
      // the private key is not stored readable
      const stored = ((await db.db.execute(sql`select private_key, private_key_format from server_keys`)) as unknown as { rows: { private_key: string; private_key_format: string }[] }).rows[0]!;
      expect(stored.private_key_format).toBe('aes-256-gcm');
      expect(stored.private_key).not.toMatch(/PRIVATE KEY/);

      const other = path.join(dir, 'other.pem');
      fs.writeFileSync(other, crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
      await expect(containerOn(db, { RSA_PRIVATE_KEY_FILE: other, KEY_ENCRYPTION_SECRET: 'a-long-operator-secret' })).rejects.toThrow(/RSA_PRIVATE_KEY_FILE .*other replicas.*DELETE FROM server_keys/s);
      await expect(containerOn(db)).rejects.toThrow(/set KEY_ENCRYPTION_SECRET/);
      await expect(containerOn(db, { KEY_ENCRYPTION_SECRET: 'not-the-right-secret' })).rejects.toThrow(/KEY_ENCRYPTION_SECRET does not open/);
      const same = await containerOn(db, { KEY_ENCRYPTION_SECRET: 'a-long-operator-secret' });
      expect(same.rsaKeys.source).toBe('database');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
      await drop();
    }
  }, 60_000);
});
