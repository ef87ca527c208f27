import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { DISK_WARN_RATIO, MAX_ACTIVE_COPIES } from '@suanli/contract/instance-ops';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { createTestClock } from '../helpers/clock.ts';
import { createFakeCompute, type FakeCompute } from '../fakes/compute.ts';
import { createInventory } from '../fakes/orders.ts';
import { dataCopies, instances, machines } from '../../src/db/schema/compute.ts';
import { jobs } from '../../src/db/schema/job.ts';
import { ComputeError } from '../../src/adapters/compute/port.ts';
import { COPY_ATTEMPTS, COPY_JOB, CopyMessages } from '../../src/modules/instance/data-copy.service.ts';

const YUAN = 10_000;
const GIB = 1024 ** 3;
const quiet = { info: () => {}, error: () => {} };

describe.each(engines)('data copies, migratable instances and disk usage on %s', (engine) => {
  let t: TestApp;
  let compute: FakeCompute;
  const clock = createTestClock(new Date());
  beforeAll(async () => {
    compute = createFakeCompute();
    t = await buildTestApp({ engine, clock, overrides: { compute } });
  });
  afterAll(async () => {
    await t.close();
    compute.cleanup();
  });

  const post = (url: string, token: string, payload: object) => t.request({ method: 'POST', url, token, payload });
  const get = (url: string, token: string) => t.request({ method: 'GET', url, token });
  const copyRow = async (id: string) => (await t.container.db.select().from(dataCopies).where(eq(dataCopies.id, id)))[0]!;
  const jobsOf = (copyId: string) => t.container.db.select().from(jobs).where(sql`${jobs.kind} = ${COPY_JOB} and ${jobs.payload} ->> 'copyId' = ${copyId}`);
  const dataDir = (id: string) => path.join(compute.instances.get(id)!.dir, 'data');
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  type User = Awaited<ReturnType<typeof createUser>>;
  /** An instance of `u` on its own machine: provisioned, and stopped unless `stop: false`. */
  async function rent(u: User, opts: { stop?: boolean } = {}) {
    const inv = await createInventory(t);
    await t.container.ledger.post({ tenantId: u.user.tenantId, userId: u.user.id, kind: 'recharge', amount: 100 * YUAN, ref: `test:${Math.random()}` });
    const order = (await post('/api/v1/order/payg', u.token, { machineId: inv.machine.id, gpuCount: 1, imageId: inv.image.id, name: `实例${Math.random().toString(36).slice(2, 6)}` })).json().data;
    const paid = await post('/api/v1/order/pay', u.token, { orderId: order.id });
    if (paid.statusCode !== 200) throw new Error(`pay failed: ${paid.body}`);
    const id = paid.json().data.instanceId as string;
    await t.container.jobs.runDue();
    if (opts.stop !== false) {
      await post('/api/v1/ide-instance/power_off', u.token, { instanceId: id });
      await t.container.jobs.runDue();
    }
    return { id, machine: inv.machine, name: order.instanceName as string };
  }
  /** `n` files of `size` bytes under data/<dir> of an instance. */
  function writeFiles(id: string, dir: string, n: number, size = 1000) {
    fs.mkdirSync(path.join(dataDir(id), dir), { recursive: true });
    for (let i = 0; i < n; i++) fs.writeFileSync(path.join(dataDir(id), dir, `f${i}.bin`), Buffer.alloc(size, i));
  }
  async function until(what: () => Promise<boolean>, ms = 10_000) {
    const end = Date.now() + ms;
    while (!(await what())) {
      if (Date.now() > end) throw new Error('timed out waiting');
      await sleep(25);
    }
  }

  it('copies files from a stopped instance to a running one as a job; both are busy meanwhile; status by id, by instance and latest', async () => {
    const u = await createUser(t);
    const src = await rent(u);
    const dst = await rent(u, { stop: false });
    writeFiles(src.id, 'models', 3, 2048);
    const res = await post('/api/v1/instance/copy_data', u.token, { sourceInstanceId: src.id, targetInstanceId: dst.id, sourcePath: '/models/', targetPath: 'from-src' });
    expect(res.statusCode).toBe(200);
    const job = res.json().data;
    expect(job).toMatchObject({ sourceInstanceId: src.id, sourceInstanceName: src.name, targetInstanceId: dst.id, targetInstanceName: dst.name, sourcePath: 'models', targetPath: 'from-src', status: 'queued', percent: 0, error: '', startedAt: null });
    expect(job.id).toMatch(/^cp-[a-z0-9]{12}$/);
    expect(await jobsOf(job.id)).toHaveLength(1);
    // Busy: neither side starts, stops or is released while the copy is queued or running.
    expect((await post('/api/v1/ide-instance/power_on', u.token, { instanceId: src.id })).json().msg).toBe('实例正在进行数据拷贝，请等待拷贝完成或先终止拷贝');
    expect((await post('/api/v1/ide-instance/power_off', u.token, { instanceId: dst.id })).statusCode).toBe(409);
    expect((await post('/api/v1/ide-instance/release', u.token, { instanceId: src.id })).statusCode).toBe(409);

    await t.container.jobs.runDue();
    const done = (await get(`/api/v1/instance/copy_data_status?id=${job.id}`, u.token)).json().data.list;
    expect(done).toEqual([expect.objectContaining({ id: job.id, status: 'succeeded', percent: 100, files: 3, copiedBytes: 3 * 2048, totalBytes: 3 * 2048, startedAt: expect.any(String), finishedAt: expect.any(String) })]);
    for (let i = 0; i < 3; i++) expect(fs.readFileSync(path.join(dataDir(dst.id), 'from-src', `f${i}.bin`))).toEqual(Buffer.alloc(2048, i));
    expect(compute.calls).toContainEqual({ op: 'copyData', id: dst.id });
    // Free again.
    expect((await post('/api/v1/ide-instance/power_on', u.token, { instanceId: src.id })).statusCode).toBe(200);
    await t.container.jobs.runDue();

    const third = await rent(u);
    const other = (await post('/api/v1/instance/copy_data', u.token, { sourceInstanceId: dst.id, targetInstanceId: third.id })).json().data;
    const byInstance = (await get(`/api/v1/instance/copy_data_status?instanceId=${third.id}`, u.token)).json().data.list;
    expect(byInstance.map((j: { id: string }) => j.id)).toEqual([other.id]);
    clock.advance(1000);
    const latest = (await get('/api/v1/instance/copy_data_status', u.token)).json().data.list;
    expect(latest.map((j: { id: string }) => j.id).sort()).toEqual([job.id, other.id].sort());
    await t.container.jobs.runDue();
    expect((await copyRow(other.id)).status).toBe('succeeded');
  });

  it('refuses bad copies: the same instance, another user’s (404 like a missing one), released, creating, failed without disks; malformed input', async () => {
    const u = await createUser(t);
    const a = await rent(u);
    const b = await rent(u);
    const stranger = await createUser(t);
    const theirs = await rent(stranger);
    const copy = (token: string, body: object) => post('/api/v1/instance/copy_data', token, body);
    const expectError = async (token: string, body: object, status: number, msg: string | RegExp) => {
      const r = await copy(token, body);
      expect({ status: r.statusCode, msg: r.json().msg }).toEqual({ status, msg: typeof msg === 'string' ? msg : expect.stringMatching(msg) });
    };
    await expectError(u.token, { sourceInstanceId: a.id, targetInstanceId: a.id }, 400, '源实例和目标实例不能是同一个实例');
    await expectError(u.token, { sourceInstanceId: theirs.id, targetInstanceId: a.id }, 404, '源实例不存在');
    await expectError(u.token, { sourceInstanceId: a.id, targetInstanceId: theirs.id }, 404, '目标实例不存在');
    await expectError(u.token, { sourceInstanceId: 'i-zzzzzzzzzz', targetInstanceId: a.id }, 404, '源实例不存在');
    await expectError(stranger.token, { sourceInstanceId: a.id, targetInstanceId: b.id }, 404, '源实例不存在');
    const foreignTenant = await createUser(t, { host: '127.0.0.1' });
    expect((await t.request({ method: 'POST', url: '/api/v1/instance/copy_data', host: '127.0.0.1', token: foreignTenant.token, payload: { sourceInstanceId: a.id, targetInstanceId: b.id } })).statusCode).toBe(404);
    await expectError(u.token, { sourceInstanceId: a.id, targetInstanceId: b.id, sourcePath: 'x/../../etc' }, 400, /路径不能包含 \.\./);
    await expectError(u.token, { sourceInstanceId: a.id, targetInstanceId: b.id, targetPath: 'a\u0001b' }, 400, /控制字符/);
    await expectError(u.token, { sourceInstanceId: a.id }, 400, /.+/);
    await expectError(u.token, { sourceInstanceId: 'i-BAD', targetInstanceId: b.id }, 400, /实例 ID 格式不正确/);
    await expectError(u.token, { sourceInstanceId: a.id, targetInstanceId: b.id, extra: true }, 400, /.+/);
    expect((await t.request({ method: 'POST', url: '/api/v1/instance/copy_data', payload: { sourceInstanceId: a.id, targetInstanceId: b.id } })).statusCode).toBe(401);

    // States: creating (a reset), failed without disks, released.
    await post('/api/v1/instance/init', u.token, { instanceId: b.id });
    await expectError(u.token, { sourceInstanceId: a.id, targetInstanceId: b.id }, 409, /目标实例「.+」正在创建或重置系统/);
    await t.container.jobs.runDue();
    compute.switches.failCreate = 1;
    const broken = await rent(u, { stop: false });
    expect((await t.container.db.select().from(instances).where(eq(instances.id, broken.id)))[0]!.status).toBe('failed');
    await expectError(u.token, { sourceInstanceId: broken.id, targetInstanceId: a.id }, 409, /创建失败，没有可拷贝的数据盘/);
    await post('/api/v1/ide-instance/release', u.token, { instanceId: b.id });
    await t.container.jobs.runDue();
    await expectError(u.token, { sourceInstanceId: a.id, targetInstanceId: b.id }, 404, '目标实例不存在');

    // Status and terminate of someone else's copy: 404; malformed ids: 400.
    const c = await rent(u);
    const mine = (await copy(u.token, { sourceInstanceId: a.id, targetInstanceId: c.id })).json().data;
    expect((await get(`/api/v1/instance/copy_data_status?id=${mine.id}`, stranger.token)).statusCode).toBe(404);
    expect((await get('/api/v1/instance/copy_data_status?id=cp-zzzzzzzzzzzz', u.token)).statusCode).toBe(404);
    expect((await get('/api/v1/instance/copy_data_status?id=nope', u.token)).statusCode).toBe(400);
    expect((await get(`/api/v1/instance/copy_data_status?instanceId=${a.id}`, stranger.token)).statusCode).toBe(404);
    expect((await post('/api/v1/instance/terminate_copy', stranger.token, { id: mine.id })).statusCode).toBe(404);
    expect((await post('/api/v1/instance/terminate_copy', u.token, { id: 'cp-1' })).statusCode).toBe(400);
    await t.container.jobs.runDue();
    const finished = await post('/api/v1/instance/terminate_copy', u.token, { id: mine.id });
    expect(finished.statusCode).toBe(409);
    expect(finished.json().msg).toBe('拷贝任务已完成，无法终止');
  });

  it(`allows at most ${MAX_ACTIVE_COPIES} copies queued or running per user (429), counting under a lock`, async () => {
    const u = await createUser(t);
    const boxes: Awaited<ReturnType<typeof rent>>[] = [];
    for (let i = 0; i < MAX_ACTIVE_COPIES + 2; i++) boxes.push(await rent(u));
    // More creations at once than allowed: exactly MAX_ACTIVE_COPIES succeed.
    const answers = await Promise.all(boxes.slice(1).map((b) => post('/api/v1/instance/copy_data', u.token, { sourceInstanceId: boxes[0]!.id, targetInstanceId: b.id })));
    expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(MAX_ACTIVE_COPIES);
    const refused = answers.filter((a) => a.statusCode !== 200);
    expect(refused.map((a) => a.statusCode)).toEqual([429]);
    expect(refused[0]!.json().msg).toBe(`同时进行的拷贝任务最多 ${MAX_ACTIVE_COPIES} 个，请等待已有任务完成或终止后再试`);
    // Terminating one (still queued) makes room; its job then does nothing.
    const first = answers.find((a) => a.statusCode === 200)!.json().data;
    const term = await post('/api/v1/instance/terminate_copy', u.token, { id: first.id });
    expect(term.json().data).toMatchObject({ id: first.id, status: 'terminated', finishedAt: expect.any(String) });
    const again = boxes.slice(1).find((b) => !answers.some((a) => a.statusCode === 200 && a.json().data.targetInstanceId === b.id))!;
    expect((await post('/api/v1/instance/copy_data', u.token, { sourceInstanceId: boxes[0]!.id, targetInstanceId: again.id })).statusCode).toBe(200);
    const calls = compute.calls.filter((c) => c.op === 'copyData' && c.id === first.targetInstanceId).length;
    await t.container.jobs.runDue();
    expect((await copyRow(first.id)).status).toBe('terminated');
    expect(compute.calls.filter((c) => c.op === 'copyData' && c.id === first.targetInstanceId).length).toBe(calls);
  });

  it('shows progress while copying and terminates a running copy (the attempt aborts; what was copied stays)', async () => {
    const u = await createUser(t);
    const src = await rent(u);
    const dst = await rent(u);
    writeFiles(src.id, '', 10, 500);
    compute.switches.copyDelayMs = 120;
    try {
      const job = (await post('/api/v1/instance/copy_data', u.token, { sourceInstanceId: src.id, targetInstanceId: dst.id })).json().data;
      const running = t.container.jobs.runDue();
      await until(async () => (await copyRow(job.id)).copiedBytes > 0);
      const mid = (await get(`/api/v1/instance/copy_data_status?id=${job.id}`, u.token)).json().data.list[0];
      expect(mid).toMatchObject({ status: 'running', totalBytes: 5000, startedAt: expect.any(String) });
      expect(mid.percent).toBeGreaterThan(0);
      expect(mid.percent).toBeLessThan(100);
      const term = await post('/api/v1/instance/terminate_copy', u.token, { id: job.id });
      expect(term.statusCode).toBe(200);
      expect(term.json().data.status).toBe('terminated');
      await running;
      const row = await copyRow(job.id);
      expect(row.status).toBe('terminated');
      const copied = fs.readdirSync(dataDir(dst.id)).length;
      expect(copied).toBeGreaterThan(0);
      expect(copied).toBeLessThan(10);
      expect((await post('/api/v1/instance/terminate_copy', u.token, { id: job.id })).json().msg).toBe('拷贝任务已终止，无法终止');
      // Free again.
      expect((await post('/api/v1/ide-instance/power_on', u.token, { instanceId: src.id })).statusCode).toBe(200);
    } finally {
      compute.switches.copyDelayMs = 0;
    }
  });

  it('a terminate from another process (only the row changes) aborts the attempt at its next progress write', async () => {
    const u = await createUser(t);
    const src = await rent(u);
    const dst = await rent(u);
    writeFiles(src.id, '', 12, 100);
    compute.switches.copyDelayMs = 100;
    try {
      const job = (await post('/api/v1/instance/copy_data', u.token, { sourceInstanceId: src.id, targetInstanceId: dst.id })).json().data;
      const running = t.container.jobs.runDue();
      await until(async () => (await copyRow(job.id)).copiedBytes > 0);
      await t.container.db.update(dataCopies).set({ status: 'terminated', finishedAt: new Date() }).where(eq(dataCopies.id, job.id));
      await running;
      expect(fs.readdirSync(dataDir(dst.id)).length).toBeLessThan(12);
      expect((await copyRow(job.id)).status).toBe('terminated');
    } finally {
      compute.switches.copyDelayMs = 0;
    }
  });

  it('resumes after the server stops mid-copy: the row stays running, the job runs again and completes', async () => {
    const u = await createUser(t);
    const src = await rent(u);
    const dst = await rent(u);
    writeFiles(src.id, 'big', 8, 4096);
    compute.switches.copyDelayMs = 80;
    const job = (await post('/api/v1/instance/copy_data', u.token, { sourceInstanceId: src.id, targetInstanceId: dst.id, sourcePath: 'big', targetPath: 'big' })).json().data;
    const loop = t.container.jobs.start(quiet, 20);
    try {
      await until(async () => (await copyRow(job.id)).copiedBytes > 0);
    } finally {
      await loop.stop(0); // the server stops: the running attempt is aborted
      compute.switches.copyDelayMs = 0;
    }
    await sleep(200); // the abandoned attempt notices its signal
    const mid = await copyRow(job.id);
    expect(mid.status).toBe('running');
    expect(mid.copiedBytes).toBeLessThan(8 * 4096);
    expect((await jobsOf(job.id)).map((j) => j.status)).toEqual(['queued']);
    // Still busy across the restart.
    expect((await post('/api/v1/ide-instance/power_on', u.token, { instanceId: src.id })).statusCode).toBe(409);
    clock.advance(30_000); // the retry's back-off
    await t.container.jobs.runDue();
    expect(await copyRow(job.id)).toMatchObject({ status: 'succeeded', copiedBytes: 8 * 4096, totalBytes: 8 * 4096, files: 8, error: '' });
    expect(fs.readdirSync(path.join(dataDir(dst.id), 'big')).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `f${i}.bin`).sort());
  });

  it('recovers copies a dead process held: queued again (resume), or failed with the reason after the last attempt; a live heartbeat is left alone', async () => {
    const u = await createUser(t);
    const src = await rent(u);
    const dst = await rent(u);
    const dst2 = await rent(u);
    const dst3 = await rent(u);
    writeFiles(src.id, '', 2);
    const create = async (target: string) => (await post('/api/v1/instance/copy_data', u.token, { sourceInstanceId: src.id, targetInstanceId: target })).json().data.id as string;
    const [dead, exhausted, alive] = [await create(dst.id), await create(dst2.id), await create(dst3.id)];
    const longAgo = new Date(clock().getTime() - 5 * 60_000);
    // What a process that died mid-attempt leaves: the row running with an old heartbeat, the job running.
    const holdAsDead = async (copyId: string, attempts: number, heartbeat: Date) => {
      await t.container.db.update(dataCopies).set({ status: 'running', startedAt: longAgo, updatedAt: heartbeat, copiedBytes: 1000, totalBytes: 2000 }).where(eq(dataCopies.id, copyId));
      await t.container.db.execute(sql`update ${jobs} set status = 'running', attempts = ${attempts}, locked_at = ${longAgo.toISOString()}::timestamptz where kind = ${COPY_JOB} and payload ->> 'copyId' = ${copyId}`);
    };
    await holdAsDead(dead, 1, longAgo);
    await holdAsDead(exhausted, COPY_ATTEMPTS, longAgo);
    await holdAsDead(alive, 1, clock());
    expect(await t.container.instances.recover()).toBeGreaterThanOrEqual(1);
    expect((await jobsOf(dead)).map((j) => j.status)).toEqual(['queued']);
    expect((await jobsOf(alive)).map((j) => j.status)).toEqual(['running']);
    expect(await copyRow(exhausted)).toMatchObject({ status: 'failed', error: CopyMessages.interrupted, finishedAt: expect.any(Date) });
    expect((await jobsOf(exhausted)).map((j) => j.status)).toEqual(['failed']);
    await t.container.jobs.runDue();
    expect(await copyRow(dead)).toMatchObject({ status: 'succeeded', files: 2 });
    expect((await copyRow(alive)).status).toBe('running');
    // The leader's periodic pass picks the live one up once its heartbeat goes quiet.
    clock.advance(120_000);
    expect(await t.container.instances.copies.recoverStale()).toBe(1);
    await t.container.jobs.runDue();
    expect((await copyRow(alive)).status).toBe('succeeded');
  });

  it('a driver failure is retried, then fails with a clear reason; a missing source path fails at once', async () => {
    const u = await createUser(t);
    const src = await rent(u);
    const dst = await rent(u);
    writeFiles(src.id, '', 1);
    const original = compute.copyData;
    let calls = 0;
    compute.copyData = async () => {
      calls++;
      throw new ComputeError('fake: the node went away', true);
    };
    try {
      const job = (await post('/api/v1/instance/copy_data', u.token, { sourceInstanceId: src.id, targetInstanceId: dst.id })).json().data;
      for (let i = 0; i < COPY_ATTEMPTS; i++) {
        await t.container.jobs.runDue();
        if (i < COPY_ATTEMPTS - 1) expect((await copyRow(job.id)).status).toBe('running'); // a retried row continues
        clock.advance(120_000);
      }
      expect(calls).toBe(COPY_ATTEMPTS);
      const failed = (await get(`/api/v1/instance/copy_data_status?id=${job.id}`, u.token)).json().data.list[0];
      expect(failed).toMatchObject({ status: 'failed', error: CopyMessages.retriesExhausted, finishedAt: expect.any(String) });
      expect((await post('/api/v1/ide-instance/power_on', u.token, { instanceId: src.id })).statusCode).toBe(200);
    } finally {
      compute.copyData = original;
    }
    await t.container.jobs.runDue();
    await post('/api/v1/ide-instance/power_off', u.token, { instanceId: src.id });
    await t.container.jobs.runDue();
    const missing = (await post('/api/v1/instance/copy_data', u.token, { sourceInstanceId: src.id, targetInstanceId: dst.id, sourcePath: 'no/such/dir' })).json().data;
    await t.container.jobs.runDue();
    expect(await copyRow(missing.id)).toMatchObject({ status: 'failed', error: CopyMessages.missing });
  });

  it('user_left_migrate lists the caller’s instances whose disks exist, offline machines first, with the reason', async () => {
    const u = await createUser(t);
    const stopped = await rent(u);
    const running = await rent(u, { stop: false });
    const offline = await rent(u);
    await t.container.db.update(machines).set({ online: false }).where(eq(machines.id, offline.machine.id));
    const crashed = await rent(u, { stop: false });
    await t.container.db.update(instances).set({ status: 'failed', statusReason: 'x' }).where(eq(instances.id, crashed.id)); // failed after running: disks kept
    const released = await rent(u);
    await post('/api/v1/ide-instance/release', u.token, { instanceId: released.id });
    compute.switches.failCreate = 1;
    const neverMade = await rent(u, { stop: false });
    await t.container.jobs.runDue();
    const stranger = await createUser(t);
    await rent(stranger);

    const res = await get('/api/v1/instance/user_left_migrate', u.token);
    expect(res.statusCode).toBe(200);
    const list = res.json().data.list as { instanceId: string; reason: string; machineOnline: boolean }[];
    expect(list[0]).toEqual({ instanceId: offline.id, name: offline.name, status: 'stopped', machineId: offline.machine.id, hostName: offline.machine.hostName, machineOnline: false, dataDiskGb: 50, reason: '机器已下线' });
    const byId = new Map(list.map((i) => [i.instanceId, i]));
    expect(byId.get(stopped.id)).toMatchObject({ status: 'stopped', machineOnline: true, reason: '已关机' });
    expect(byId.get(running.id)).toMatchObject({ status: 'running', reason: '运行中' });
    expect(byId.get(crashed.id)).toMatchObject({ status: 'failed', reason: '实例异常，磁盘仍保留' });
    expect(byId.has(released.id)).toBe(false);
    expect(byId.has(neverMade.id)).toBe(false);
    expect(list).toHaveLength(4);
    expect((await get('/api/v1/instance/user_left_migrate', stranger.token)).json().data.list).toHaveLength(1);
    expect((await t.request({ method: 'GET', url: '/api/v1/instance/user_left_migrate' })).statusCode).toBe(401);
  });

  it('disk_usage reads each instance’s disks through the driver, warns above 90 %, and shows zeros for one it can’t read', async () => {
    const u = await createUser(t);
    const full = await rent(u, { stop: false });
    const calm = await rent(u);
    const lost = await rent(u);
    compute.switches.dataUsedBytes.set(full.id, Math.ceil(50 * GIB * (DISK_WARN_RATIO + 0.01)));
    compute.switches.systemUsedBytes.set(full.id, 1_000_000);
    compute.switches.dataUsedBytes.set(calm.id, 10 * GIB);
    compute.switches.systemUsedBytes.set(calm.id, Math.ceil(30 * GIB * (DISK_WARN_RATIO + 0.05)));
    compute.instances.delete(lost.id); // the driver no longer knows it: usage() throws
    try {
      const res = await get('/api/v1/instance/disk_usage', u.token);
      expect(res.statusCode).toBe(200);
      const byId = new Map((res.json().data.list as { instanceId: string }[]).map((i) => [i.instanceId, i]));
      expect(byId.get(full.id)).toEqual({
        instanceId: full.id,
        name: full.name,
        status: 'running',
        systemDiskGb: 30,
        systemUsedBytes: 1_000_000,
        dataDiskGb: 50,
        dataUsedBytes: Math.ceil(50 * GIB * (DISK_WARN_RATIO + 0.01)),
        dataTotalBytes: 50 * GIB,
        warn: true,
      });
      expect(byId.get(calm.id)).toMatchObject({ status: 'stopped', dataUsedBytes: 10 * GIB, warn: true }); // the system disk is past 90 %
      expect(byId.get(lost.id)).toMatchObject({ systemUsedBytes: 0, dataUsedBytes: 0, dataTotalBytes: 0, warn: false });
      compute.switches.systemUsedBytes.set(calm.id, 0);
      expect((await get('/api/v1/instance/disk_usage', u.token)).json().data.list.find((i: { instanceId: string }) => i.instanceId === calm.id).warn).toBe(false);
      const stranger = await createUser(t);
      expect((await get('/api/v1/instance/disk_usage', stranger.token)).json().data.list).toEqual([]);
    } finally {
      compute.switches.dataUsedBytes.clear();
      compute.switches.systemUsedBytes.clear();
    }
  });
});
