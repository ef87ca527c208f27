import crypto from 'node:crypto';
import os from 'node:os';
import { and, asc, eq } from 'drizzle-orm';
import type { Db } from './client.ts';
import { tenantHosts, tenants } from './schema/tenant.ts';
import { datacenters } from './schema/datahub.ts';
import { users } from './schema/user.ts';
import { wallets } from './schema/wallet.ts';
import { hashPassword } from '../lib/password.ts';
import { gpuTypes, machineTags, machines } from './schema/compute.ts';
import { detectGpus, gpuDeviceNodes, type DetectedGpu } from '../lib/gpu-detect.ts';

type DemoTenant = {
  code: string;
  hosts: string[];
  title: string;
  sloganTitle: string;
  slogan: string;
  color: string;
  mark: string;
  htmlStyle: number;
  restricted: boolean;
  captchaType: 'click' | 'slide' | 'rotate' | 'drag';
  isDefault: boolean;
  company: string;
  phone: string;
  datacenters: string[];
  en?: { title: string; sloganTitle: string; slogan: string; companyName: string };
};

const DEMO: DemoTenant[] = [
  {
    code: 'demo',
    hosts: ['localhost'],
    title: '算力云',
    sloganTitle: '弹性 GPU 算力，按秒计费',
    slogan: '4090、A800、H800 即开即用，预装 PyTorch 与主流大模型镜像，Web 终端与 SSH 一键直连。',
    color: '#1677ff',
    mark: '算',
    htmlStyle: 0,
    restricted: false,
    captchaType: 'slide',
    isDefault: true,
    company: '算力云（演示）科技有限公司',
    phone: '400-000-0000',
    datacenters: ['北京 A 区', '内蒙 B 区', '重庆 C 区'],
    en: {
      title: 'Suanli Cloud',
      sloganTitle: 'Elastic GPU compute, billed by the second',
      slogan: '4090, A800 and H800 ready in seconds, with PyTorch and popular model images preinstalled; web terminal and SSH in one click.',
      companyName: 'Suanli Cloud (Demo) Technology Co., Ltd.',
    },
  },
  {
    code: 'starlake',
    hosts: ['127.0.0.1'],
    title: '星湖智算',
    sloganTitle: '面向科研与企业的智算平台',
    slogan: '高校课题组与 AI 团队的训练、微调与推理平台，包年包月更优惠。',
    color: '#13a8a8',
    mark: '星',
    htmlStyle: 1,
    restricted: false,
    captchaType: 'click',
    isDefault: false,
    company: '星湖智算（演示）有限公司',
    phone: '400-111-2222',
    datacenters: ['杭州一区', '宁夏二区', '广州三区'],
  },
  {
    code: 'partner',
    hosts: ['127.0.0.2'],
    title: '合作伙伴算力专区',
    sloganTitle: '专属算力，专人服务',
    slogan: '为合作伙伴定制的 GPU 算力专区，如需帮助请联系客户经理。',
    color: '#722ed1',
    mark: '合',
    htmlStyle: 2,
    restricted: true,
    captchaType: 'rotate',
    isDefault: false,
    company: '合作伙伴（演示）有限公司',
    phone: '400-333-4444',
    datacenters: ['上海一区', '成都二区', '西安三区'],
  },
];

/** Room for the mark and the title: CJK glyphs at 18 px take about their font size each. */
const wideWidth = (title: string) => 60 + [...title].length * 19;

/** A square logo: the tenant's first character on its brand colour, as an SVG data URI. */
function logo(mark: string, color: string, wide: boolean, title: string): string {
  const svg = wide
    ? `<svg xmlns="http://www.w3.org/2000/svg" width="${wideWidth(title)}" height="40" viewBox="0 0 ${wideWidth(title)} 40"><rect width="40" height="40" rx="8" fill="${color}"/><text x="20" y="28" font-size="22" text-anchor="middle" fill="#fff" font-family="sans-serif">${mark}</text><text x="50" y="27" font-size="18" fill="#1f1f1f" font-family="sans-serif">${title}</text></svg>`
    : `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="${color}"/><text x="32" y="44" font-size="36" text-anchor="middle" fill="#fff" font-family="sans-serif">${mark}</text></svg>`;
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}

/**
 * Seeds the demo tenants of PRODUCT.md once (idempotent): branding, datacenters and an operator
 * account per tenant whose random password is printed once, at the first seed.
 */
export async function seedDemo(db: Db, log: (line: string) => void = (l) => console.log(l), opts: { gpus?: DetectedGpu[] } = {}): Promise<void> {
  await seedTenants(db, log);
  await seedInventory(db, log, opts.gpus ?? (await detectGpus()));
}

