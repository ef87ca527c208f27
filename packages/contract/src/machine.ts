import { z } from 'zod';

/**
 * Inventory as users see it (issue #8): datacenters hold machines; a machine has N GPUs of one
 * type, CPU and memory per GPU, disks, prices per GPU and tags. GPU types, disk options and tags
 * are rows (data), never code.
 */

const pageNumber = z.coerce.number({ error: '页码必须是数字' }).int({ error: '页码必须是正整数' }).min(1, { error: '页码必须是正整数' }).max(100_000, { error: '页码过大' }).default(1);
const pageSize = z.coerce.number({ error: '每页条数必须是数字' }).int({ error: '每页条数必须是整数' }).min(1, { error: '每页至少 1 条' }).max(100, { error: '每页最多 100 条' }).default(20);
const optionalId = (label: string) => z.coerce.number({ error: `${label}必须是数字` }).int({ error: `${label}必须是正整数` }).min(1, { error: `${label}必须是正整数` }).max(2_147_483_647, { error: `${label}过大` }).optional();
const optionalMoney = (label: string) => z.coerce.number({ error: `${label}必须是数字` }).int({ error: `${label}必须是整数（单位 0.0001 元）` }).min(0, { error: `${label}不能为负数` }).max(Number.MAX_SAFE_INTEGER, { error: `${label}过大` }).optional();

/** Prices per GPU, in units of 0.0001 yuan, for each charge period. */
export const gpuPrices = z.object({
  hour: z.number().int(),
  day: z.number().int(),
  week: z.number().int(),
  month: z.number().int(),
  year: z.number().int(),
});
export type GpuPrices = z.infer<typeof gpuPrices>;

export const gpuType = z.object({
  id: z.number().int(),
  name: z.string(),
  /** Memory of one GPU, GB. */
  memoryGb: z.number().int(),
  vendor: z.string(),
});
export type GpuType = z.infer<typeof gpuType>;

export const tag = z.object({ id: z.number().int(), name: z.string(), color: z.string() });
export type Tag = z.infer<typeof tag>;

export const machineItem = z.object({
  id: z.number().int(),
  datacenterId: z.number().int(),
  datacenterName: z.string(),
  hostName: z.string(),
  gpuType,
  gpuTotal: z.number().int(),
  gpuFree: z.number().int(),
  cpuPerGpu: z.number().int(),
  memoryGbPerGpu: z.number().int(),
  systemDiskGb: z.number().int(),
  /** Data disk included free with each instance, GB. */
  dataDiskFreeGb: z.number().int(),
  /** The largest data disk an instance on this machine can have, GB. */
  dataDiskMaxGb: z.number().int(),
  /** Price of each GB of data disk beyond the free size, per day (units). */
  dataDiskPricePerGbDay: z.number().int(),
  prices: gpuPrices,
  tags: z.array(z.string()),
  online: z.boolean(),
  /** No physical GPUs behind it: instances say so in their login banner and in the console. */
  demo: z.boolean(),
  /** Online with at least one free GPU. */
  rentable: z.boolean(),
});
export type MachineItem = z.infer<typeof machineItem>;

/** GET /api/v1/machine/list */
export const machineListQuery = z
  .strictObject({
    page: pageNumber,
    pageSize,
    datacenterId: optionalId('数据中心'),
    gpuTypeId: optionalId('GPU 型号'),
    /** Machines with at least this many free GPUs. */
    minFreeGpus: z.coerce.number({ error: '空闲 GPU 数必须是数字' }).int({ error: '空闲 GPU 数必须是整数' }).min(0, { error: '空闲 GPU 数不能为负数' }).max(1024, { error: '空闲 GPU 数过大' }).optional(),
    /** Hourly price per GPU range (units). */
    minPrice: optionalMoney('最低价格'),
    maxPrice: optionalMoney('最高价格'),
    tag: z.string({ error: '标签格式不正确' }).trim().max(32, { error: '标签不能超过 32 个字符' }).optional(),
  })
  .refine((q) => q.minPrice === undefined || q.maxPrice === undefined || q.minPrice <= q.maxPrice, { error: '最低价格不能高于最高价格', path: ['minPrice'] });
