import type { ImageRow } from './image.repository.ts';

type Owner = { tenantId: number; userId: number };

/**
 * Who may create an instance from an image, or change an instance to it (issue #10):
 * - platform images (tenant null) and the tenant's own, when published;
 * - a private image (a snapshot), by its owner, or by the tenant's users once it is shared to the
 *   community. Anything else reads as missing (404), exactly like an id that does not exist.
 */
export function imageUsableBy(image: Pick<ImageRow, 'kind' | 'tenantId' | 'ownerUserId' | 'shared' | 'published'>, owner: Owner): boolean {
  if (image.kind === 'private') return image.tenantId === owner.tenantId && (image.ownerUserId === owner.userId || image.shared);
  return image.published && (image.tenantId === null || image.tenantId === owner.tenantId);
}