async function seedTenants(db: Db, log: (line: string) => void): Promise<void> {
  for (const t of DEMO) {
    const existing = await db.select({ id: tenants.id }).from(tenants).where(eq(tenants.code, t.code)).limit(1);
    if (existing[0]) continue;
    const operatorPassword = `Op${crypto.randomBytes(6).toString('base64url')}9`;
    const passwordHash = await hashPassword(operatorPassword);
    await db.transaction(async (tx) => {
      const [row] = await tx
        .insert(tenants)
        .values({
          code: t.code,
          title: t.title,
          sloganTitle: t.sloganTitle,
          slogan: t.slogan,
          favicon: logo(t.mark, t.color, false, t.title),
          hashRateLogo: logo(t.mark, t.color, false, t.title),
          navigationLogo: logo(t.mark, t.color, true, t.title),
          loginLogo: logo(t.mark, t.color, true, t.title),
          htmlStyle: t.htmlStyle,
          restricted: t.restricted,
          captchaType: t.captchaType,
          isDefault: t.isDefault,
          settings: { primaryColor: t.color, contactPhone: t.phone, contactEmail: `support@${t.code}.example.com`, companyName: t.company, icp: '京ICP备00000000号-1（演示）', ...(t.en ? { en: t.en } : {}) },
          // Demo tenants have no real gateway: the sandbox cashier is how they take a payment (and
          // the server warns at start while it is on). A new tenant has no payment method at all.
          paymentSettings: { sandbox: { enabled: true } },
        })
        .returning({ id: tenants.id });
      if (!row) throw new Error('seed: tenant insert failed');
      await tx.insert(tenantHosts).values(t.hosts.map((host) => ({ host, tenantId: row.id }))).onConflictDoNothing();
      await tx.insert(datacenters).values(t.datacenters.map((name, i) => ({ tenantId: row.id, name, sort: i })));
      const [op] = await tx
        .insert(users)
        .values({ tenantId: row.id, phone: '13900000000', userName: '', passwordHash, role: 'operator' })
        .returning({ id: users.id });
      if (op) await tx.insert(wallets).values({ userId: op.id, tenantId: row.id });
    });
    log(`[seed] tenant ${t.code} (${t.hosts.join(', ')}): operator 13900000000 / ${operatorPassword}`);
  }
}

// ---- Issue #8: the demo market (GPU types, tags, machines) and the host's own GPUs. ----

/** Units of 0.0001 yuan: ¥1 = 10,000. */
const yuan = (y: number) => Math.round(y * 10_000);
type DemoGpu = { name: string; memoryGb: number; hour: number; day: number; week: number; month: number; year: number };
const DEMO_GPUS: DemoGpu[] = [
  { name: 'RTX 4090 24G', memoryGb: 24, hour: 2.18, day: 48, week: 310, month: 1200, year: 12_600 },
  { name: 'RTX 3090 24G', memoryGb: 24, hour: 1.38, day: 30, week: 195, month: 760, year: 7_980 },
  { name: 'A100 80G', memoryGb: 80, hour: 6.68, day: 150, week: 960, month: 3800, year: 39_900 },
  { name: 'V100 32G', memoryGb: 32, hour: 2.48, day: 55, week: 350, month: 1380, year: 14_500 },
];
const DEMO_TAGS = [
  { name: '热门', color: 'red' },
  { name: '新品', color: 'green' },
  { name: '大显存', color: 'purple' },
  { name: '性价比', color: 'orange' },
];
/**
 * Eight machines over the tenant's first three datacenters. CPU and memory per GPU stay modest:
 * the local driver enforces them as real cgroup limits on this host. One machine is offline and one
 * nearly sold out (7 of its 8 GPUs shown as taken: demo occupancy, held by no instance).
 */
const DEMO_MACHINES: { dc: number; host: string; gpu: number; total: number; used?: number; cpu: number; mem: number; tags: string[]; online?: boolean }[] = [
  { dc: 0, host: 'a-4090-01', gpu: 0, total: 8, cpu: 2, mem: 8, tags: ['热门'] },
  { dc: 0, host: 'a-4090-02', gpu: 0, total: 8, used: 7, cpu: 2, mem: 8, tags: ['热门'] },
  { dc: 0, host: 'a-a100-01', gpu: 2, total: 4, cpu: 2, mem: 8, tags: ['大显存', '新品'] },
  { dc: 1, host: 'b-3090-01', gpu: 1, total: 8, cpu: 1, mem: 4, tags: ['性价比'] },
  { dc: 1, host: 'b-3090-02', gpu: 1, total: 8, cpu: 1, mem: 4, tags: ['性价比'], online: false },
  { dc: 1, host: 'b-v100-01', gpu: 3, total: 4, cpu: 2, mem: 6, tags: [] },
  { dc: 2, host: 'c-4090-01', gpu: 0, total: 8, cpu: 2, mem: 8, tags: ['新品'] },
  { dc: 2, host: 'c-a100-01', gpu: 2, total: 8, cpu: 2, mem: 8, tags: ['大显存'] },
];
const priceOf = (g: DemoGpu) => ({ priceHour: yuan(g.hour), priceDay: yuan(g.day), priceWeek: yuan(g.week), priceMonth: yuan(g.month), priceYear: yuan(g.year) });

