import { z } from 'zod';
import { instanceId, instanceStatus } from './instance.ts';
import { chargeType, MAX_GPUS_PER_INSTANCE, orderLine, prepaidPeriod } from './order.ts';

/**
 * Issue #10: what a user does with an instance after renting it — charge-type conversions,
 * renewal, GPU resize, data-disk resize, clone, data copy, snapshots (private images), no-GPU mode.
 * Rules: docs/instance-operations.md.
 *
 * Every change is an order (orders.kind): when it costs money the order is created unpaid and paid
 * on the check-order page (POST /api/v1/order/pay, like a new instance); when it refunds money or
 * costs nothing it is applied at once and the order is recorded as paid with `amount` ≤ 0 (the
 * refund, negative). Money moves only inside the transaction that changes the instance.
 */

/** No-GPU mode (无卡模式): a fixed price per hour, whatever the machine (¥0.10/h). */
export const NO_GPU_HOURLY = 1_000;
/** What a no-GPU run gets: 1 CPU core and 2 GB of memory, no GPU device. */
export const NO_GPU_CPU_CORES = 1;
export const NO_GPU_MEMORY_GB = 2;
/** /center/system warns above this share of a disk used (90 %). */
export const DISK_WARN_RATIO = 0.9;
/** Data copies one user may have queued or running at once. */
export const MAX_ACTIVE_COPIES = 3;
/** Private images (snapshots) one user may keep. */
export const MAX_PRIVATE_IMAGES = 20;

const quantity = z.number({ error: '购买时长必须是数字' }).int({ error: '购买时长必须是整数' }).min(1, { error: '购买时长至少为 1' }).max(36, { error: '购买时长过长' });
const gpuCount = z
  .number({ error: 'GPU 数量必须是数字' })
  .int({ error: 'GPU 数量必须是整数' })
  .min(1, { error: 'GPU 数量至少为 1' })
  .max(MAX_GPUS_PER_INSTANCE, { error: `GPU 数量最多为 ${MAX_GPUS_PER_INSTANCE}` });
const dataDiskGb = z.number({ error: '数据盘大小必须是数字' }).int({ error: '数据盘大小必须是整数（GB）' }).min(1, { error: '数据盘大小至少 1 GB' }).max(65_536, { error: '数据盘过大' });
const machineId = z.number({ error: '机器必须是数字' }).int({ error: '机器必须是正整数' }).min(1, { error: '机器必须是正整数' }).max(2_147_483_647, { error: '机器不存在' });
const imageIdNum = z.number({ error: '镜像必须是数字' }).int({ error: '镜像必须是正整数' }).min(1, { error: '镜像不存在' }).max(2_147_483_647, { error: '镜像不存在' });
const instanceName = z.string({ error: '实例名称格式不正确' }).trim().max(32, { error: '实例名称不能超过 32 个字符' });

/**
 * What a change would cost, shown before confirming. `amount` > 0 is paid from the balance (the
 * order is created unpaid and paid on the check-order page); `amount` < 0 is refunded to the
 * balance at once; 0 changes nothing in the balance. `hourly` is the pay-as-you-go price per hour
 * after the change (0 for prepaid).
 */
export const changePreview = z.object({
  instanceId: z.string(),
  lines: z.array(orderLine),
  amount: z.number().int(),
  hourly: z.number().int(),
  /** Prepaid: when the instance's paid time ends after the change (ISO), else null. */
  expiresAt: z.string().nullable(),
  /** Prepaid time left now, in seconds (what a refund or a difference is prorated on). */
  remainingSeconds: z.number().int(),
});
export type ChangePreview = z.infer<typeof changePreview>;

// ---- charge type ------------------------------------------------------------------------------

/** POST /api/v1/order/charge_type/prepay: pay-as-you-go → prepaid, the period from now. An unpaid order. */
export const chargeTypePrepayBody = z.strictObject({ instanceId, period: prepaidPeriod, quantity });
export type ChargeTypePrepayBody = z.input<typeof chargeTypePrepayBody>;
/** POST /api/v1/order/charge_type/prepay/preview (same body): the price of it. */

/** POST /api/v1/order/charge_type/payg/preview and /payg: prepaid → pay-as-you-go, unused time refunded pro rata to the second. */
export const chargeTypePaygBody = z.strictObject({ instanceId });
export type ChargeTypePaygBody = z.input<typeof chargeTypePaygBody>;

// ---- renewal ----------------------------------------------------------------------------------

/** POST /api/v1/order/instance/renewal (and /renewal/preview): extends a prepaid instance (also an expired, unreleased one). An unpaid order. */
export const renewalBody = z.strictObject({ instanceId, period: prepaidPeriod, quantity });
export type RenewalBody = z.input<typeof renewalBody>;

// ---- GPU count on the same machine -----------------------------------------------------------

/** POST /api/v1/order/instance/change (and /change/preview): the GPU count on the same machine. Stopped instances only. */
export const specChangeBody = z.strictObject({ instanceId, gpuCount });
export type SpecChangeBody = z.input<typeof specChangeBody>;

