import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser, signInSeededOperator } from '../helpers/factories.ts';
import { machines } from '../../src/db/schema/compute.ts';
import { seedDemo } from '../../src/db/seed.ts';
import { gpuDeviceNodes, parseNvidiaSmi } from '../../src/lib/gpu-detect.ts';
import type { MachineItem } from '@suanli/contract/machine';

/** Recorded `nvidia-smi --query-gpu=name,memory.total --format=csv,noheader` output of real hosts. */
const SMI_4090x2 = 'NVIDIA GeForce RTX 4090, 24564 MiB\nNVIDIA GeForce RTX 4090, 24564 MiB\n';
const SMI_MIXED = 'NVIDIA A100-SXM4-80GB, 81920 MiB\r\nTesla V100-SXM2-32GB, 32768 MiB\r\n\r\n';

describe('gpu detection', () => {
  it('parses nvidia-smi output into GPUs with whole GB of memory', () => {
    expect(parseNvidiaSmi(SMI_4090x2)).toEqual([
      { index: 0, name: 'NVIDIA GeForce RTX 4090', memoryGb: 24 },
      { index: 1, name: 'NVIDIA GeForce RTX 4090', memoryGb: 24 },
    ]);
    expect(parseNvidiaSmi(SMI_MIXED).map((g) => [g.name, g.memoryGb])).toEqual([
      ['NVIDIA A100-SXM4-80GB', 80],
      ['Tesla V100-SXM2-32GB', 32],
    ]);
    expect(parseNvidiaSmi('')).toEqual([]);
    expect(parseNvidiaSmi('NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver.')).toEqual([]);
  });
  it('names the device nodes an instance needs', () => {
    expect(gpuDeviceNodes(parseNvidiaSmi(SMI_4090x2), () => false)).toEqual(['/dev/nvidia0', '/dev/nvidia1', '/dev/nvidiactl', '/dev/nvidia-uvm']);
  });
});