/**
 * Per demo tenant, once (when it has no GPU type yet): GPU types, tags and eight demo machines.
 * Then, when nvidia-smi found GPUs, the default tenant gets a non-demo machine with them (once).
 */
async function seedInventory(db: Db, log: (line: string) => void, hostGpus: DetectedGpu[]): Promise<void> {
  for (const t of DEMO) {
    const [tenant] = await db.select({ id: tenants.id }).from(tenants).where(eq(tenants.code, t.code)).limit(1);
    if (!tenant) continue;
    const [anyType] = await db.select({ id: gpuTypes.id }).from(gpuTypes).where(eq(gpuTypes.tenantId, tenant.id)).limit(1);
    if (anyType) continue;
    await db.transaction(async (tx) => {
      const dcs = await tx.select({ id: datacenters.id }).from(datacenters).where(eq(datacenters.tenantId, tenant.id)).orderBy(asc(datacenters.sort), asc(datacenters.id));
      if (dcs.length === 0) return;
      const types = await tx
        .insert(gpuTypes)
        .values(DEMO_GPUS.map((g, i) => ({ tenantId: tenant.id, name: g.name, memoryGb: g.memoryGb, vendor: 'NVIDIA', sort: i })))
        .returning({ id: gpuTypes.id });
      await tx.insert(machineTags).values(DEMO_TAGS.map((g, i) => ({ tenantId: tenant.id, name: g.name, color: g.color, sort: i })));
      await tx.insert(machines).values(
        DEMO_MACHINES.map((m) => {
          const gpu = DEMO_GPUS[m.gpu] as DemoGpu;
          const dc = dcs[m.dc % dcs.length] as { id: number };
          const type = types[m.gpu] as { id: number };
          return {
            tenantId: tenant.id,
            datacenterId: dc.id,
            hostName: `${t.code}-${m.host}`,
            gpuTypeId: type.id,
            gpuTotal: m.total,
            gpuUsed: m.used ?? 0,
            cpuPerGpu: m.cpu,
            memoryGbPerGpu: m.mem,
            systemDiskGb: 30,
            dataDiskFreeGb: 50,
            dataDiskMaxGb: 500,
            dataDiskPricePerGbDay: 50,
            ...priceOf(gpu),
            tags: m.tags,
            online: m.online ?? true,
            demo: true,
          };
        }),
      );
    });
  }
  if (hostGpus.length > 0) await registerHostGpus(db, log, hostGpus);
}

/** The host's GPUs (nvidia-smi) as a non-demo machine of the default tenant, one per GPU model; once. */
export async function registerHostGpus(db: Db, log: (line: string) => void, gpus: DetectedGpu[]): Promise<void> {
  const [tenant] = await db.select({ id: tenants.id }).from(tenants).where(eq(tenants.isDefault, true)).limit(1);
  if (!tenant) return;
  const [dc] = await db.select({ id: datacenters.id }).from(datacenters).where(eq(datacenters.tenantId, tenant.id)).orderBy(asc(datacenters.sort), asc(datacenters.id)).limit(1);
  if (!dc) return;
  const host = (os.hostname().toLowerCase().replace(/[^a-z0-9.-]/g, '-').replace(/^[^a-z0-9]+/, '') || 'host').slice(0, 40);
  const byModel = new Map<string, DetectedGpu[]>();
  for (const g of gpus) byModel.set(g.name, [...(byModel.get(g.name) ?? []), g]);
  let n = 0;
  for (const [model, list] of byModel) {
    const hostName = n++ === 0 ? `local-${host}` : `local-${host}-${n}`;
    const [exists] = await db.select({ id: machines.id }).from(machines).where(and(eq(machines.tenantId, tenant.id), eq(machines.hostName, hostName))).limit(1);
    if (exists) continue;
    const memoryGb = list[0]?.memoryGb ?? 1;
    await db.transaction(async (tx) => {
      await tx.insert(gpuTypes).values({ tenantId: tenant.id, name: model, memoryGb, vendor: 'NVIDIA', sort: 100 }).onConflictDoNothing();
      const [type] = await tx.select({ id: gpuTypes.id }).from(gpuTypes).where(and(eq(gpuTypes.tenantId, tenant.id), eq(gpuTypes.name, model))).limit(1);
      if (!type) throw new Error('seed: GPU type insert failed');
      const like = DEMO_GPUS.find((g) => g.memoryGb === memoryGb) ?? (DEMO_GPUS[0] as DemoGpu);
      await tx.insert(machines).values({
        tenantId: tenant.id,
        datacenterId: dc.id,
        hostName,
        gpuTypeId: type.id,
        gpuTotal: list.length,
        cpuPerGpu: Math.max(1, Math.min(2, Math.floor(os.cpus().length / list.length))),
        memoryGbPerGpu: 8,
        ...priceOf(like),
        dataDiskPricePerGbDay: 50,
        tags: [],
        online: true,
        demo: false,
        gpuDevices: gpuDeviceNodes(list),
      });
    });
    log(`[seed] this host's GPUs registered as machine ${hostName}: ${list.length} × ${model} (${memoryGb} GB)`);
  }
}