// ---- data disk --------------------------------------------------------------------------------

/** GET /api/v1/instance/available_expand_disk?instanceId= */
export const expandDiskQuery = z.strictObject({ instanceId });
export const availableExpandDisk = z.object({
  instanceId: z.string(),
  chargeType,
  status: instanceStatus,
  currentGb: z.number().int(),
  /** Bytes the data disk holds now (the driver's count; 0 when unknown). */
  usedBytes: z.number().int(),
  /** Smallest size it can shrink to: the free size, or what it holds rounded up to a GB, whichever is larger. */
  minGb: z.number().int(),
  /** The machine's largest data disk. */
  maxGb: z.number().int(),
  freeGb: z.number().int(),
  pricePerGbDay: z.number().int(),
  /** Shrinking needs the instance stopped; growing works while it runs. */
  canShrink: z.boolean(),
});
export type AvailableExpandDisk = z.infer<typeof availableExpandDisk>;

/** POST /api/v1/order/data_disk/change/preview and /change: the data disk's new size (GB). */
export const dataDiskChangeBody = z.strictObject({ instanceId, dataDiskGb });
export type DataDiskChangeBody = z.input<typeof dataDiskChangeBody>;

// ---- clone ------------------------------------------------------------------------------------

/** POST /api/v1/order/instance/clone/payg: a copy of an instance (system and data disk) as a new instance on a chosen machine. An unpaid order. */
export const clonePaygBody = z.strictObject({ instanceId, machineId, gpuCount, dataDiskGb: dataDiskGb.optional(), name: instanceName.optional() });
export type ClonePaygBody = z.input<typeof clonePaygBody>;
/** POST /api/v1/order/instance/clone/prepay */
export const clonePrepayBody = clonePaygBody.extend({ period: prepaidPeriod, quantity });
export type ClonePrepayBody = z.input<typeof clonePrepayBody>;

// ---- no-GPU mode ------------------------------------------------------------------------------

/** POST /api/v1/ide-instance/power_on accepts `noGpu: true` for a stopped pay-as-you-go instance. */
export const powerOnBody = z.strictObject({ instanceId, noGpu: z.boolean({ error: 'noGpu 应为 true 或 false' }).optional() });
export type PowerOnBody = z.input<typeof powerOnBody>;

// ---- disks (/center/system) -------------------------------------------------------------------

export const instanceDiskUsage = z.object({
  instanceId: z.string(),
  name: z.string(),
  status: instanceStatus,
  systemDiskGb: z.number().int(),
  /** What the instance wrote over its image. */
  systemUsedBytes: z.number().int(),
  dataDiskGb: z.number().int(),
  dataUsedBytes: z.number().int(),
  dataTotalBytes: z.number().int(),
  /** Either disk above DISK_WARN_RATIO. */
  warn: z.boolean(),
});
export type InstanceDiskUsage = z.infer<typeof instanceDiskUsage>;
/** GET /api/v1/instance/disk_usage */
export const diskUsageList = z.object({ list: z.array(instanceDiskUsage) });

// ---- data copy --------------------------------------------------------------------------------

export const copyStatuses = ['queued', 'running', 'succeeded', 'failed', 'terminated'] as const;
export type CopyStatus = (typeof copyStatuses)[number];
export const COPY_ID_RE = /^cp-[a-z0-9]{12}$/;
export const copyId = z.string({ error: '拷贝任务 ID 格式不正确' }).regex(COPY_ID_RE, { error: '拷贝任务 ID 格式不正确' });

/** A path on the data disk, relative to /root/data ("" or "/" = the whole disk). */
export const dataPath = z
  .string({ error: '路径格式不正确' })
  .trim()
  .max(1024, { error: '路径不能超过 1024 个字符' })
  // eslint-disable-next-line no-control-regex
  .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), { error: '路径包含不可见的控制字符' })
  .refine((s) => !s.split('/').includes('..'), { error: '路径不能包含 ..' })
  .default('');

