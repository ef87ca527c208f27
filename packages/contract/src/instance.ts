import { z } from 'zod';
import { chargeType, prepaidPeriod } from './order.ts';

/**
 * PRODUCT.md "Instances": creating -> running <-> stopped (through starting/stopping) ->
 * releasing -> released; failed where the driver failed.
 */
export const instanceStatuses = ['creating', 'starting', 'running', 'stopping', 'stopped', 'releasing', 'released', 'failed'] as const;
export const instanceStatus = z.enum(instanceStatuses, { error: '实例状态不正确' });
export type InstanceStatus = z.infer<typeof instanceStatus>;

/** Instance ids are what `ssh -p 2222 <id>@host` logs in as, and the instance's hostname. */
export const INSTANCE_ID_RE = /^i-[a-z0-9]{10}$/;
export const instanceId = z.string({ error: '实例 ID 格式不正确' }).regex(INSTANCE_ID_RE, { error: '实例 ID 格式不正确' });

export const instanceItem = z.object({
  id: z.string(),
  name: z.string(),
  status: instanceStatus,
  /** Why it is failed or was stopped by the platform (arrears, expiry), in Chinese; '' otherwise. */
  statusReason: z.string(),
  machineId: z.number().int(),
  hostName: z.string(),
  datacenterName: z.string(),
  gpuTypeName: z.string(),
  gpuCount: z.number().int(),
  /** The machine has no physical GPUs. */
  demo: z.boolean(),
  cpuCores: z.number().int(),
  memoryGb: z.number().int(),
  systemDiskGb: z.number().int(),
  dataDiskGb: z.number().int(),
  imageId: z.number().int(),
  imageName: z.string(),
  chargeType,
  period: prepaidPeriod.nullable(),
  /** Pay-as-you-go price per hour (units); 0 for prepaid. */
  hourly: z.number().int(),
  /** Issue #10: running (or starting) in no-GPU mode (无卡模式), at NO_GPU_HOURLY, without its GPUs. */
  noGpu: z.boolean(),
  /** Issue #10: the instance it was cloned from. */
  cloneSourceId: z.string().nullable(),
  /** Prepaid: when it ends. */
  expiresAt: z.string().nullable(),
  /** When the platform will release it (stopped 15 days; prepaid 7 days after expiry), if scheduled. */
  releaseAt: z.string().nullable(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  stoppedAt: z.string().nullable(),
  ssh: z.object({ host: z.string(), port: z.number().int(), user: z.string(), command: z.string() }),
  /** The root password (the user's own instance; the console reveals it on demand). */
  password: z.string(),
});
export type InstanceItem = z.infer<typeof instanceItem>;

/** GET /api/v1/instance/list */
export const instanceListQuery = z.strictObject({
  page: z.coerce.number({ error: '页码必须是数字' }).int({ error: '页码必须是正整数' }).min(1, { error: '页码必须是正整数' }).max(100_000, { error: '页码过大' }).default(1),
  pageSize: z.coerce.number({ error: '每页条数必须是数字' }).int({ error: '每页条数必须是整数' }).min(1, { error: '每页至少 1 条' }).max(100, { error: '每页最多 100 条' }).default(20),
  status: instanceStatus.optional(),
  chargeType: chargeType.optional(),
  /** Matches the name or the id. */
  keyword: z.string({ error: '搜索词格式不正确' }).trim().max(64, { error: '搜索词不能超过 64 个字符' }).optional(),
  /** Include released instances (hidden by default). */
  includeReleased: z.enum(['true', 'false'], { error: 'includeReleased 应为 true 或 false' }).optional(),
});
export type InstanceListQuery = z.input<typeof instanceListQuery>;
export const instancePage = z.object({ list: z.array(instanceItem), total: z.number().int() });
export type InstancePage = z.infer<typeof instancePage>;

/** GET /api/v1/instance/status_tag: counts per status for the filter tabs. */
export const statusTag = z.object({ status: instanceStatus, label: z.string(), count: z.number().int() });
export type StatusTag = z.infer<typeof statusTag>;

export const instanceRef = z.strictObject({ instanceId });
export const instanceNameBody = z.strictObject({
  instanceId,
  name: z.string({ error: '请输入实例名称' }).trim().min(1, { error: '请输入实例名称' }).max(32, { error: '实例名称不能超过 32 个字符' }),
});
/** Root passwords: 8–32 letters, digits and common symbols, at least one letter and one digit. */
export const instancePassword = z
  .string({ error: '请输入新密码' })
  .min(8, { error: '密码长度至少 8 位' })
  .max(32, { error: '密码长度不能超过 32 位' })
  .regex(/^(?=.*[A-Za-z])(?=.*\d)[A-Za-z\d!@#$%^&*()_+\-=[\]{}.,?~]+$/, { error: '密码需同时包含字母和数字，且只能使用字母、数字和常用符号' });
export const instancePasswordBody = z.strictObject({ instanceId, password: instancePassword });
export const changeImageBody = z.strictObject({ instanceId, imageId: z.number({ error: '镜像必须是数字' }).int().min(1, { error: '镜像不存在' }).max(2_147_483_647, { error: '镜像不存在' }) });

/** GET /api/v1/dashboard/common/instance */
export const instanceDashboard = z.object({ total: z.number().int(), running: z.number().int(), stopped: z.number().int(), expiringSoon: z.number().int() });
/** GET /api/v1/dashboard/common/storage */
export const storageDashboard = z.object({ dataDiskGb: z.number().int(), systemDiskGb: z.number().int(), instances: z.number().int() });
