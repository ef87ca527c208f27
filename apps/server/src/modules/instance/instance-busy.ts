import type { DbOrTx } from '../../db/client.ts';
import { createInstanceRepository } from './instance.repository.ts';

/**
 * Issue #10: work that reads or writes a stopped instance's disks from outside it — a clone being
 * provisioned from it, a data copy from or to it, its system disk being saved as an image. While
 * one runs, the instance must not start, stop, reset or be released under it (two mounts of one
 * disk, or a half-copied layer). Returns why, in Chinese, or null when nothing holds it.
 */
export async function instanceBusyReason(db: DbOrTx, instanceId: string): Promise<string | null> {
  const held = await createInstanceRepository(db).diskHolders(instanceId);
  if (held.cloneId) return `实例正在被克隆到 ${held.cloneId}，请等待克隆完成`;
  if (held.copyId) return '实例正在进行数据拷贝，请等待拷贝完成或先终止拷贝';
  if (held.imageId) return '实例的系统盘正在保存为镜像，请等待保存完成';
  return null;
}