export type MachineListQuery = z.input<typeof machineListQuery>;
export const machinePage = z.object({ list: z.array(machineItem), total: z.number().int() });
export type MachinePage = z.infer<typeof machinePage>;

/** GET /api/v1/machine/disk: the data-disk options of one machine (or the tenant's defaults). */
export const diskQuery = z.strictObject({ machineId: optionalId('机器') });
export const diskOptions = z.object({
  systemDiskGb: z.number().int(),
  dataDiskFreeGb: z.number().int(),
  dataDiskMaxGb: z.number().int(),
  /** Sizes are whole multiples of this many GB. */
  stepGb: z.number().int(),
  pricePerGbDay: z.number().int(),
});
export type DiskOptions = z.infer<typeof diskOptions>;

export const imageStatuses = ['building', 'ready', 'failed'] as const;
export type ImageStatus = (typeof imageStatuses)[number];
export const imageItem = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  /** e.g. "Debian 12", what the root filesystem is. */
  os: z.string(),
  /** What the image honestly contains: "Python 3.11.2", "bash 5.2", "PyTorch 1.13 (CPU)". */
  contents: z.array(z.string()),
  status: z.enum(imageStatuses),
  /** 0–100 while building. */
  progress: z.number().int(),
  sizeBytes: z.number().int(),
  createdAt: z.string(),
});
export type ImageItem = z.infer<typeof imageItem>;

// ---- Operator inventory calls (/api/v1/operate/…): datacenters, GPU types, tags, machines. ----

const name = (label: string, max: number) =>
  z
    .string({ error: `请输入${label}` })
    .trim()
    .min(1, { error: `请输入${label}` })
    .max(max, { error: `${label}不能超过 ${max} 个字符` })
    // eslint-disable-next-line no-control-regex
    .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), { error: `${label}包含不可见的控制字符` });
const int = (label: string, min: number, max: number) =>
  z.number({ error: `${label}必须是数字` }).int({ error: `${label}必须是整数` }).min(min, { error: `${label}不能小于 ${min}` }).max(max, { error: `${label}不能大于 ${max}` });
const price = (label: string) =>
  z.number({ error: `${label}必须是数字` }).int({ error: `${label}必须是整数（单位 0.0001 元）` }).min(0, { error: `${label}不能为负数` }).max(1_000_000_000_000, { error: `${label}过大` });

export const idParams = z.strictObject({ id: z.coerce.number({ error: 'ID 必须是数字' }).int({ error: 'ID 必须是正整数' }).min(1, { error: 'ID 必须是正整数' }).max(2_147_483_647, { error: 'ID 过大' }) });

export const datacenterItem = z.object({ id: z.number().int(), name: z.string(), region: z.string(), sort: z.number().int() });
export type DatacenterItem = z.infer<typeof datacenterItem>;
export const datacenterBody = z.strictObject({ name: name('数据中心名称', 32), region: name('地域', 32).optional(), sort: int('排序', 0, 10_000).optional() });
export type DatacenterBody = z.infer<typeof datacenterBody>;

export const gpuTypeBody = z.strictObject({ name: name('GPU 型号', 64), memoryGb: int('显存（GB）', 1, 1024), vendor: name('厂商', 32).optional(), sort: int('排序', 0, 10_000).optional() });
export type GpuTypeBody = z.infer<typeof gpuTypeBody>;