describe.each(engines)('inventory on %s', (engine) => {
  let t: TestApp;
  let token: string;
  let op: string;
  beforeAll(async () => {
    t = await buildTestApp({ engine });
    token = (await createUser(t)).token;
    op = (await signInSeededOperator(t)).token;
  });
  afterAll(() => t.close());

  const get = (url: string, tk = token, host = 'localhost') => t.request({ method: 'GET', url, token: tk, host });
  const list = async (qs = '', tk = token) => {
    const res = await get(`/api/v1/machine/list${qs}`, tk);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as { list: MachineItem[]; total: number };
  };

  it('seeds a demo market: 3 datacenters, 8 demo machines, 4 GPU types, tags; one offline, one nearly sold out', async () => {
    const all = await list('?pageSize=100');
    expect(all.total).toBe(8);
    expect(new Set(all.list.map((m) => m.datacenterId)).size).toBe(3);
    expect(all.list.every((m) => m.demo)).toBe(true);
    expect(all.list.filter((m) => !m.online)).toHaveLength(1);
    expect(all.list.find((m) => !m.online)?.rentable).toBe(false);
    expect(all.list.some((m) => m.gpuFree === 1 && m.rentable)).toBe(true);
    const types = (await get('/api/v1/machine/gpu_type')).json().data as { name: string }[];
    expect(types.map((g) => g.name)).toEqual(['RTX 4090 24G', 'RTX 3090 24G', 'A100 80G', 'V100 32G']);
    expect(((await get('/api/v1/common/tag')).json().data as unknown[]).length).toBe(4);
    const m4090 = all.list.find((m) => m.gpuType.name === 'RTX 4090 24G');
    expect(m4090?.prices.hour).toBe(21_800); // ¥2.18 per GPU-hour
    expect(m4090?.memoryGbPerGpu).toBeLessThanOrEqual(8);
    // again: nothing doubles
    await seedDemo(t.container.db, () => {}, { gpus: [] });
    expect((await list('?pageSize=100')).total).toBe(8);
  });

  it('filters by datacenter, GPU type, free GPUs, price and tag, and pages', async () => {
    const all = (await list('?pageSize=100')).list;
    const dc = all[0]?.datacenterId;
    expect((await list(`?datacenterId=${dc}`)).list.every((m) => m.datacenterId === dc)).toBe(true);
    const a100 = all.find((m) => m.gpuType.name === 'A100 80G')?.gpuType.id;
    const byType = await list(`?gpuTypeId=${a100}`);
    expect(byType.total).toBe(2);
    expect((await list('?minFreeGpus=5')).list.every((m) => m.gpuFree >= 5)).toBe(true);
    expect((await list('?minFreeGpus=5')).list.some((m) => m.gpuFree === 1)).toBe(false);
    const cheap = await list('?minPrice=10000&maxPrice=22000');
    expect(cheap.list.every((m) => m.prices.hour >= 10_000 && m.prices.hour <= 22_000)).toBe(true);
    expect(cheap.total).toBe(5);
    const tagged = await list(`?tag=${encodeURIComponent('大显存')}`);
    expect(tagged.list.every((m) => m.tags.includes('大显存'))).toBe(true);
    expect(tagged.total).toBe(2);
    const p1 = await list('?page=1&pageSize=3');
    const p3 = await list('?page=3&pageSize=3');
    expect([p1.list.length, p3.list.length, p1.total]).toEqual([3, 2, 8]);
    // rentable machines first
    const rentable = all.map((m) => m.rentable);
    expect(rentable.indexOf(false)).toBeGreaterThan(rentable.lastIndexOf(true));
  });

  it('refuses bad filters with a clear message', async () => {
    for (const [qs, msg] of [
      ['?minPrice=300&maxPrice=100', '最低价格不能高于最高价格'],
      ['?minFreeGpus=-1', '空闲 GPU 数不能为负数'],
      ['?pageSize=1000', '每页最多 100 条'],
      ['?datacenterId=abc', '数据中心必须是数字'],
      ['?color=red', ''],
    ] as const) {
      const res = await get(`/api/v1/machine/list${qs}`);
      expect(res.statusCode, qs).toBe(400);
      if (msg) expect(res.json().msg).toContain(msg);
    }
    expect((await t.request({ method: 'GET', url: '/api/v1/machine/list' })).statusCode).toBe(401);
  });

  it('disk options of a machine, the defaults, and 404 for another tenant’s machine', async () => {
    const m = (await list()).list[0] as MachineItem;
    expect((await get(`/api/v1/machine/disk?machineId=${m.id}`)).json().data).toEqual({ systemDiskGb: 30, dataDiskFreeGb: 50, dataDiskMaxGb: 500, stepGb: 10, pricePerGbDay: 50 });
    expect((await get('/api/v1/machine/disk')).json().data).toMatchObject({ systemDiskGb: 30, stepGb: 10 });
    const other = (await createUser(t, { host: '127.0.0.1' })).token;
    expect((await get(`/api/v1/machine/disk?machineId=${m.id}`, other, '127.0.0.1')).statusCode).toBe(404);
    expect((await get('/api/v1/machine/disk?machineId=99999999')).statusCode).toBe(404);
    // each tenant sees its own market
    const theirs = (await get('/api/v1/machine/list?pageSize=100', other, '127.0.0.1')).json().data as { list: MachineItem[] };
    expect(theirs.list.map((x) => x.id)).not.toContain(m.id);
  });

  it('operators create and edit datacenters, GPU types, tags and machines', async () => {
    const post = (url: string, payload: object, tk = op) => t.request({ method: 'POST', url, token: tk, payload });
    const put = (url: string, payload: object, tk = op) => t.request({ method: 'PUT', url, token: tk, payload });
    const dc = await post('/api/v1/operate/datacenter', { name: '深圳 D 区', region: '华南' });
    expect(dc.statusCode, dc.body).toBe(200);
    const dcId = dc.json().data.id as number;
    expect((await post('/api/v1/operate/datacenter', { name: '深圳 D 区' })).statusCode).toBe(409);
    expect((await put(`/api/v1/operate/datacenter/${dcId}`, { name: '深圳 D1 区' })).json().data.name).toBe('深圳 D1 区');
    const gt = await post('/api/v1/operate/gpu_type', { name: 'H800 80G', memoryGb: 80 });
    expect(gt.statusCode, gt.body).toBe(200);
    expect((await post('/api/v1/operate/gpu_type', { name: 'H800 80G', memoryGb: 80 })).json().msg).toBe('GPU 型号已存在');
    const tag = await post('/api/v1/operate/tag', { name: '限时', color: '#ff0000' });
    expect(tag.statusCode, tag.body).toBe(200);
    const body = {
      datacenterId: dcId,
      hostName: 'sz-h800-01',
      gpuTypeId: gt.json().data.id,
      gpuTotal: 8,
      cpuPerGpu: 2,
      memoryGbPerGpu: 8,
      prices: { hour: 150_000, day: 3_200_000, week: 20_000_000, month: 80_000_000, year: 800_000_000 },
      tags: ['限时'],
    };
    const created = await post('/api/v1/operate/machine', body);
    expect(created.statusCode, created.body).toBe(200);
    const m = created.json().data as MachineItem;
    expect(m).toMatchObject({ hostName: 'sz-h800-01', gpuFree: 8, rentable: true, demo: true, tags: ['限时'], datacenterName: '深圳 D1 区' });
    expect((await post('/api/v1/operate/machine', body)).json()).toMatchObject({ code: 409, msg: '主机名已存在' });
    // prices, offline, disks
    const edited = await put(`/api/v1/operate/machine/${m.id}`, { prices: { hour: 120_000 }, online: false, dataDiskMaxGb: 1000 });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(edited.json().data).toMatchObject({ online: false, rentable: false, dataDiskMaxGb: 1000, prices: { hour: 120_000, day: 3_200_000 } });
    // renaming a tag renames it on machines
    await put(`/api/v1/operate/tag/${tag.json().data.id}`, { name: '特惠' });
    expect((await get(`/api/v1/machine/list?tag=${encodeURIComponent('特惠')}`)).json().data.list.map((x: MachineItem) => x.id)).toEqual([m.id]);
    // GPUs held by instances can't be taken away
    await t.container.db.update(machines).set({ gpuUsed: 3 }).where(eq(machines.id, m.id));
    expect((await put(`/api/v1/operate/machine/${m.id}`, { gpuTotal: 2 })).json()).toMatchObject({ code: 400, msg: 'GPU 总数不能少于已被实例占用的 3 张' });
  });

  it('operator calls: validation in Chinese, foreign ids 404, users refused', async () => {
    const post = (url: string, payload: object, tk = op) => t.request({ method: 'POST', url, token: tk, payload });
    const put = (url: string, payload: object, tk = op, host = "localhost") => t.request({ method: 'PUT', url, token: tk, payload, host });
    const dcs = (await get('/api/v1/operate/datacenter/list', op)).json().data as { id: number }[];
    const types = (await get('/api/v1/machine/gpu_type')).json().data as { id: number }[];
    const base = { datacenterId: dcs[0]?.id, hostName: 'x-1', gpuTypeId: types[0]?.id, gpuTotal: 1, cpuPerGpu: 1, memoryGbPerGpu: 1, prices: { hour: 1, day: 1, week: 1, month: 1, year: 1 } };
    const cases: [object, string][] = [
      [{ ...base, gpuTotal: 0 }, 'GPU 数量不能小于 1'],
      [{ ...base, hostName: 'bad host!' }, '主机名只能包含字母、数字、点和连字符'],
      [{ ...base, prices: { ...base.prices, hour: -1 } }, '按量单价不能为负数'],
      [{ ...base, dataDiskFreeGb: 600, dataDiskMaxGb: 500 }, '免费数据盘不能大于数据盘上限'],
      [{ ...base, datacenterId: 99_999_999 }, '数据中心不存在'],
      [{ ...base, gpuTypeId: 99_999_999 }, 'GPU 型号不存在'],
      [{ ...base, tags: ['没有这个'] }, '标签不存在：没有这个'],
    ];
    for (const [payload, msg] of cases) {
      const res = await post('/api/v1/operate/machine', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().msg).toContain(msg);
    }
    expect((await post('/api/v1/operate/datacenter', { name: '' })).json().msg).toContain('请输入数据中心名称');
    expect((await put('/api/v1/operate/machine/1', {})).json().msg).toBe('没有要修改的内容');
    // the operator of another tenant: this tenant's ids are missing there
    const otherOp = (await signInSeededOperator(t, '127.0.0.1')).token;
    const mine = (await list()).list[0] as MachineItem;
    expect((await put(`/api/v1/operate/machine/${mine.id}`, { online: false }, otherOp, '127.0.0.1')).statusCode).toBe(404);
    expect((await put(`/api/v1/operate/datacenter/${mine.datacenterId}`, { name: '抢' }, otherOp, '127.0.0.1')).statusCode).toBe(404);
    expect((await put(`/api/v1/operate/gpu_type/${mine.gpuType.id}`, { name: '抢' }, otherOp, '127.0.0.1')).statusCode).toBe(404);
    expect((await post('/api/v1/operate/datacenter', { name: '用户不可' }, token)).statusCode).toBe(403);
    expect((await get(`/api/v1/machine/list`)).json().data.list.find((x: MachineItem) => x.id === mine.id)?.online).toBe(true);
  });

  it('registers this host’s GPUs as a non-demo machine with their device nodes, once', async () => {
    await seedDemo(t.container.db, () => {}, { gpus: parseNvidiaSmi(SMI_4090x2) });
    await seedDemo(t.container.db, () => {}, { gpus: parseNvidiaSmi(SMI_4090x2) });
    const rows = await t.container.db.select().from(machines).where(eq(machines.demo, false));
    const local = rows.filter((r) => r.hostName.startsWith('local-'));
    expect(local).toHaveLength(1);
    expect(local[0]).toMatchObject({ gpuTotal: 2, demo: false, online: true });
    expect(local[0]?.gpuDevices.slice(0, 4)).toEqual(['/dev/nvidia0', '/dev/nvidia1', '/dev/nvidiactl', '/dev/nvidia-uvm']);
    const item = (await list('?pageSize=100')).list.find((m) => m.id === local[0]?.id);
    expect(item?.gpuType.name).toBe('NVIDIA GeForce RTX 4090');
  });
});
