import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { MAX_PRIVATE_IMAGES } from '@suanli/contract/instance-ops';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { createFakeCompute, type FakeCompute } from '../fakes/compute.ts';
import { createInventory } from '../fakes/orders.ts';
import { images, instances, orders } from '../../src/db/schema/compute.ts';
import { jobs } from '../../src/db/schema/job.ts';
import { IMAGE_SNAPSHOT_JOB } from '../../src/modules/image/user-image.service.ts';

const YUAN = 10_000;

type User = Awaited<ReturnType<typeof createUser>>;

describe.each(engines)('snapshots, private images and the image community on %s', (engine) => {
  let t: TestApp;
  let compute: FakeCompute;
  let dataDir: string;
  beforeAll(async () => {
    compute = createFakeCompute();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'suanli-user-image-'));
    t = await buildTestApp({ engine, overrides: { compute }, env: { DATA_DIR: dataDir } });
  });
  afterAll(async () => {
    await t.close();
    compute.cleanup();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const req = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, u: User, payload?: object, host = 'localhost') => t.request({ method, url, token: u.token, payload, host });
  const imageRow = async (id: number) => (await t.container.db.select().from(images).where(eq(images.id, id)))[0]!;
  const instanceRow = async (id: string) => (await t.container.db.select().from(instances).where(eq(instances.id, id)))[0]!;

  async function fund(u: User) {
    await t.container.ledger.post({ tenantId: u.user.tenantId, userId: u.user.id, kind: 'recharge', amount: 5000 * YUAN, ref: `test:${Math.random()}` });
  }

  /** An order for `imageId` on a fresh machine of the user's tenant (not paid). */
  async function order(u: User, imageId: number, host = 'localhost') {
    const inv = await createInventory(t, { host });
    return req('POST', '/api/v1/order/payg', u, { machineId: inv.machine.id, gpuCount: 1, imageId, name: 'from-image' }, host);
  }

  /** A running instance of the user's, made through an order for `imageId` (a fresh platform image by default). */
  async function rent(u: User, opts: { imageId?: number; host?: string } = {}) {
    const host = opts.host ?? 'localhost';
    const inv = await createInventory(t, { host });
    await fund(u);
    const o = await req('POST', '/api/v1/order/payg', u, { machineId: inv.machine.id, gpuCount: 1, imageId: opts.imageId ?? inv.image.id, name: '我的实例' }, host);
    expect(o.statusCode, o.body).toBe(200);
    const paid = await req('POST', '/api/v1/order/pay', u, { orderId: o.json().data.id }, host);
    expect(paid.statusCode, paid.body).toBe(200);
    const id = paid.json().data.instanceId as string;
    await t.container.jobs.runDue();
    expect((await instanceRow(id)).status).toBe('running');
    return { id, inv, orderId: o.json().data.id as string };
  }

  async function stop(u: User, id: string, host = 'localhost') {
    const off = await req('POST', '/api/v1/ide-instance/power_off', u, { instanceId: id }, host);
    expect(off.statusCode, off.body).toBe(200);
    await t.container.jobs.runDue();
    expect((await instanceRow(id)).status).toBe('stopped');
  }

  /** A stopped instance with `file` written on its system disk. */
  async function stoppedWithFile(u: User, host = 'localhost', file = 'hello.txt') {
    const r = await rent(u, { host });
    await stop(u, r.id, host);
    const sys = path.join(compute.instances.get(r.id)!.dir, 'system', 'root');
    fs.mkdirSync(sys, { recursive: true });
    fs.writeFileSync(path.join(sys, file), `written in ${r.id}\n`);
    return r;
  }

  /** A ready private image saved from a new stopped instance of the user's. */
  async function savedImage(u: User, opts: { host?: string; name?: string; description?: string; share?: boolean } = {}) {
    const host = opts.host ?? 'localhost';
    const r = await stoppedWithFile(u, host);
    const res = await req('POST', '/api/v1/instance/snapshot', u, { instanceId: r.id, name: opts.name ?? '我的镜像', ...(opts.description !== undefined ? { description: opts.description } : {}) }, host);
    expect(res.statusCode, res.body).toBe(200);
    await t.container.jobs.runDue();
    const id = res.json().data.id as number;
    expect((await imageRow(id)).status).toBe('ready');
    if (opts.share) expect((await req('PUT', `/api/v1/image/private/${id}`, u, { shared: true }, host)).statusCode).toBe(200);
    return { ...r, imageId: id };
  }

  it('saves a stopped instance as a private image through the persisted job; the instance is busy meanwhile', async () => {
    const u = await createUser(t, { userName: '张三丰' });
    const r = await stoppedWithFile(u);
    const res = await req('POST', '/api/v1/instance/snapshot', u, { instanceId: r.id, name: '  训练环境  ', description: '装好了依赖' });
    expect(res.statusCode, res.body).toBe(200);
    const img = res.json().data;
    expect(img).toMatchObject({
      name: '训练环境',
      description: '装好了依赖',
      status: 'building',
      progress: 0,
      error: '',
      kind: 'private',
      mine: true,
      sourceInstanceId: r.id,
      sourceInstanceName: '我的实例',
      baseImageName: r.inv.image.name,
      shared: false,
      sharedAt: null,
      authorName: '张**',
      useCount: 0,
      inUse: false,
      os: 'Debian 12',
      contents: ['bash'],
    });
    const row = await imageRow(img.id);
    expect(row.slug).toMatch(new RegExp(`^u${u.user.id}-[a-z0-9]{10}$`));
    expect(row).toMatchObject({ tenantId: u.user.tenantId, ownerUserId: u.user.id, parentImageId: r.inv.image.id, rootPath: '/nonexistent/test-root', published: true });
    const layer = path.join(dataDir, 'images', 'private', row.slug);
    expect(row.layers).toEqual([layer]);
    // The job was enqueued with the row.
    const queued = await t.container.db.select().from(jobs).where(eq(jobs.kind, IMAGE_SNAPSHOT_JOB));
    expect(queued.map((j) => j.payload)).toContainEqual({ imageId: img.id, instanceId: r.id });

    // Busy while it builds: no start, no second snapshot.
    const on = await req('POST', '/api/v1/ide-instance/power_on', u, { instanceId: r.id });
    expect(on.statusCode).toBe(409);
    expect(on.json().msg).toMatch(/正在保存为镜像/);
    const again = await req('POST', '/api/v1/instance/snapshot', u, { instanceId: r.id, name: '第二个' });
    expect(again.statusCode).toBe(409);
    expect(again.json().msg).toMatch(/正在保存为镜像/);
    // Listed as the instance's snapshot, building.
    const snaps = (await req('GET', `/api/v1/instance/snapshot?instanceId=${r.id}`, u)).json().data.list;
    expect(snaps.map((s: { id: number; status: string }) => [s.id, s.status])).toEqual([[img.id, 'building']]);
    // A building image can't be deleted or shared.
    const del = await req('DELETE', `/api/v1/image/private/${img.id}`, u);
    expect(del.statusCode).toBe(409);
    expect(del.json().msg).toMatch(/正在保存中/);
    const share = await req('PUT', `/api/v1/image/private/${img.id}`, u, { shared: true });
    expect(share.statusCode).toBe(409);
    expect(share.json().msg).toMatch(/保存完成后才能分享/);

    await t.container.jobs.runDue();
    expect(compute.calls).toContainEqual({ op: 'saveSystemLayer', id: r.id });
    const ready = (await req('GET', `/api/v1/image/private/${img.id}`, u)).json().data;
    expect(ready).toMatchObject({ status: 'ready', progress: 100, error: '' });
    expect(ready.sizeBytes).toBeGreaterThan(0);
    expect(fs.readFileSync(path.join(layer, 'root', 'root', 'hello.txt'), 'utf8')).toBe(`written in ${r.id}\n`);
    // Free again.
    const on2 = await req('POST', '/api/v1/ide-instance/power_on', u, { instanceId: r.id });
    expect(on2.statusCode, on2.body).toBe(200);
  });

  it('writes the progress while the layer is copied', async () => {
    const u = await createUser(t);
    const r = await stoppedWithFile(u);
    const id = (await req('POST', '/api/v1/instance/snapshot', u, { instanceId: r.id, name: '看进度' })).json().data.id as number;
    const real = compute.saveSystemLayer;
    const seen: number[] = [];
    compute.saveSystemLayer = async (_id, dir, opts) => {
      fs.mkdirSync(path.join(dir, 'root'), { recursive: true });
      opts?.onProgress?.({ copiedBytes: 50, totalBytes: 100, files: 1 });
      opts?.onProgress?.({ copiedBytes: 60, totalBytes: 100, files: 1 }); // within 2 s: not written
      await new Promise((res) => setTimeout(res, 100));
      seen.push((await req('GET', `/api/v1/image/private/${id}`, u)).json().data.progress);
      return { sizeBytes: 4096 };
    };
    try {
      await t.container.jobs.runDue();
    } finally {
      compute.saveSystemLayer = real;
    }
    expect(seen).toEqual([50]);
    const done = await imageRow(id);
    expect(done).toMatchObject({ status: 'ready', progress: 100, sizeBytes: 4096 + (await imageRow(r.inv.image.id)).sizeBytes });
  });

  it('runs a snapshot cut short again (the row stays building), and ends it failed on the last attempt', async () => {
    const u = await createUser(t);
    const r = await stoppedWithFile(u);
    const res = await req('POST', '/api/v1/instance/snapshot', u, { instanceId: r.id, name: '被中断' });
    const id = res.json().data.id as number;
    const service = t.container.images.users!;
    const real = compute.saveSystemLayer;
    const ctl = new AbortController();
    ctl.abort();
    compute.saveSystemLayer = async (_id, dir, opts) => {
      fs.mkdirSync(path.join(dir, 'root'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'root', 'partial'), 'x');
      if (opts?.signal?.aborted) throw new Error('aborted');
      return { sizeBytes: 1 };
    };
    try {
      await expect(service.runSnapshotJob({ imageId: id, instanceId: r.id }, { signal: ctl.signal, attempt: 1 })).rejects.toThrow('aborted');
      expect((await imageRow(id)).status).toBe('building');
      await service.runSnapshotJob({ imageId: id, instanceId: r.id }, { signal: ctl.signal, attempt: 3 });
    } finally {
      compute.saveSystemLayer = real;
    }
    const failed = await imageRow(id);
    expect(failed).toMatchObject({ status: 'failed', error: '保存镜像超时或被中断，请重试' });
    expect(fs.existsSync(failed.layers[0]!)).toBe(false);
    // The queued job finds it no longer building and does nothing.
    await t.container.jobs.runDue();
    expect((await imageRow(id)).status).toBe('failed');
    expect((await req('POST', '/api/v1/ide-instance/power_on', u, { instanceId: r.id })).statusCode).toBe(200);
  });

  it('refuses a running, foreign, missing or malformed instance and bad names', async () => {
    const u = await createUser(t);
    const other = await createUser(t);
    const r = await rent(u);
    const running = await req('POST', '/api/v1/instance/snapshot', u, { instanceId: r.id, name: 'x' });
    expect(running.statusCode).toBe(409);
    expect(running.json().msg).toBe('实例当前状态为「运行中」，请先关机再保存镜像');
    await stop(u, r.id);
    expect((await req('POST', '/api/v1/instance/snapshot', other, { instanceId: r.id, name: 'x' })).statusCode).toBe(404);
    expect((await req('POST', '/api/v1/instance/snapshot', u, { instanceId: 'i-zzzzzzzzzz', name: 'x' })).statusCode).toBe(404);
    const cases: [object, RegExp][] = [
      [{ instanceId: 'nope', name: 'x' }, /实例 ID 格式不正确/],
      [{ instanceId: r.id, name: 'x'.repeat(41) }, /镜像名称不能超过 40 个字符/],
      [{ instanceId: r.id, name: '   ' }, /请输入镜像名称/],
      [{ instanceId: r.id }, /请输入镜像名称/],
      [{ instanceId: r.id, name: 'a\u0007b' }, /控制字符/],
      [{ instanceId: r.id, name: 'x', description: 'd'.repeat(501) }, /镜像描述不能超过 500 个字符/],
      [{ instanceId: r.id, name: 'x', extra: 1 }, /./],
    ];
    for (const [body, msg] of cases) {
      const res = await req('POST', '/api/v1/instance/snapshot', u, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().msg).toMatch(msg);
    }
    // The snapshot list: own instances only; a bad id is 400.
    expect((await req('GET', `/api/v1/instance/snapshot?instanceId=${r.id}`, other)).statusCode).toBe(404);
    expect((await req('GET', '/api/v1/instance/snapshot?instanceId=bad', u)).statusCode).toBe(400);
    expect((await req('GET', `/api/v1/instance/snapshot?instanceId=${r.id}`, u)).json().data).toEqual({ list: [] });
    // Not signed in.
    expect((await t.request({ method: 'GET', url: '/api/v1/image/private' })).statusCode).toBe(401);
    expect(compute.calls.filter((c) => c.op === 'saveSystemLayer' && c.id === r.id)).toEqual([]);
  });

  it('saves one image of concurrent snapshots of one instance, and never passes the limit under concurrency', async () => {
    const u = await createUser(t);
    const r = await stoppedWithFile(u);
    const racing = await Promise.all(Array.from({ length: 5 }, (_, i) => req('POST', '/api/v1/instance/snapshot', u, { instanceId: r.id, name: `并发 ${i}` })));
    expect(racing.map((x) => x.statusCode).sort()).toEqual([200, 409, 409, 409, 409]);
    await t.container.jobs.runDue();
    // Limit: with MAX − 1 kept, three instances saved at once: one wins.
    const base = await imageRow(r.inv.image.id);
    await t.container.db.insert(images).values(
      Array.from({ length: MAX_PRIVATE_IMAGES - 2 }, (_, i) => ({
        tenantId: u.user.tenantId,
        kind: 'private' as const,
        ownerUserId: u.user.id,
        slug: `u${u.user.id}-race${String(i).padStart(6, '0')}`,
        name: `旧镜像 ${i}`,
        status: 'ready' as const,
        rootPath: base.rootPath,
        parentImageId: base.id,
      })),
    );
    const three = [await stoppedWithFile(u), await stoppedWithFile(u), await stoppedWithFile(u)];
    const results = await Promise.all(three.map((x) => req('POST', '/api/v1/instance/snapshot', u, { instanceId: x.id, name: '抢最后一个' })));
    expect(results.map((x) => x.statusCode).sort()).toEqual([200, 409, 409]);
    expect((await req('GET', '/api/v1/image/private', u)).json().data.total).toBe(MAX_PRIVATE_IMAGES);
    await t.container.jobs.runDue();
  });

  it('a delete racing a payment: the unpaid order holds the image, and a payment of a deleted image charges nothing', async () => {
    const u = await createUser(t);
    const other = await createUser(t);
    await fund(u);
    await fund(other);
    const s = await savedImage(u, { share: true });
    const o = await order(u, s.imageId);
    const o2 = await order(other, s.imageId);
    const [pay, del] = await Promise.all([req('POST', '/api/v1/order/pay', u, { orderId: o.json().data.id }), req('DELETE', `/api/v1/image/private/${s.imageId}`, u)]);
    expect([pay.statusCode, del.statusCode]).toEqual([200, 409]);
    await t.container.jobs.runDue();
    // A delete committed between the order's checks and its payment (simulated): the payment is refused, nothing charged.
    await t.container.db.update(images).set({ deletedAt: new Date() }).where(eq(images.id, s.imageId));
    t.container.wallet.forgetBalance(other.user.id);
    const before = await t.container.wallet.balanceOf(other.user.id);
    const late = await req('POST', '/api/v1/order/pay', other, { orderId: o2.json().data.id });
    expect(late.statusCode).toBe(409);
    t.container.wallet.forgetBalance(other.user.id);
    expect(await t.container.wallet.balanceOf(other.user.id)).toBe(before);
    expect((await imageRow(s.imageId)).useCount).toBe(0);
    expect(await t.container.ledger.check(other.user.tenantId)).toEqual([]);
  });

  it(`keeps at most ${MAX_PRIVATE_IMAGES} private images per user; deleted ones don't count`, async () => {
    const u = await createUser(t);
    const r = await stoppedWithFile(u);
    const base = await imageRow(r.inv.image.id);
    const rows = await t.container.db
      .insert(images)
      .values(
        Array.from({ length: MAX_PRIVATE_IMAGES }, (_, i) => ({
          tenantId: u.user.tenantId,
          kind: 'private' as const,
          ownerUserId: u.user.id,
          slug: `u${u.user.id}-limit${String(i).padStart(5, '0')}`,
          name: `旧镜像 ${i}`,
          status: 'ready' as const,
          rootPath: base.rootPath,
          parentImageId: base.id,
        })),
      )
      .returning();
    const full = await req('POST', '/api/v1/instance/snapshot', u, { instanceId: r.id, name: '再来一个' });
    expect(full.statusCode).toBe(409);
    expect(full.json().msg).toMatch(new RegExp(`最多保存 ${MAX_PRIVATE_IMAGES} 个私有镜像`));
    expect((await req('GET', '/api/v1/image/private?pageSize=5&page=2', u)).json().data.total).toBe(MAX_PRIVATE_IMAGES);
    expect((await req('DELETE', `/api/v1/image/private/${rows[0]!.id}`, u)).statusCode).toBe(200);
    const ok = await req('POST', '/api/v1/instance/snapshot', u, { instanceId: r.id, name: '再来一个' });
    expect(ok.statusCode, ok.body).toBe(200);
    await t.container.jobs.runDue();
  });

  it('ends as failed with a Chinese reason when the driver fails, and the instance is free again', async () => {
    const u = await createUser(t);
    const r = await stoppedWithFile(u);
    const res = await req('POST', '/api/v1/instance/snapshot', u, { instanceId: r.id, name: '会失败' });
    const id = res.json().data.id as number;
    const saved = compute.instances.get(r.id)!;
    compute.instances.delete(r.id); // the driver lost it
    await t.container.jobs.runDue();
    compute.instances.set(r.id, saved);
    const failed = (await req('GET', `/api/v1/image/private/${id}`, u)).json().data;
    expect(failed).toMatchObject({ status: 'failed', inUse: false });
    expect(failed.error).toMatch(/^保存镜像失败：/);
    expect(fs.existsSync(path.join(dataDir, 'images', 'private', (await imageRow(id)).slug))).toBe(false);
    expect((await req('PUT', `/api/v1/image/private/${id}`, u, { shared: true })).statusCode).toBe(409);
    // Not usable for an order; deletable.
    expect((await order(u, id)).statusCode).toBe(409);
    expect((await req('POST', '/api/v1/ide-instance/power_on', u, { instanceId: r.id })).statusCode).toBe(200);
    expect((await req('DELETE', `/api/v1/image/private/${id}`, u)).statusCode).toBe(200);
  });

  it('lists, shows, renames, describes, shares and withdraws own images; others get 404; bad input 400', async () => {
    const u = await createUser(t);
    const other = await createUser(t);
    const a = await savedImage(u, { name: '镜像 A' });
    const b = await savedImage(u, { name: '镜像 B' });
    const page = (await req('GET', '/api/v1/image/private', u)).json().data;
    expect(page.total).toBe(2);
    expect(page.list.map((i: { id: number }) => i.id)).toEqual([b.imageId, a.imageId]);
    expect((await req('GET', '/api/v1/image/private?page=2&pageSize=1', u)).json().data.list.map((i: { id: number }) => i.id)).toEqual([a.imageId]);
    expect((await req('GET', '/api/v1/image/private', other)).json().data).toEqual({ list: [], total: 0 });

    const put = await req('PUT', `/api/v1/image/private/${a.imageId}`, u, { name: '新名字', description: '新描述' });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().data).toMatchObject({ name: '新名字', description: '新描述', shared: false });
    const shared = (await req('PUT', `/api/v1/image/private/${a.imageId}`, u, { shared: true })).json().data;
    expect(shared.shared).toBe(true);
    expect(typeof shared.sharedAt).toBe('string');
    // Sharing again keeps the first time.
    expect((await req('PUT', `/api/v1/image/private/${a.imageId}`, u, { shared: true })).json().data.sharedAt).toBe(shared.sharedAt);
    expect((await req('PUT', `/api/v1/image/private/${a.imageId}`, u, { shared: false })).json().data).toMatchObject({ shared: false, sharedAt: null });

    // Another user's image is missing to them, whatever the call.
    for (const [method, payload] of [['GET'], ['PUT', { name: 'x' }], ['DELETE']] as const) {
      const res = await req(method, `/api/v1/image/private/${a.imageId}`, other, payload);
      expect(res.statusCode, method).toBe(404);
      expect(res.json().msg).toBe('镜像不存在');
    }
    expect((await req('GET', `/api/v1/image/private/${a.inv.image.id}`, u)).statusCode).toBe(404); // a platform image is not a private one
    expect((await req('GET', '/api/v1/image/private/999999999', u)).statusCode).toBe(404);
    for (const bad of ['abc', '0', '-1', '1.5', '99999999999']) expect((await req('GET', `/api/v1/image/private/${bad}`, u)).statusCode, bad).toBe(400);
    const badBodies: [object, RegExp][] = [
      [{}, /请至少修改一项/],
      [{ name: 'n'.repeat(41) }, /不能超过 40 个字符/],
      [{ name: '' }, /请输入镜像名称/],
      [{ shared: 'yes' }, /shared 应为 true 或 false/],
      [{ description: 'd'.repeat(501) }, /不能超过 500 个字符/],
      [{ owner: 1 }, /./],
    ];
    for (const [body, msg] of badBodies) {
      const res = await req('PUT', `/api/v1/image/private/${a.imageId}`, u, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().msg).toMatch(msg);
    }
    for (const q of ['page=0', 'pageSize=101', 'page=x', 'foo=1']) expect((await req('GET', `/api/v1/image/private?${q}`, u)).statusCode, q).toBe(400);
  });

  it('refuses to delete an image in use (instances, unpaid orders, images over it); deletion keeps the row and removes the layer', async () => {
    const u = await createUser(t);
    const s = await savedImage(u);
    const row = await imageRow(s.imageId);
    const layer = row.layers[0]!;
    expect(fs.existsSync(layer)).toBe(true);

    // An unpaid order of it.
    const o = await order(u, s.imageId);
    expect(o.statusCode, o.body).toBe(200);
    expect((await req('GET', `/api/v1/image/private/${s.imageId}`, u)).json().data.inUse).toBe(true);
    const byOrder = await req('DELETE', `/api/v1/image/private/${s.imageId}`, u);
    expect(byOrder.statusCode).toBe(409);
    expect(byOrder.json().msg).toMatch(/未支付的订单/);
    expect((await req('PUT', `/api/v1/order/${o.json().data.id}/cancel`, u)).statusCode).toBe(200);
    expect((await req('GET', `/api/v1/image/private/${s.imageId}`, u)).json().data.inUse).toBe(false);

    // An instance made from it (paid): in use until released.
    const inst = await rent(u, { imageId: s.imageId });
    const byInstance = await req('DELETE', `/api/v1/image/private/${s.imageId}`, u);
    expect(byInstance.statusCode).toBe(409);
    expect(byInstance.json().msg).toBe(`镜像正被实例 ${inst.id} 使用，请先释放实例或为其更换镜像后再删除`);
    // The new instance stacks the image's layer over the base.
    expect(compute.instances.get(inst.id)!.spec.image).toMatchObject({ id: s.imageId, rootPath: '/nonexistent/test-root', layers: [layer] });

    // An image saved from that instance lies over it.
    await stop(u, inst.id);
    const child = await req('POST', '/api/v1/instance/snapshot', u, { instanceId: inst.id, name: '子镜像' });
    expect(child.statusCode, child.body).toBe(200);
    await t.container.jobs.runDue();
    const childRow = await imageRow(child.json().data.id);
    expect(childRow.layers).toEqual([path.join(dataDir, 'images', 'private', childRow.slug), layer]);
    expect(child.json().data.baseImageName).toBe(row.name);
    expect((await req('POST', '/api/v1/ide-instance/release', u, { instanceId: inst.id })).statusCode).toBe(200);
    await t.container.jobs.runDue();
    expect((await instanceRow(inst.id)).status).toBe('released');
    const byChild = await req('DELETE', `/api/v1/image/private/${s.imageId}`, u);
    expect(byChild.statusCode).toBe(409);
    expect(byChild.json().msg).toMatch(/基于此镜像/);
    // The released instance's snapshots are still listed for its owner.
    expect((await req('GET', `/api/v1/instance/snapshot?instanceId=${inst.id}`, u)).json().data.list.map((i: { id: number }) => i.id)).toEqual([childRow.id]);

    expect((await req('DELETE', `/api/v1/image/private/${childRow.id}`, u)).statusCode).toBe(200);
    const del = await req('DELETE', `/api/v1/image/private/${s.imageId}`, u);
    expect(del.statusCode, del.body).toBe(200);
    expect(fs.existsSync(layer)).toBe(false);
    const gone = await imageRow(s.imageId);
    expect(gone.deletedAt).toBeInstanceOf(Date);
    // Out of every list and call.
    expect((await req('GET', `/api/v1/image/private/${s.imageId}`, u)).statusCode).toBe(404);
    expect((await req('DELETE', `/api/v1/image/private/${s.imageId}`, u)).statusCode).toBe(404);
    expect((await req('GET', '/api/v1/image/private', u)).json().data.list.map((i: { id: number }) => i.id)).not.toContain(s.imageId);
    expect((await req('GET', `/api/v1/instance/snapshot?instanceId=${s.id}`, u)).json().data.list).toEqual([]);
    expect((await req('GET', '/api/v1/image/all', u)).json().data.map((i: { id: number }) => i.id)).not.toContain(s.imageId);
    const late = await order(u, s.imageId);
    expect(late.statusCode).toBe(404);
    // The orders and instances that name it keep their rows.
    expect((await t.container.db.select().from(orders).where(and(eq(orders.imageId, s.imageId)))).length).toBe(2);
  });

  it('lists the caller\'s own ready private images in /image/all, besides the platform and tenant images', async () => {
    const u = await createUser(t);
    const other = await createUser(t);
    const mine = await savedImage(u, { name: '我的可选镜像' });
    const theirs = await savedImage(other, { name: '别人的镜像', share: true });
    const all = (await req('GET', '/api/v1/image/all', u)).json().data as { id: number; name: string; status: string }[];
    const ids = all.map((i) => i.id);
    expect(ids).toContain(mine.imageId);
    expect(ids).toContain(mine.inv.image.id); // platform images stay
    expect(ids).not.toContain(theirs.imageId);
    expect(all.find((i) => i.id === mine.imageId)).toMatchObject({ name: '我的可选镜像', status: 'ready' });
    expect(ids.indexOf(mine.inv.image.id)).toBeLessThan(ids.indexOf(mine.imageId));
  });

  it('uses private images by the access rule: own, shared in the tenant (counted when paid), never unshared or another tenant\'s', async () => {
    const owner = await createUser(t);
    const u = await createUser(t);
    const shared = await savedImage(owner, { share: true });
    const unshared = await savedImage(owner);

    // Another user's unshared image is missing.
    const no = await order(u, unshared.imageId);
    expect(no.statusCode).toBe(404);
    expect(no.json().msg).toBe('镜像不存在');
    // The owner's own: works, and doesn't count as a use.
    const own = await rent(owner, { imageId: unshared.imageId });
    expect((await instanceRow(own.id)).imageId).toBe(unshared.imageId);
    expect((await imageRow(unshared.imageId)).useCount).toBe(0);
    await rent(owner, { imageId: shared.imageId });
    expect((await imageRow(shared.imageId)).useCount).toBe(0);
    // Another user of the tenant: a shared image works and counts once per paid order.
    const o = await order(u, shared.imageId);
    expect(o.statusCode, o.body).toBe(200);
    expect((await imageRow(shared.imageId)).useCount).toBe(0); // not before it is paid
    const used = await rent(u, { imageId: shared.imageId });
    expect((await imageRow(shared.imageId)).useCount).toBe(1);
    expect(compute.instances.get(used.id)!.spec.image.layers).toEqual((await imageRow(shared.imageId)).layers);
    expect((await req('GET', `/api/v1/image/community/${shared.imageId}`, u)).json().data).toMatchObject({ useCount: 1, mine: false, inUse: true });

    // Withdrawn: no new orders from others.
    expect((await req('PUT', `/api/v1/image/private/${shared.imageId}`, owner, { shared: false })).statusCode).toBe(200);
    expect((await order(u, shared.imageId)).statusCode).toBe(404);
    // An order made while shared can't be paid once withdrawn.
    expect((await req('PUT', `/api/v1/image/private/${shared.imageId}`, owner, { shared: true })).statusCode).toBe(200);
    const pending = await order(u, shared.imageId);
    expect((await req('PUT', `/api/v1/image/private/${shared.imageId}`, owner, { shared: false })).statusCode).toBe(200);
    const payLate = await req('POST', '/api/v1/order/pay', u, { orderId: pending.json().data.id });
    expect(payLate.statusCode).toBe(409);
    expect((await imageRow(shared.imageId)).useCount).toBe(1);

    // Another tenant's shared image is missing on this tenant, and in its community.
    const foreigner = await createUser(t, { host: '127.0.0.1' });
    const foreign = await savedImage(foreigner, { host: '127.0.0.1', share: true });
    const cross = await order(u, foreign.imageId);
    expect(cross.statusCode).toBe(404);
    expect((await req('GET', `/api/v1/image/community/${foreign.imageId}`, u)).statusCode).toBe(404);

    // change_image: to an own private image works; to another's unshared one is 404.
    await stop(u, used.id);
    const mineToo = await savedImage(u);
    const change = await req('POST', '/api/v1/instance/change_image', u, { instanceId: used.id, imageId: mineToo.imageId });
    expect(change.statusCode, change.body).toBe(200);
    await t.container.jobs.runDue();
    expect(await instanceRow(used.id)).toMatchObject({ imageId: mineToo.imageId, status: 'stopped' });
    expect(compute.instances.get(used.id)!.spec.image.layers).toEqual((await imageRow(mineToo.imageId)).layers);
    expect((await req('POST', '/api/v1/instance/change_image', u, { instanceId: used.id, imageId: unshared.imageId })).statusCode).toBe(404);
    expect((await req('POST', '/api/v1/instance/change_image', u, { instanceId: used.id, imageId: foreign.imageId })).statusCode).toBe(404);
  });

  it('shows the tenant\'s shared ready images in the community, sorted by use or time, searchable, with masked authors', async () => {
    // A tenant of its own for this test, so other tests' shared images don't mix in.
    const host = '127.0.0.2';
    const alice = await createUser(t, { host, userName: '李白' });
    const bob = await createUser(t, { host, userName: '' });
    const carol = await createUser(t, { host });
    const a = await savedImage(alice, { host, name: 'PyTorch 训练环境', description: '含 CUDA 工具', share: true });
    const b = await savedImage(bob, { host, name: 'Stable Diffusion', description: '绘图 webui', share: true });
    await savedImage(bob, { host, name: '未分享的镜像' });
    // b is used twice by others, a never.
    await t.container.db.update(images).set({ useCount: 2 }).where(eq(images.id, b.imageId));

    const list = async (q: string, who: User = carol) => {
      const res = await req('GET', `/api/v1/image/community${q}`, who, undefined, host);
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data as { list: { id: number; authorName: string; mine: boolean; useCount: number }[]; total: number };
    };
    const hot = await list('');
    expect(hot.total).toBe(2);
    expect(hot.list.map((i) => i.id)).toEqual([b.imageId, a.imageId]);
    expect((await list('?sort=new')).list.map((i) => i.id)).toEqual([b.imageId, a.imageId]);
    await t.container.db.update(images).set({ sharedAt: new Date(Date.now() + 60_000) }).where(eq(images.id, a.imageId));
    expect((await list('?sort=new')).list.map((i) => i.id)).toEqual([a.imageId, b.imageId]);
    expect((await list('?sort=hot')).list.map((i) => i.id)).toEqual([b.imageId, a.imageId]);
    expect((await list('?keyword=pytorch')).list.map((i) => i.id)).toEqual([a.imageId]);
    expect((await list('?keyword=webui')).list.map((i) => i.id)).toEqual([b.imageId]);
    expect((await list('?keyword=%25')).total).toBe(0);
    expect((await list('?keyword=未分享')).total).toBe(0);
    expect((await list('?page=2&pageSize=1')).list.map((i) => i.id)).toEqual([a.imageId]);

    // Authors masked, never the phone.
    const byId = new Map(hot.list.map((i) => [i.id, i]));
    expect(byId.get(a.imageId)!.authorName).toBe('李**');
    const bobName = byId.get(b.imageId)!.authorName;
    expect(bobName).toBe(`${bob.user.phone.slice(0, 3)}****${bob.user.phone.slice(7)}`);
    const body = JSON.stringify(await list(''));
    for (const p of [alice.user.phone, bob.user.phone]) expect(body).not.toContain(p);
    // mine for the caller's own.
    expect((await list('', alice)).list.find((i) => i.id === a.imageId)!.mine).toBe(true);
    expect(hot.list.every((i) => !i.mine)).toBe(true);
    // Details: shared ones only.
    const detail = await req('GET', `/api/v1/image/community/${a.imageId}`, carol, undefined, host);
    expect(detail.json().data).toMatchObject({ id: a.imageId, name: 'PyTorch 训练环境', description: '含 CUDA 工具', authorName: '李**', shared: true, status: 'ready', sourceInstanceId: null, sourceInstanceName: '' });
    expect(JSON.stringify(detail.json())).not.toContain(a.id); // the author's instance stays theirs
    expect((await req('GET', `/api/v1/image/community/${a.imageId}`, alice, undefined, host)).json().data).toMatchObject({ mine: true, sourceInstanceId: a.id });
    // A withdrawn image leaves the community.
    await req('PUT', `/api/v1/image/private/${a.imageId}`, alice, { shared: false }, host);
    expect((await req('GET', `/api/v1/image/community/${a.imageId}`, carol, undefined, host)).statusCode).toBe(404);
    expect((await list('')).list.map((i) => i.id)).toEqual([b.imageId]);
    // Other tenants see none of it.
    const stranger = await createUser(t);
    expect((await req('GET', '/api/v1/image/community', stranger)).json().data.list.map((i: { id: number }) => i.id)).not.toContain(b.imageId);
    expect((await req('GET', `/api/v1/image/community/${b.imageId}`, stranger)).statusCode).toBe(404);
    // Bad queries.
    for (const q of ['sort=cold', 'page=0', 'pageSize=0', `keyword=${'k'.repeat(65)}`, 'x=1']) {
      const res = await req('GET', `/api/v1/image/community?${q}`, carol, undefined, host);
      expect(res.statusCode, q).toBe(400);
    }
    expect((await req('GET', '/api/v1/image/community/abc', carol, undefined, host)).statusCode).toBe(400);
  });

  it('keeps the operator API off users\' private images', async () => {
    const u = await createUser(t);
    const s = await savedImage(u);
    const { signInSeededOperator } = await import('../helpers/factories.ts');
    const op = await signInSeededOperator(t);
    const list = (await req('GET', '/api/v1/operate/images', op)).json().data as { id: number }[];
    expect(list.map((i) => i.id)).not.toContain(s.imageId);
    expect((await req('DELETE', `/api/v1/operate/images/${s.imageId}`, op)).statusCode).toBe(404);
    expect((await req('PUT', `/api/v1/operate/images/${s.imageId}`, op, { published: false })).statusCode).toBe(404);
    expect((await imageRow(s.imageId)).deletedAt).toBeNull();
  });
});
