import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { createFakeCompute, type FakeCompute } from '../fakes/compute.ts';
import { createInventory } from '../fakes/orders.ts';
import { images, instances } from '../../src/db/schema/compute.ts';

const YUAN = 10_000;

/**
 * Issue #10, every instance-operation route: another user's (or another tenant's) instance, order,
 * image or copy answers 404 exactly like a missing one, and nothing of the victim's changes — not
 * the instance, not the balance, not the image.
 */
describe.each(engines)('instance operations are owner-only on %s', (engine) => {
  let t: TestApp;
  let compute: FakeCompute;
  beforeAll(async () => {
    compute = createFakeCompute();
    t = await buildTestApp({ engine, overrides: { compute } });
  });
  afterAll(async () => {
    await t.close();
    compute.cleanup();
  });

  type User = Awaited<ReturnType<typeof createUser>>;
  const req = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, u: User, payload?: object, host?: string) => t.request({ method, url, token: u.token, payload, host });
  const balanceOf = async (userId: number) => {
    t.container.wallet.forgetBalance(userId);
    return t.container.wallet.balanceOf(userId);
  };

  async function rent(u: User, inv: Awaited<ReturnType<typeof createInventory>>, chargeType: 'payg' | 'prepaid', host?: string) {
    const spec = { machineId: inv.machine.id, gpuCount: 1, imageId: inv.image.id, name: 'box' };
    const order = (await req('POST', chargeType === 'prepaid' ? '/api/v1/order/prepay' : '/api/v1/order/payg', u, chargeType === 'prepaid' ? { ...spec, period: 'month', quantity: 1 } : spec, host)).json().data;
    const paid = await req('POST', '/api/v1/order/pay', u, { orderId: order.id }, host);
    if (paid.statusCode !== 200) throw new Error(`pay failed: ${paid.body}`);
    await t.container.jobs.runDue();
    return paid.json().data.instanceId as string;
  }

  it('answers 404 to a stranger for every #10 call on the victim’s things, and changes nothing', async () => {
    const inv = await createInventory(t, { gpuTotal: 8 });
    const victim = await createUser(t);
    const stranger = await createUser(t);
    const foreign = await createUser(t, { host: '127.0.0.1' });
    for (const u of [victim, stranger]) await t.container.ledger.post({ tenantId: u.user.tenantId, userId: u.user.id, kind: 'recharge', amount: 10_000 * YUAN, ref: `test:${Math.random()}` });
    await t.container.ledger.post({ tenantId: foreign.user.tenantId, userId: foreign.user.id, kind: 'recharge', amount: 10_000 * YUAN, ref: `test:${Math.random()}` });

    const payg = await rent(victim, inv, 'payg');
    const prepaid = await rent(victim, inv, 'prepaid');
    const mine = await rent(stranger, inv, 'payg');
    // The victim's things: stopped instances, a private image, a copy, an unpaid change order.
    for (const id of [payg, prepaid, mine]) {
      expect((await req('POST', '/api/v1/ide-instance/power_off', id === mine ? stranger : victim, { instanceId: id })).statusCode).toBe(200);
    }
    await t.container.jobs.runDue();
    const snap = await req('POST', '/api/v1/instance/snapshot', victim, { instanceId: payg, name: '私有镜像' });
    expect(snap.statusCode).toBe(200);
    await t.container.jobs.runDue();
    const [privateImage] = await t.container.db.select().from(images).where(eq(images.sourceInstanceId, payg));
    expect(privateImage?.status).toBe('ready');
    const copy = await req('POST', '/api/v1/instance/copy_data', victim, { sourceInstanceId: payg, targetInstanceId: prepaid });
    expect(copy.statusCode).toBe(200);
    const copyId = (copy.json().data.id ?? copy.json().data.list?.[0]?.id) as string;
    await t.container.jobs.runDue();
    const renewal = await req('POST', '/api/v1/order/instance/renewal', victim, { instanceId: prepaid, period: 'month', quantity: 1 });
    expect(renewal.statusCode).toBe(200);
    const renewalOrder = renewal.json().data.id as string;

    const before = { balance: await balanceOf(victim.user.id), rows: await t.container.db.select().from(instances).where(eq(instances.userId, victim.user.id)) };
    const calls: [method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: object][] = [
      ['POST', '/api/v1/order/charge_type/prepay', { instanceId: payg, period: 'month', quantity: 1 }],
      ['POST', '/api/v1/order/charge_type/prepay/preview', { instanceId: payg, period: 'month', quantity: 1 }],
      ['POST', '/api/v1/order/charge_type/payg/preview', { instanceId: prepaid }],
      ['POST', '/api/v1/order/charge_type/payg', { instanceId: prepaid }],
      ['POST', '/api/v1/order/instance/renewal', { instanceId: prepaid, period: 'month', quantity: 1 }],
      ['POST', '/api/v1/order/instance/renewal/preview', { instanceId: prepaid, period: 'month', quantity: 1 }],
      ['POST', '/api/v1/order/instance/change', { instanceId: payg, gpuCount: 2 }],
      ['POST', '/api/v1/order/instance/change/preview', { instanceId: prepaid, gpuCount: 2 }],
      ['GET', `/api/v1/instance/available_expand_disk?instanceId=${payg}`],
      ['POST', '/api/v1/order/data_disk/change/preview', { instanceId: payg, dataDiskGb: 60 }],
      ['POST', '/api/v1/order/data_disk/change', { instanceId: prepaid, dataDiskGb: 60 }],
      ['POST', '/api/v1/order/instance/clone/payg', { instanceId: payg, machineId: inv.machine.id, gpuCount: 1 }],
      ['POST', '/api/v1/order/instance/clone/prepay', { instanceId: payg, machineId: inv.machine.id, gpuCount: 1, period: 'month', quantity: 1 }],
      ['POST', '/api/v1/ide-instance/power_on', { instanceId: payg, noGpu: true }],
      ['POST', '/api/v1/instance/copy_data', { sourceInstanceId: payg, targetInstanceId: mine }],
      ['POST', '/api/v1/instance/copy_data', { sourceInstanceId: mine, targetInstanceId: payg }],
      ['GET', `/api/v1/instance/copy_data_status?id=${copyId}`],
      ['GET', `/api/v1/instance/copy_data_status?instanceId=${payg}`],
      ['POST', '/api/v1/instance/terminate_copy', { id: copyId }],
      ['GET', `/api/v1/instance/snapshot?instanceId=${payg}`],
      ['POST', '/api/v1/instance/snapshot', { instanceId: payg, name: '偷来的镜像' }],
      ['GET', `/api/v1/image/private/${privateImage!.id}`],
      ['PUT', `/api/v1/image/private/${privateImage!.id}`, { shared: true }],
      ['DELETE', `/api/v1/image/private/${privateImage!.id}`],
      ['GET', `/api/v1/image/community/${privateImage!.id}`],
      ['POST', '/api/v1/order/payg', { machineId: inv.machine.id, gpuCount: 1, imageId: privateImage!.id }],
      ['POST', '/api/v1/instance/change_image', { instanceId: mine, imageId: privateImage!.id }],
      ['POST', '/api/v1/order/pay', { orderId: renewalOrder }],
      ['GET', `/api/v1/order/${renewalOrder}`],
    ];
    const wrong: string[] = [];
    for (const [method, url, body] of calls) {
      const same = await req(method, url, stranger, body);
      if (same.statusCode !== 404) wrong.push(`${method} ${url} as another user: ${same.statusCode} ${same.body.slice(0, 120)}`);
      const other = await req(method, url, foreign, body, '127.0.0.1');
      if (other.statusCode !== 404) wrong.push(`${method} ${url} as another tenant: ${other.statusCode} ${other.body.slice(0, 120)}`);
    }
    expect(wrong).toEqual([]);
    // The stranger's own lists don't show the victim's image, and nothing of the victim's moved.
    const own = (await req('GET', '/api/v1/image/private', stranger)).json().data;
    expect(own.list.map((i: { id: number }) => i.id)).not.toContain(privateImage!.id);
    const community = (await req('GET', '/api/v1/image/community', stranger)).json().data;
    expect(community.list.map((i: { id: number }) => i.id)).not.toContain(privateImage!.id);
    expect(await balanceOf(victim.user.id)).toBe(before.balance);
    expect(await t.container.db.select().from(instances).where(eq(instances.userId, victim.user.id))).toEqual(before.rows);
    const [img] = await t.container.db.select().from(images).where(eq(images.id, privateImage!.id));
    expect(img).toMatchObject({ shared: false, deletedAt: null, status: 'ready' });
    expect(await t.container.ledger.check(victim.user.tenantId)).toEqual([]);
  });
});
