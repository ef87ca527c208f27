import type { ImageItem, OperatorImageItem } from '@suanli/contract/machine';
import type { UserImage } from '@suanli/contract/instance-ops';
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

/**
 * Issue #10: how the community names an author — the first character of their name and "**", or a
 * masked phone when they have no name. Never the phone itself.
 */
export function maskAuthor(author: { userName: string; phone: string } | undefined): string {
  if (!author) return '匿名用户';
  const name = author.userName.trim();
  if (name) return `${Array.from(name)[0]}**`;
  const p = author.phone;
  return /^\d{11}$/.test(p) ? `${p.slice(0, 3)}****${p.slice(7)}` : '匿名用户';
}

export type UserImageContext = {
  viewerUserId: number;
  /** Instances, unpaid orders or images use it now. */
  inUse: boolean;
  baseImageName: string;
  authorName: string;
};

/** A private image as its owner (/center/image) or the community (/images) sees it. */
export function presentUserImage(r: ImageRow, ctx: UserImageContext): UserImage {
  const mine = r.ownerUserId === ctx.viewerUserId;
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    os: r.os,
    contents: r.contents,
    status: r.status,
    progress: r.progress,
    error: r.error ?? '',
    sizeBytes: r.sizeBytes,
    kind: r.kind,
    mine,
    // The instance an image was saved from is its owner's business: the community doesn't show it.
    sourceInstanceId: mine ? r.sourceInstanceId : null,
    sourceInstanceName: mine ? r.sourceInstanceName : '',
    baseImageName: ctx.baseImageName,
    shared: r.shared,
    sharedAt: r.sharedAt ? r.sharedAt.toISOString() : null,
    authorName: ctx.authorName,
    useCount: r.useCount,
    inUse: ctx.inUse,
    createdAt: r.createdAt.toISOString(),
  };
}
