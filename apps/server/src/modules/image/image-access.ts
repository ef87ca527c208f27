import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { images } from '../../db/schema/compute.ts';
import type { ImageRow } from './image.repository.ts';

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
 * Issue #10: a paid new-instance order made from another user's shared private image counts one use
 * of it (the community's "hot" order). Call inside the paying transaction.
 */
export async function countImageUse(tx: DbOrTx, image: Pick<ImageRow, 'id' | 'kind' | 'ownerUserId'>, payerUserId: number): Promise<void> {
  if (image.kind !== 'private' || image.ownerUserId === null || image.ownerUserId === payerUserId) return;
  await tx.update(images).set({ useCount: sql`${images.useCount} + 1` }).where(eq(images.id, image.id));
}
