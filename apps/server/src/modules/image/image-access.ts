import type { DbOrTx } from '../../db/client.ts';
import { conflict } from '../../lib/errors.ts';
import type { ImageRow } from './image.repository.ts';
import { createUserImageRepository } from './user-image.repository.ts';

type Owner = { tenantId: number; userId: number };

/**
 * Who may create an instance from an image, or change an instance to it (issue #10):
 * - platform images (tenant null) and the tenant's own, when published;
 * - a private image (a snapshot), by its owner, or by the tenant's users once it is shared to the
 *   community. Anything else reads as missing (404), exactly like an id that does not exist;
 * - a deleted private image (its layer is gone) by nobody.
 */
export function imageUsableBy(image: Pick<ImageRow, 'kind' | 'tenantId' | 'ownerUserId' | 'shared' | 'published'> & { deletedAt?: Date | null }, owner: Owner): boolean {
  if (image.deletedAt) return false;
  if (image.kind === 'private') return image.tenantId === owner.tenantId && (image.ownerUserId === owner.userId || image.shared);
  return image.published && (image.tenantId === null || image.tenantId === owner.tenantId);
}

/**
 * Issue #10, inside the transaction that pays a new-instance order of `image`: a private image is
 * locked (FOR SHARE) and must still be live — a delete racing the payment either commits first
 * (then this refuses, and the payment rolls back: nothing charged) or waits for the payment and then
 * sees the new instance using it. Another user's shared image counts one use (the community's "hot").
 */
export async function countImageUse(tx: DbOrTx, image: Pick<ImageRow, 'id' | 'kind' | 'ownerUserId'>, payerUserId: number): Promise<void> {
  if (image.kind !== 'private') return;
  await lockLiveImage(tx, image.id, '所选镜像已被删除，本次未扣费，请重新下单');
  if (image.ownerUserId === null || image.ownerUserId === payerUserId) return;
  await createUserImageRepository(tx).addUse(image.id);
}

/**
 * Issue #10: locks a private image FOR SHARE inside a transaction that starts using it (an order's
 * payment, a change of image), so a delete can't commit under it; refuses (409) when it is deleted.
 */
export async function lockLiveImage(tx: DbOrTx, imageId: number, message = '所选镜像已被删除'): Promise<void> {
  const live = await createUserImageRepository(tx).lockShared(imageId);
  if (!live || live.deletedAt) throw conflict(message);
}