/** POST /api/v1/instance/copy_data: copies files from one of the user's instances' data disk to another's. */
export const copyDataBody = z.strictObject({ sourceInstanceId: instanceId, targetInstanceId: instanceId, sourcePath: dataPath, targetPath: dataPath });
export type CopyDataBody = z.input<typeof copyDataBody>;
export const copyJob = z.object({
  id: z.string(),
  sourceInstanceId: z.string(),
  sourceInstanceName: z.string(),
  targetInstanceId: z.string(),
  targetInstanceName: z.string(),
  sourcePath: z.string(),
  targetPath: z.string(),
  status: z.enum(copyStatuses),
  totalBytes: z.number().int(),
  copiedBytes: z.number().int(),
  /** 0–100. */
  percent: z.number().int(),
  files: z.number().int(),
  /** Why it failed, in Chinese; '' otherwise. */
  error: z.string(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
});
export type CopyJob = z.infer<typeof copyJob>;
/** GET /api/v1/instance/copy_data_status: one job (`id`), or the latest jobs touching an instance (`instanceId`), or the user's latest. */
export const copyStatusQuery = z.strictObject({ id: copyId.optional(), instanceId: instanceId.optional() });
export const copyJobList = z.object({ list: z.array(copyJob) });
/** POST /api/v1/instance/terminate_copy */
export const terminateCopyBody = z.strictObject({ id: copyId });

/** GET /api/v1/instance/user_left_migrate: the user's instances whose disks still exist and can be copied from or cloned. */
export const migratableInstance = z.object({
  instanceId: z.string(),
  name: z.string(),
  status: instanceStatus,
  machineId: z.number().int(),
  hostName: z.string(),
  machineOnline: z.boolean(),
  dataDiskGb: z.number().int(),
  /** Why it is listed, in Chinese ("机器已下线", "已关机"). */
  reason: z.string(),
});
export type MigratableInstance = z.infer<typeof migratableInstance>;
export const migratableList = z.object({ list: z.array(migratableInstance) });

// ---- snapshots and images ---------------------------------------------------------------------

/** GET /api/v1/instance/snapshot?instanceId=: the images saved from an instance's system disk. */
export const snapshotQuery = z.strictObject({ instanceId });
const imageName = z
  .string({ error: '请输入镜像名称' })
  .trim()
  .min(1, { error: '请输入镜像名称' })
  .max(40, { error: '镜像名称不能超过 40 个字符' })
  // eslint-disable-next-line no-control-regex
  .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), { error: '镜像名称包含不可见的控制字符' });
const imageDescription = z
  .string({ error: '镜像描述格式不正确' })
  .trim()
  .max(500, { error: '镜像描述不能超过 500 个字符' });
/** POST /api/v1/instance/snapshot: saves a stopped instance's system disk as a private image (a persisted job). */
export const snapshotBody = z.strictObject({ instanceId, name: imageName, description: imageDescription.optional() });
export type SnapshotBody = z.input<typeof snapshotBody>;

export const imageKinds = ['platform', 'tenant', 'private'] as const;
export type ImageKind = (typeof imageKinds)[number];
/** A user's own image (/center/image) or a community one (/images). */
export const userImage = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  os: z.string(),
  contents: z.array(z.string()),
  status: z.enum(['building', 'ready', 'failed']),
  progress: z.number().int(),
  /** Why saving failed, in Chinese; '' otherwise. */
  error: z.string(),
  sizeBytes: z.number().int(),
  kind: z.enum(imageKinds),
  /** The caller owns it. */
  mine: z.boolean(),
  /** The instance it was saved from (its id even after release) and that instance's name. */
  sourceInstanceId: z.string().nullable(),
  sourceInstanceName: z.string(),
  /** The image it was built over. */
  baseImageName: z.string(),
  shared: z.boolean(),
  sharedAt: z.string().nullable(),
  /** The author as the community shows them (a masked name). */
  authorName: z.string(),
  /** Instances created from it by others. */
  useCount: z.number().int(),
  /** Instances and orders use it now (it can't be deleted). */
  inUse: z.boolean(),
  createdAt: z.string(),
});
export type UserImage = z.infer<typeof userImage>;
export const userImagePage = z.object({ list: z.array(userImage), total: z.number().int() });
export type UserImagePage = z.infer<typeof userImagePage>;

const page = z.coerce.number({ error: '页码必须是数字' }).int({ error: '页码必须是正整数' }).min(1, { error: '页码必须是正整数' }).max(100_000, { error: '页码过大' }).default(1);
const pageSize = z.coerce.number({ error: '每页条数必须是数字' }).int({ error: '每页条数必须是整数' }).min(1, { error: '每页至少 1 条' }).max(100, { error: '每页最多 100 条' }).default(20);
/** GET /api/v1/image/private */
export const privateImageQuery = z.strictObject({ page, pageSize });
/** GET /api/v1/image/community */
export const communityImageQuery = z.strictObject({
  page,
  pageSize,
  keyword: z.string({ error: '搜索词格式不正确' }).trim().max(64, { error: '搜索词不能超过 64 个字符' }).optional(),
  sort: z.enum(['hot', 'new'], { error: '排序应为 hot 或 new' }).default('hot'),
});
export type CommunityImageQuery = z.input<typeof communityImageQuery>;
export const userImageParams = z.object({ id: z.coerce.number({ error: '镜像 ID 必须是数字' }).int({ error: '镜像 ID 必须是整数' }).min(1, { error: '镜像 ID 必须是正整数' }).max(2 ** 31 - 1, { error: '镜像不存在' }) });
/** PUT /api/v1/image/private/{id}: rename, describe, share to or withdraw from the community. */
export const userImageUpdateBody = z
  .strictObject({ name: imageName.optional(), description: imageDescription.optional(), shared: z.boolean({ error: 'shared 应为 true 或 false' }).optional() })
  .refine((b) => b.name !== undefined || b.description !== undefined || b.shared !== undefined, { error: '请至少修改一项' });
export type UserImageUpdateBody = z.input<typeof userImageUpdateBody>;

/** Create from an image: the market's create page takes `?imageId=` (any image the user may use). */
export const imageRef = z.strictObject({ imageId: imageIdNum });
