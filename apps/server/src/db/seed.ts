import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from './client.ts';
import { tenantHosts, tenants } from './schema/tenant.ts';
import { datacenters } from './schema/datahub.ts';
import { users } from './schema/user.ts';
import { wallets } from './schema/wallet.ts';
import { hashPassword } from '../lib/password.ts';

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
export async function seedDemo(db: Db, log: (line: string) => void = (l) => console.log(l)): Promise<void> {
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