const COLOR_RE = /^(blue|green|red|orange|gold|purple|cyan|magenta|volcano|lime|geekblue|#[0-9a-fA-F]{6})$/;
export const tagBody = z.strictObject({
  name: name('标签名称', 32),
  color: z.string({ error: '标签颜色格式不正确' }).regex(COLOR_RE, { error: '标签颜色应为 blue、green、red 等预设色或 #RRGGBB' }).optional(),
  sort: int('排序', 0, 10_000).optional(),
});
export type TagBody = z.infer<typeof tagBody>;

const HOST_RE = /^[a-zA-Z0-9][a-zA-Z0-9.-]{0,62}$/;
const machineFields = {
  datacenterId: int('数据中心', 1, 2_147_483_647),
  hostName: z.string({ error: '请输入主机名' }).trim().regex(HOST_RE, { error: '主机名只能包含字母、数字、点和连字符，且不超过 63 个字符' }),
  gpuTypeId: int('GPU 型号', 1, 2_147_483_647),
  gpuTotal: int('GPU 数量', 1, 64),
  cpuPerGpu: int('每 GPU 的 CPU 核数', 1, 128),
  memoryGbPerGpu: int('每 GPU 的内存（GB）', 1, 2048),
  systemDiskGb: int('系统盘大小（GB）', 1, 10_000),
  dataDiskFreeGb: int('免费数据盘大小（GB）', 0, 100_000),
  dataDiskMaxGb: int('数据盘上限（GB）', 1, 100_000),
  dataDiskPricePerGbDay: price('数据盘单价（每 GB 每天）'),
  prices: z.strictObject({ hour: price('按量单价'), day: price('日单价'), week: price('周单价'), month: price('月单价'), year: price('年单价') }, { error: '请填写价格（hour、day、week、month、year）' }),
  tags: z.array(name('标签', 32), { error: '标签应为数组' }).max(10, { error: '标签最多 10 个' }),
  online: z.boolean({ error: '上架状态应为 true 或 false' }),
  demo: z.boolean({ error: '演示机标记应为 true 或 false' }),
};
const diskRule = (m: { dataDiskFreeGb?: number; dataDiskMaxGb?: number }) => m.dataDiskFreeGb === undefined || m.dataDiskMaxGb === undefined || m.dataDiskFreeGb <= m.dataDiskMaxGb;
export const machineCreateBody = z
  .strictObject({
    ...machineFields,
    systemDiskGb: machineFields.systemDiskGb.default(30),
    dataDiskFreeGb: machineFields.dataDiskFreeGb.default(50),
    dataDiskMaxGb: machineFields.dataDiskMaxGb.default(500),
    dataDiskPricePerGbDay: machineFields.dataDiskPricePerGbDay.default(0),
    tags: machineFields.tags.default([]),
    online: machineFields.online.default(true),
    demo: machineFields.demo.default(true),
  })
  .refine(diskRule, { error: '免费数据盘不能大于数据盘上限', path: ['dataDiskFreeGb'] });
export type MachineCreateBody = z.input<typeof machineCreateBody>;
/** PUT: any subset of the fields; prices, online/offline and disks are edited this way. */
export const machineUpdateBody = z
  .strictObject({ ...machineFields, prices: machineFields.prices.partial() })
  .partial()
  .refine((m) => Object.keys(m).length > 0, { error: '没有要修改的内容' })
  .refine(diskRule, { error: '免费数据盘不能大于数据盘上限', path: ['dataDiskFreeGb'] });
export type MachineUpdateBody = z.input<typeof machineUpdateBody>;
/** Recipes the operator command and API build images from (apps/server/src/modules/image/recipes.ts). */
export const imageRecipes = ['debian12-python', 'pytorch-cpu'] as const;
export type ImageRecipe = (typeof imageRecipes)[number];
/** What an operator sees of an image: where it comes from, whether it is offered, why a build failed. */
export const operatorImageItem = imageItem.extend({
  slug: z.string(),
  /** Null: offered on every tenant (platform image, maintained from the command line). */
  tenantId: z.number().int().nullable(),
  published: z.boolean(),
  error: z.string().nullable(),
});
export type OperatorImageItem = z.infer<typeof operatorImageItem>;
export const imageBuildBody = z.object({ recipe: z.enum(imageRecipes, { error: `配方必须是 ${imageRecipes.join('、')} 之一` }) });
export const imageIdParams = z.object({ id: z.coerce.number().int({ error: '镜像 ID 必须是整数' }).min(1, { error: '镜像 ID 必须是正整数' }).max(2 ** 31 - 1, { error: '镜像不存在' }) });
export const imageUpdateBody = z
  .object({
    name: z.string().trim().min(1, { error: '镜像名称不能为空' }).max(64, { error: '镜像名称最多 64 个字' }).optional(),
    description: z.string().trim().max(500, { error: '镜像说明最多 500 个字' }).optional(),
    published: z.boolean({ error: 'published 必须是布尔值' }).optional(),
  })
  .strict();
