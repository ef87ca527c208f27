import type { ImageItem, OperatorImageItem } from '@suanli/contract/machine';
import type { ImageRow } from './image.repository.ts';

export function presentImage(r: ImageRow): ImageItem {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    os: r.os,
    contents: r.contents,
    status: r.status,
    progress: r.progress,
    sizeBytes: r.sizeBytes,
    createdAt: r.createdAt.toISOString(),
  };
}

export function presentOperatorImage(r: ImageRow): OperatorImageItem {
  return { ...presentImage(r), slug: r.slug, tenantId: r.tenantId, published: r.published, error: r.error };
}
