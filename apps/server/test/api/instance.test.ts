import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { createTestClock } from '../helpers/clock.ts';
import { createFakeCompute, type FakeCompute } from '../fakes/compute.ts';
import { createFakeMeter, createInventory, type FakeMeter } from '../fakes/orders.ts';
import { instances, machines } from '../../src/db/schema/compute.ts';
import { ledgerEntries } from '../../src/db/schema/wallet.ts';
import { sshKeys } from '../../src/db/schema/ssh-key.ts';
import { INSTANCE_JOBS } from '../../src/modules/instance/instance.service.ts';

const YUAN = 10_000;
const DAY = 86_400_000;

describe.each(engines)('instances on %s', (engine) => {
  let t: TestApp;
  let compute: FakeCompute;
  let meter: FakeMeter;
  const clock = createTestClock(new Date());
  beforeAll(async () => {
    compute = createFakeCompute();
    meter = createFakeMeter();
    t = await buildTestApp({ engine, clock, overrides: { compute, meter }, env: { SSH_PORT: '2222' } });
  });
  afterAll(async () => {
    await t.close();
    compute.cleanup();
  });

  const post = (url: string, token: string, payload: object) => t.request({ method: 'POST', url, token, payload });
  const get = (url: string, token: string) => t.request({ method: 'GET', url, token });
  const row = async (id: string) => (await t.container.db.select().from(instances).where(eq(instances.id, id)))[0]!;
  const gpuUsed = async (machineId: number) => (await t.container.db.select({ n: machines.gpuUsed }).from(machines).where(eq(machines.id, machineId)))[0]!.n;
  const balanceOf = async (userId: number) => {
    t.container.wallet.forgetBalance(userId);
    return t.container.wallet.balanceOf(userId);
  };

  /** A user with `balance`, an instance of `chargeType` paid and (unless `run: false`) provisioned. */
  async function rent(opts: { chargeType?: 'payg' | 'prepaid'; balance?: number; gpuTotal?: number; gpuCount?: number; run?: boolean; user?: Awaited<ReturnType<typeof createUser>> } = {}) {
    const u = opts.user ?? (await createUser(t));
    const inv = await createInventory(t, { gpuTotal: opts.gpuTotal ?? 8 });
    await t.container.ledger.post({ tenantId: u.user.tenantId, userId: u.user.id, kind: 'recharge', amount: opts.balance ?? 5000 * YUAN, ref: `test:${Math.random()}` });
    const spec = { machineId: inv.machine.id, gpuCount: opts.gpuCount ?? 1, imageId: inv.image.id, name: '我的实例' };
    const order = (await post(opts.chargeType === 'prepaid' ? '/api/v1/order/prepay' : '/api/v1/order/payg', u.token, opts.chargeType === 'prepaid' ? { ...spec, period: 'month', quantity: 1 } : spec)).json().data;
    const paid = await post('/api/v1/order/pay', u.token, { orderId: order.id });
    if (paid.statusCode !== 200) throw new Error(`pay failed: ${paid.body}`);
    const id = paid.json().data.instanceId as string;
    if (opts.run !== false) await t.container.jobs.runDue();
    return { ...u, ...inv, order, id };
  }

  it('goes creating → running within the job, and shows the instance with its SSH command and password', async () => {
    const r = await rent({ run: false });
    const listed = (await get('/api/v1/instance/list', r.token)).json().data;
    expect(listed.total).toBe(1);
    expect(listed.list[0]).toMatchObject({ id: r.id, status: 'creating', name: '我的实例' });
    await t.container.jobs.runDue();
    const item = (await get('/api/v1/instance/list', r.token)).json().data.list[0];
    expect(item).toMatchObject({
      id: r.id,
      status: 'running',
      statusReason: '',
      gpuCount: 1,
      cpuCores: 2,
      memoryGb: 4,
      systemDiskGb: 30,
      dataDiskGb: 50,
      demo: true,
      chargeType: 'payg',
      hourly: 36_000,
      hostName: r.machine.hostName,
      imageName: r.image.name,
      ssh: { host: 'localhost', port: 2222, user: r.id, command: `ssh -p 2222 ${r.id}@localhost` },
      startedAt: expect.any(String),
    });
    expect(item.password).toMatch(/^[A-Za-z0-9]{16}$/);
    // The stored password is sealed, not plain, and its hash opens SSH.
    const stored = await row(r.id);
    expect(stored.passwordSealed).not.toContain(item.password);
    const target = await t.container.instances.sshTarget(r.id);
    expect(target).toMatchObject({ instanceId: r.id, userId: r.user.id, running: true });
    expect(await target!.checkPassword(item.password)).toBe(true);
    expect(await target!.checkPassword('wrong-password-1')).toBe(false);
    // The request's host name (without the port) when SSH_HOST is not set.
    const viaHost = (await t.request({ method: 'GET', url: '/api/v1/instance/list', token: r.token, headers: { host: 'localhost:8080' } })).json().data.list[0];
    expect(viaHost.ssh.host).toBe('localhost');
  });

  it('filters and pages the list, counts per status and sums the dashboard and storage', async () => {
    const u = await createUser(t);
    const a = await rent({ user: u });
    const b = await rent({ user: u, chargeType: 'prepaid' });
    await post('/api/v1/instance/modify_name', u.token, { instanceId: b.id, name: 'prepaid-box' });
    const page = (await t.request({ method: 'GET', url: '/api/v1/instance/list?page=1&pageSize=1', token: u.token })).json().data;
    expect(page.total).toBe(2);
    expect(page.list).toHaveLength(1);
    expect((await get('/api/v1/instance/list?page=5&pageSize=1', u.token)).json().data).toEqual({ list: [], total: 2 });
    expect((await get('/api/v1/instance/list?chargeType=prepaid', u.token)).json().data.list.map((i: { id: string }) => i.id)).toEqual([b.id]);
    expect((await get('/api/v1/instance/list?keyword=prepaid-b', u.token)).json().data.list.map((i: { id: string }) => i.id)).toEqual([b.id]);
    expect((await get(`/api/v1/instance/list?keyword=${a.id}`, u.token)).json().data.list.map((i: { id: string }) => i.id)).toEqual([a.id]);
    expect((await get('/api/v1/instance/list?keyword=%25', u.token)).json().data.total).toBe(0);
    expect((await get('/api/v1/instance/list?status=running', u.token)).json().data.total).toBe(2);
    const bad = await get('/api/v1/instance/list?status=flying', u.token);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().msg).toMatch(/实例状态不正确/);
    expect((await get('/api/v1/instance/list?pageSize=1000', u.token)).statusCode).toBe(400);
    const tags = (await get('/api/v1/instance/status_tag', u.token)).json().data;
    expect(tags).toContainEqual({ status: 'running', label: '运行中', count: 2 });
    expect(tags).toContainEqual({ status: 'stopped', label: '已关机', count: 0 });
    const dash = (await get('/api/v1/dashboard/common/instance', u.token)).json().data;
    expect(dash).toEqual({ total: 2, running: 2, stopped: 0, expiringSoon: 0 });
    // The user dropdown's count (SPEC §2): the same instances.
    expect((await get('/api/v1/user/detail', u.token)).json().data.instanceNum).toBe(2);
    expect((await get('/api/v1/dashboard/common/storage', u.token)).json().data).toEqual({ dataDiskGb: 100, systemDiskGb: 60, instances: 2 });
    const item = (await get(`/api/v1/instance/list?chargeType=prepaid`, u.token)).json().data.list[0];
    expect(item).toMatchObject({ chargeType: 'prepaid', period: 'month', hourly: 0, expiresAt: expect.any(String) });
    expect(new Date(item.releaseAt).getTime() - new Date(item.expiresAt).getTime()).toBe(7 * DAY);
  });

  it('stops pay-as-you-go: billing stops, its GPUs are freed and release is scheduled 15 days on', async () => {
    const r = await rent({ gpuCount: 2 });
    expect(await gpuUsed(r.machine.id)).toBe(2);
    const off = await post('/api/v1/ide-instance/power_off', r.token, { instanceId: r.id });
    expect(off.statusCode).toBe(200);
    expect(off.json().data.status).toBe('stopping');
    expect(meter.calls).toContainEqual(expect.objectContaining({ op: 'stopped', id: r.id }));
    await t.container.jobs.runDue();
    const stopped = await row(r.id);
    expect(stopped).toMatchObject({ status: 'stopped', gpuHeld: false });
    expect(stopped.releaseAt!.getTime() - stopped.stoppedAt!.getTime()).toBe(15 * DAY);
    expect(await gpuUsed(r.machine.id)).toBe(0);
    expect(compute.instances.get(r.id)?.state).toBe('stopped');
    const again = await post('/api/v1/ide-instance/power_off', r.token, { instanceId: r.id });
    expect(again.statusCode).toBe(409);
    expect(again.json().msg).toBe('实例当前状态为「已关机」，无法关机');
  });

  it('starts pay-as-you-go again only with one hour of balance and free GPUs', async () => {
    const r = await rent({ gpuTotal: 1, balance: 5 * YUAN });
    await post('/api/v1/ide-instance/power_off', r.token, { instanceId: r.id });
    await t.container.jobs.runDue();
    // Someone else takes the machine's only GPU meanwhile.
    await t.container.db.update(machines).set({ gpuUsed: 1 }).where(eq(machines.id, r.machine.id));
    const busy = await post('/api/v1/ide-instance/power_on', r.token, { instanceId: r.id });
    expect(busy.statusCode).toBe(409);
    expect(busy.json().msg).toMatch(/空闲 GPU 不足 1 张/);
    await t.container.db.update(machines).set({ gpuUsed: 0 }).where(eq(machines.id, r.machine.id));
    // Below one hour (¥3.60): refused with the shortfall.
    await t.container.ledger.post({ tenantId: r.user.tenantId, userId: r.user.id, kind: 'adjustment', amount: -3 * YUAN, ref: `test:drain-${r.id}` });
    const poor = await post('/api/v1/ide-instance/power_on', r.token, { instanceId: r.id });
    expect(poor.statusCode).toBe(409);
    expect(poor.json().msg).toBe('余额不足：按量计费实例开机需至少可支付一小时的费用 ¥3.60，还差 ¥1.60，请先充值');
    expect(await gpuUsed(r.machine.id)).toBe(0);
    await t.container.ledger.post({ tenantId: r.user.tenantId, userId: r.user.id, kind: 'recharge', amount: 10 * YUAN, ref: `test:topup-${r.id}` });
    const on = await post('/api/v1/ide-instance/power_on', r.token, { instanceId: r.id });
    expect(on.statusCode).toBe(200);
    expect(on.json().data.status).toBe('starting');
    expect(await gpuUsed(r.machine.id)).toBe(1);
    const startsBefore = meter.calls.filter((c) => c.op === 'started' && c.instance.id === r.id).length;
    await t.container.jobs.runDue();
    expect(await row(r.id)).toMatchObject({ status: 'running', gpuHeld: true, releaseAt: null });
    expect(meter.calls.filter((c) => c.op === 'started' && c.instance.id === r.id).length).toBe(startsBefore + 1);
  });

  it('keeps a prepaid instance’s GPUs while it is stopped', async () => {
    const r = await rent({ chargeType: 'prepaid' });
    await post('/api/v1/ide-instance/power_off', r.token, { instanceId: r.id });
    await t.container.jobs.runDue();
    expect(await row(r.id)).toMatchObject({ status: 'stopped', gpuHeld: true });
    expect(await gpuUsed(r.machine.id)).toBe(1);
    const on = await post('/api/v1/ide-instance/power_on', r.token, { instanceId: r.id });
    expect(on.statusCode).toBe(200);
    await t.container.jobs.runDue();
    expect((await row(r.id)).status).toBe('running');
  });

  it('releases: disks destroyed, GPUs freed, hidden from the list, and every later action is 404', async () => {
    const r = await rent();
    const res = await post('/api/v1/ide-instance/release', r.token, { instanceId: r.id });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.status).toBe('releasing');
    expect(meter.calls).toContainEqual(expect.objectContaining({ op: 'stopped', id: r.id }));
    await t.container.jobs.runDue();
    expect(await row(r.id)).toMatchObject({ status: 'released', gpuHeld: false, releasedAt: expect.any(Date) });
    expect(compute.instances.has(r.id)).toBe(false);
    expect(await gpuUsed(r.machine.id)).toBe(0);
    expect((await get('/api/v1/instance/list', r.token)).json().data.total).toBe(0);
    expect((await get('/api/v1/instance/list?includeReleased=true', r.token)).json().data.list[0]).toMatchObject({ id: r.id, status: 'released' });
    for (const url of ['/api/v1/ide-instance/power_on', '/api/v1/ide-instance/power_off', '/api/v1/ide-instance/release', '/api/v1/instance/init']) {
      const a = await post(url, r.token, { instanceId: r.id });
      expect({ url, status: a.statusCode, msg: a.json().msg }).toEqual({ url, status: 404, msg: '实例不存在' });
    }
    expect((await post('/api/v1/instance/modify_name', r.token, { instanceId: r.id, name: 'x' })).statusCode).toBe(404);
    expect((await post('/api/v1/instance/modify_password', r.token, { instanceId: r.id, password: 'abcd1234' })).statusCode).toBe(404);
    expect((await post('/api/v1/instance/change_image', r.token, { instanceId: r.id, imageId: r.image.id })).statusCode).toBe(404);
    expect(await t.container.instances.sshTarget(r.id)).toBeNull();
  });

  it('answers 404 for another user’s or tenant’s instance, and 400 for malformed ids', async () => {
    const r = await rent();
    const other = await createUser(t);
    const foreignTenant = await createUser(t, { host: '127.0.0.1' });
    for (const url of ['/api/v1/ide-instance/power_off', '/api/v1/ide-instance/release', '/api/v1/instance/init']) {
      expect((await post(url, other.token, { instanceId: r.id })).statusCode).toBe(404);
      expect((await t.request({ method: 'POST', url, token: foreignTenant.token, host: '127.0.0.1', payload: { instanceId: r.id } })).statusCode).toBe(404);
    }
    expect((await post('/api/v1/instance/modify_name', other.token, { instanceId: r.id, name: 'mine' })).statusCode).toBe(404);
    expect((await post('/api/v1/instance/modify_password', other.token, { instanceId: r.id, password: 'abcd1234' })).statusCode).toBe(404);
    expect((await get('/api/v1/instance/list', other.token)).json().data.total).toBe(0);
    const malformed = await post('/api/v1/ide-instance/power_off', r.token, { instanceId: 'i-ABC' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().msg).toMatch(/实例 ID 格式不正确/);
    expect((await post('/api/v1/ide-instance/power_off', r.token, { instanceId: 'i-zzzzzzzzzz' })).statusCode).toBe(404);
    await expect(t.container.instances.openTerminal({ tenantId: other.user.tenantId, userId: other.user.id }, r.id, { cols: 80, rows: 24 })).rejects.toMatchObject({ status: 404 });
    expect((await row(r.id)).status).toBe('running');
  });

  it('renames, changes the root password (SSH then takes the new one), and refuses weak passwords', async () => {
    const r = await rent();
    const renamed = await post('/api/v1/instance/modify_name', r.token, { instanceId: r.id, name: '  新名字  ' });
    expect(renamed.json().data.name).toBe('新名字');
    expect((await post('/api/v1/instance/modify_name', r.token, { instanceId: r.id, name: '' })).statusCode).toBe(400);
    const weak = await post('/api/v1/instance/modify_password', r.token, { instanceId: r.id, password: 'abcdefgh' });
    expect(weak.statusCode).toBe(400);
    expect(weak.json().msg).toMatch(/同时包含字母和数字/);
    const changed = await post('/api/v1/instance/modify_password', r.token, { instanceId: r.id, password: 'NewPass123' });
    expect(changed.statusCode).toBe(200);
    expect(changed.json().data.password).toBe('NewPass123');
    const target = await t.container.instances.sshTarget(r.id);
    expect(await target!.checkPassword('NewPass123')).toBe(true);
    await t.container.db.insert(sshKeys).values({ tenantId: r.user.tenantId, userId: r.user.id, name: 'k', type: 'ssh-ed25519', publicKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyForTests', fingerprint: `SHA256:${r.id}` });
    expect(await target!.publicKeys()).toEqual(['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyForTests']);
    const exec = await target!.exec({ command: 'echo hello && echo $HOSTNAME' });
    let out = '';
    exec.stdout.on('data', (d: Buffer) => (out += d.toString()));
    expect((await exec.exit).code).toBe(0);
    expect(out).toBe(`hello\n${r.id}\n`);
  });

  it('resets the system disk and changes the image of a stopped instance only', async () => {
    const r = await rent();
    const running = await post('/api/v1/instance/init', r.token, { instanceId: r.id });
    expect(running.statusCode).toBe(409);
    expect(running.json().msg).toBe('实例当前状态为「运行中」，无法重置系统');
    expect((await post('/api/v1/instance/change_image', r.token, { instanceId: r.id, imageId: r.image.id })).json().msg).toBe('实例当前状态为「运行中」，无法更换镜像');
    await post('/api/v1/ide-instance/power_off', r.token, { instanceId: r.id });
    await t.container.jobs.runDue();
    const reset = await post('/api/v1/instance/init', r.token, { instanceId: r.id });
    expect(reset.statusCode).toBe(200);
    expect(reset.json().data).toMatchObject({ status: 'creating', statusReason: '正在重置系统' });
    await t.container.jobs.runDue();
    expect(await row(r.id)).toMatchObject({ status: 'stopped', statusReason: '' });
    expect(compute.instances.get(r.id)?.resets).toBe(1);

    const other = await createInventory(t);
    const building = await createInventory(t, { imageStatus: 'building' });
    expect((await post('/api/v1/instance/change_image', r.token, { instanceId: r.id, imageId: 99_999_999 })).statusCode).toBe(404);
    const notReady = await post('/api/v1/instance/change_image', r.token, { instanceId: r.id, imageId: building.image.id });
    expect(notReady.statusCode).toBe(409);
    expect(notReady.json().msg).toMatch(/尚未就绪/);
    const changed = await post('/api/v1/instance/change_image', r.token, { instanceId: r.id, imageId: other.image.id });
    expect(changed.json().data).toMatchObject({ status: 'creating', imageId: other.image.id });
    await t.container.jobs.runDue();
    expect(await row(r.id)).toMatchObject({ status: 'stopped', imageId: other.image.id });
    expect(compute.instances.get(r.id)?.spec.image.id).toBe(other.image.id);
    expect(compute.instances.get(r.id)?.resets).toBe(2);
  });

  it('a failed provisioning ends failed with the reason, frees the GPUs and refunds the order exactly once', async () => {
    compute.switches.failCreate = 1;
    const r = await rent({ chargeType: 'prepaid', balance: 5000 * YUAN, gpuCount: 2 });
    const [inst] = await t.container.db.select().from(instances).where(eq(instances.id, r.id));
    expect(inst).toMatchObject({ status: 'failed', statusReason: '创建失败：计算节点出现故障，请稍后重试或联系客服', gpuHeld: false });
    expect(await gpuUsed(r.machine.id)).toBe(0);
    expect(await balanceOf(r.user.id)).toBe(5000 * YUAN);
    // The job again (a retry, a second replica, recovery): nothing more moves.
    const { enqueueJob } = await import('../../src/jobs/queue.ts');
    await enqueueJob(t.container.db, INSTANCE_JOBS.provision, { instanceId: r.id }, clock());
    await t.container.jobs.runDue();
    const refunds = await t.container.db.select().from(ledgerEntries).where(and(eq(ledgerEntries.userId, r.user.id), eq(ledgerEntries.kind, 'refund')));
    expect(refunds.map((e) => ({ amount: e.amount, ref: e.ref }))).toEqual([{ amount: r.order.amount, ref: `order:${r.order.id}` }]);
    expect(await balanceOf(r.user.id)).toBe(5000 * YUAN);
    expect(compute.instances.has(r.id)).toBe(false);
    const item = (await get('/api/v1/instance/list?status=failed', r.token)).json().data.list[0];
    expect(item).toMatchObject({ id: r.id, status: 'failed', statusReason: expect.stringContaining('创建失败') });
    expect((await post('/api/v1/ide-instance/power_on', r.token, { instanceId: r.id })).json().msg).toBe('实例当前状态为「创建失败」，无法开机');
    const released = await post('/api/v1/ide-instance/release', r.token, { instanceId: r.id });
    expect(released.statusCode).toBe(200);
    await t.container.jobs.runDue();
    expect((await row(r.id)).status).toBe('released');
    expect(await t.container.ledger.check(r.user.tenantId)).toEqual([]);
  });

  it('retries a retryable driver failure and then runs', async () => {
    compute.switches.failStart = 1;
    compute.switches.retryable = true;
    try {
      const r = await rent();
      expect((await row(r.id)).status).toBe('creating'); // first attempt failed, retry queued with back-off
      clock.advance(5_000);
      await t.container.jobs.runDue();
      expect((await row(r.id)).status).toBe('running');
    } finally {
      compute.switches.retryable = false;
    }
  });

  it('platform stop and release (metering’s PlatformActions) act with the reason', async () => {
    const r = await rent();
    await t.container.instances.platformStop(r.id, '账户欠费，实例已停止');
    await t.container.jobs.runDue();
    expect(await row(r.id)).toMatchObject({ status: 'stopped', statusReason: '账户欠费，实例已停止', gpuHeld: false });
    await t.container.instances.platformStop(r.id, 'again'); // not running: nothing
    expect((await row(r.id)).statusReason).toBe('账户欠费，实例已停止');
    await t.container.instances.platformRelease(r.id, '已关机 15 天，自动释放');
    await t.container.jobs.runDue();
    expect(await row(r.id)).toMatchObject({ status: 'released', statusReason: '已关机 15 天，自动释放' });
  });

  it('recovers after a restart: running instances the driver lost are started again, or stopped with the reason', async () => {
    const a = await rent();
    const b = await rent();
    compute.reboot();
    compute.switches.failStartOf.add(b.id);
    try {
      expect(await t.container.instances.recover()).toBeGreaterThanOrEqual(2);
      await t.container.jobs.runDue();
    } finally {
      compute.switches.failStartOf.clear();
    }
    expect(await row(a.id)).toMatchObject({ status: 'running' });
    expect(compute.instances.get(a.id)?.state).toBe('running');
    expect(await row(b.id)).toMatchObject({ status: 'stopped', statusReason: '服务器重启后未能恢复运行：计算节点出现故障，请稍后重试或联系客服', gpuHeld: false });
    expect(await gpuUsed(b.machine.id)).toBe(0);
    expect(meter.calls).toContainEqual(expect.objectContaining({ op: 'stopped', id: b.id }));
    // A second start-up finds a running in the driver: it is left alone (not started again).
    const starts = () => compute.calls.filter((c) => c.op === 'start' && c.id === a.id).length;
    const before = starts();
    await t.container.instances.recover();
    await t.container.jobs.runDue();
    expect(starts()).toBe(before);
    expect((await row(b.id)).status).toBe('stopped');
  });

  it('the web shell opens a terminal in a running instance only', async () => {
    const r = await rent();
    const owner = { tenantId: r.user.tenantId, userId: r.user.id };
    const term = await t.container.instances.openTerminal(owner, r.id, { cols: 80, rows: 24 });
    let out = '';
    term.output.on('data', (d: Buffer) => (out += d.toString()));
    term.write('echo shell-$((6*7))\nexit\n');
    await term.exit;
    expect(out).toContain('演示机器：无物理 GPU');
    expect(out).toContain('shell-42');
    await post('/api/v1/ide-instance/power_off', r.token, { instanceId: r.id });
    await t.container.jobs.runDue();
    await expect(t.container.instances.openTerminal(owner, r.id, { cols: 80, rows: 24 })).rejects.toMatchObject({ status: 409, message: '实例当前状态为「已关机」，请先开机再打开终端' });
  });
});

describe('metering hooks run inside the status-changing transaction', () => {
  it('a failing hook rolls the status change back (and the job retries it)', async () => {
    const compute = createFakeCompute();
    const meter = createFakeMeter();
    let failStarted = 1;
    let failStopped = 1;
    const flaky = {
      ...meter,
      async started(tx: Parameters<typeof meter.started>[0], i: Parameters<typeof meter.started>[1], at: Date) {
        if (failStarted-- > 0) throw new Error('meter down');
        return meter.started(tx, i, at);
      },
      async stopped(tx: Parameters<typeof meter.stopped>[0], id: string, at: Date) {
        if (failStopped-- > 0) throw new Error('meter down');
        return meter.stopped(tx, id, at);
      },
    };
    const clock = createTestClock(new Date());
    const t = await buildTestApp({ clock, overrides: { compute, meter: flaky } });
    try {
      const u = await createUser(t);
      const inv = await createInventory(t);
      await t.container.ledger.post({ tenantId: u.user.tenantId, userId: u.user.id, kind: 'recharge', amount: 100 * YUAN, ref: 'test:flaky' });
      const order = (await t.request({ method: 'POST', url: '/api/v1/order/payg', token: u.token, payload: { machineId: inv.machine.id, gpuCount: 1, imageId: inv.image.id } })).json().data;
      const id = (await t.request({ method: 'POST', url: '/api/v1/order/pay', token: u.token, payload: { orderId: order.id } })).json().data.instanceId as string;
      await t.container.jobs.runDue();
      const status = async () => (await t.container.db.select().from(instances).where(eq(instances.id, id)))[0]!.status;
      expect(await status()).toBe('creating'); // started() threw: not running, nothing metered
      expect(meter.calls).toEqual([]);
      clock.advance(5_000);
      await t.container.jobs.runDue();
      expect(await status()).toBe('running');
      expect(meter.calls.map((c) => c.op)).toEqual(['started']);
      // Powering off with the meter failing: refused whole (still running, not billed as stopped).
      const off = await t.request({ method: 'POST', url: '/api/v1/ide-instance/power_off', token: u.token, payload: { instanceId: id } });
      expect(off.statusCode).toBe(500);
      expect(await status()).toBe('running');
      expect((await t.request({ method: 'POST', url: '/api/v1/ide-instance/power_off', token: u.token, payload: { instanceId: id } })).statusCode).toBe(200);
      expect(meter.calls.map((c) => c.op)).toEqual(['started', 'stopped']);
    } finally {
      await t.close();
      compute.cleanup();
    }
  });
});
