import { and, eq, inArray, isNull, or } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { dataCopies, images, instances } from '../../db/schema/compute.ts';

/**
 * Issue #10: work that reads or writes a stopped instance's disks from outside it — a clone being
 * provisioned from it, a data copy from or to it, its system disk being saved as an image. While
 * one runs, the instance must not start, stop, reset or be released under it (two mounts of one
 * disk, or a half-copied layer). Returns why, in Chinese, or null when nothing holds it.
 */
export async function instanceBusyReason(db: DbOrTx, instanceId: string): Promise<string | null> {
  const [clone, copy, image] = await Promise.all([
    db
      .select({ id: instances.id })
      .from(instances)
      .where(and(eq(instances.cloneSourceId, instanceId), eq(instances.status, 'creating')))
      .limit(1),
    db
      .select({ id: dataCopies.id })
      .from(dataCopies)
      .where(and(or(eq(dataCopies.sourceInstanceId, instanceId), eq(dataCopies.targetInstanceId, instanceId)), inArray(dataCopies.status, ['queued', 'running'])))
      .limit(1),
    db
      .select({ id: images.id })
      .from(images)
      .where(and(eq(images.sourceInstanceId, instanceId), eq(images.status, 'building'), isNull(images.deletedAt)))
      .limit(1),
  ]);
  if (clone[0]) return `实例正在被克隆到 ${clone[0].id}，请等待克隆完成`;
  if (copy[0]) return '实例正在进行数据拷贝，请等待拷贝完成或先终止拷贝';
  if (image[0]) return '实例的系统盘正在保存为镜像，请等待保存完成';
  return null;
}
