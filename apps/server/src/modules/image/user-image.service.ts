import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ImageItem } from '@suanli/contract/machine';
import { MAX_PRIVATE_IMAGES, type UserImage, type UserImagePage } from '@suanli/contract/instance-ops';
import { INSTANCE_STATE_LABELS } from '@suanli/domain/instance-state';
import type { ComputeDriver } from '../../adapters/compute/port.ts';
import type { Db } from '../../db/client.ts';
import type { images } from '../../db/schema/compute.ts';
import { enqueueJob, type JobContext, type JobKindOptions } from '../../jobs/queue.ts';
import type { Clock } from '../../lib/clock.ts';
import { conflict, notFound } from '../../lib/errors.ts';
import { instanceBusyReason } from '../instance/instance-busy.ts';
import { createInstanceRepository } from '../instance/instance.repository.ts';
import { createUserRepository } from '../user/user.repository.ts';
import type { ImageRow } from './image.repository.ts';
import { maskAuthor, presentImage, presentUserImage } from './image.presenter.ts';
import { createUserImageRepository, type ImageUse, type UserImageRepository } from './user-image.repository.ts';

/** Job kind: save an instance's system layer as a private image's layer (payload { imageId, instanceId }). */
export const IMAGE_SNAPSHOT_JOB = 'image.snapshot';
const SNAPSHOT_ATTEMPTS = 3;
/**
 * A system layer can be many GB: two saves at once in this process, up to two hours each. An attempt
 * cut short (timeout, shutdown) runs again from the start; the last one ends the image as failed.
 */
export const IMAGE_SNAPSHOT_JOB_OPTIONS: JobKindOptions = { concurrency: 2, timeoutMs: 2 * 60 * 60_000, retry: { maxAttempts: SNAPSHOT_ATTEMPTS, maxBackoffSeconds: 60 } };

const IMAGE_MISSING = '镜像不存在';
const INSTANCE_MISSING = '实例不存在';

type Owner = { tenantId: number; userId: number };
type Log = { info: (o: object, m?: string) => void; warn: (o: object, m?: string) => void };

export type UserImageServiceDeps = {
  db: Db;
  clock: Clock;
  compute: ComputeDriver;
  /** $DATA_DIR/images: private layers go to <imagesDir>/private/<slug>. */
  imagesDir: string;
  log?: Log;
};

/** Why an image in use can't be deleted, in Chinese; null when nothing uses it. */
function useReason(use: ImageUse | undefined): string | null {
  if (!use) return null;
  if (use.instances.length > 0) return `镜像正被实例 ${use.instances.slice(0, 3).join('、')}${use.instances.length > 3 ? ' 等' : ''} 使用，请先释放实例或为其更换镜像后再删除`;
  if (use.unpaidOrders > 0) return '镜像正被未支付的订单使用，请先取消订单或等待订单过期后再删除';
  if (use.childImages > 0) return '已有其他镜像基于此镜像保存，不能删除';
  return null;
}
const inUse = (use: ImageUse | undefined) => useReason(use) !== null;

/**
 * Issue #10: snapshots and private images (docs/instance-operations.md "Snapshots → private
 * images"). A user saves a stopped instance's system layer as an image (the persisted job
 * `image.snapshot`), keeps up to MAX_PRIVATE_IMAGES, may share one to the tenant's community and
 * delete one nothing uses. Every id is checked against the caller: another user's image answers 404.
 */
export function createUserImageService(deps: UserImageServiceDeps) {
  const { db, clock, compute } = deps;
  const repo = createUserImageRepository(db);
  const privateDir = path.join(deps.imagesDir, 'private');
  const layerDirOf = (slug: string) => {
    if (!/^u[0-9]+-[a-z0-9]{10}$/.test(slug)) throw new Error(`bad private image slug ${slug}`);
    return path.join(privateDir, slug);
  };

  /** Presents rows with what they need (use, base image names, authors), a few queries per page. */
  async function present(rows: ImageRow[], viewer: Owner, r: UserImageRepository = repo): Promise<UserImage[]> {
    const ids = rows.map((x) => x.id);
    const [uses, bases, authors] = await Promise.all([
      r.uses(ids, clock()),
      r.namesOf([...new Set(rows.map((x) => x.parentImageId).filter((x): x is number => x !== null))]),
      r.authors([...new Set(rows.map((x) => x.ownerUserId).filter((x): x is number => x !== null))]),
    ]);
    return rows.map((row) =>
      presentUserImage(row, {
        viewerUserId: viewer.userId,
        inUse: inUse(uses.get(row.id)),
        baseImageName: row.parentImageId !== null ? (bases.get(row.parentImageId) ?? '') : '',
        authorName: maskAuthor(row.ownerUserId !== null ? authors.get(row.ownerUserId) : undefined),
      }),
    );
  }
  const presentOne = async (row: ImageRow, viewer: Owner, r?: UserImageRepository) => (await present([row], viewer, r))[0]!;

  async function mustOwn(owner: Owner, id: number): Promise<ImageRow> {
    const row = await repo.own(owner, id);
    if (!row) throw notFound(IMAGE_MISSING);
    return row;
  }

  async function markFailed(id: number, error: string) {
    await repo.updateBuilding(id, { status: 'failed', error: error.slice(0, 500) });
  }

  return {
    /** POST /api/v1/instance/snapshot: a stopped instance of the caller's, saved as a private image in a job. */
    async snapshot(owner: Owner, body: { instanceId: string; name: string; description?: string }): Promise<UserImage> {
      return db.transaction(async (tx) => {
        const r = createUserImageRepository(tx);
        // The user's row serialises their snapshots, so two at once can't pass the limit together.
        await createUserRepository(tx).lockRow(owner.userId);
        const inst = await createInstanceRepository(tx).lock(body.instanceId);
        if (!inst || inst.userId !== owner.userId || inst.tenantId !== owner.tenantId || inst.status === 'released') throw notFound(INSTANCE_MISSING);
        if (inst.status !== 'stopped') throw conflict(`实例当前状态为「${INSTANCE_STATE_LABELS[inst.status]}」，请先关机再保存镜像`);
        const busy = await instanceBusyReason(tx, inst.id);
        if (busy) throw conflict(busy);
        if ((await r.countLive(owner.userId)) >= MAX_PRIVATE_IMAGES) throw conflict(`每位用户最多保存 ${MAX_PRIVATE_IMAGES} 个私有镜像，请先删除不再使用的镜像`);
        const parent = await r.byId(inst.imageId);
        if (!parent || parent.deletedAt || parent.status !== 'ready' || !parent.rootPath) throw conflict('实例所用的镜像已不可用，无法保存镜像');
        const slug = `u${owner.userId}-${crypto.randomBytes(8).toString('hex').slice(0, 10)}`;
        const row = await r.insert({
          tenantId: owner.tenantId,
          kind: 'private',
          ownerUserId: owner.userId,
          slug,
          name: body.name,
          description: body.description ?? '',
          os: parent.os,
          contents: parent.contents,
          status: 'building',
          progress: 0,
          error: null,
          rootPath: parent.rootPath,
          layers: [layerDirOf(slug), ...parent.layers],
          sizeBytes: 0,
          published: true,
          sourceInstanceId: inst.id,
          sourceInstanceName: inst.name,
          parentImageId: parent.id,
          createdAt: clock(),
        });
        await enqueueJob(tx, IMAGE_SNAPSHOT_JOB, { imageId: row.id, instanceId: inst.id });
        return presentOne(row, owner, r);
      });
    },

    /** Job handler for IMAGE_SNAPSHOT_JOB: copies the layer, then the image is ready (or failed, with the reason). */
    async runSnapshotJob(payload: Record<string, unknown>, ctx?: JobContext): Promise<void> {
      const { imageId, instanceId } = payload;
      if (typeof imageId !== 'number' || typeof instanceId !== 'string') throw new Error(`image.snapshot: bad payload ${JSON.stringify(payload)}`);
      const row = await repo.byId(imageId);
      if (!row || row.status !== 'building' || row.deletedAt) return;
      const dir = layerDirOf(row.slug);
      const parent = row.parentImageId !== null ? await repo.byId(row.parentImageId) : undefined;
      let last = 0;
      let lastProgress = 0;
      try {
        // A run cut short left part of a layer: start it again from nothing.
        fs.rmSync(dir, { recursive: true, force: true });
        fs.mkdirSync(privateDir, { recursive: true });
        const saved = await compute.saveSystemLayer(instanceId, dir, {
          signal: ctx?.signal,
          onProgress: (p) => {
            const progress = p.totalBytes > 0 ? Math.min(99, Math.floor((p.copiedBytes * 100) / p.totalBytes)) : 0;
            const now = Date.now();
            if (progress <= lastProgress || now - last < 2000) return;
            last = now;
            lastProgress = progress;
            void repo.updateBuilding(imageId, { progress }).catch(() => {});
          },
        });
        const done = await repo.updateBuilding(imageId, { status: 'ready', progress: 100, error: null, sizeBytes: saved.sizeBytes + (parent?.sizeBytes ?? 0) });
        if (!done) fs.rmSync(dir, { recursive: true, force: true }); // deleted meanwhile: nothing names the layer
        deps.log?.info({ image: row.slug, instanceId, sizeBytes: saved.sizeBytes }, 'private image saved');
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        // Cut short (timeout or shutdown) before the last attempt: the queue runs it again.
        if (ctx?.signal.aborted && ctx.attempt < SNAPSHOT_ATTEMPTS) throw err;
        fs.rmSync(dir, { recursive: true, force: true });
        deps.log?.warn({ image: row.slug, instanceId, err: message }, 'private image save failed');
        await markFailed(imageId, ctx?.signal.aborted ? '保存镜像超时或被中断，请重试' : `保存镜像失败：${message}`);
      }
    },

    /** GET /api/v1/instance/snapshot?instanceId=: the live images saved from one of the caller's instances (released ones too). */
    async listForInstance(owner: Owner, instanceId: string): Promise<{ list: UserImage[] }> {
      const inst = await createInstanceRepository(db).find(instanceId);
      if (!inst || inst.userId !== owner.userId || inst.tenantId !== owner.tenantId) throw notFound(INSTANCE_MISSING);
      return { list: await present(await repo.fromInstance(owner, instanceId), owner) };
    },

    /** GET /api/v1/image/private */
    async listOwn(owner: Owner, q: { page: number; pageSize: number }): Promise<UserImagePage> {
      const { rows, total } = await repo.pageOwn(owner, q.page, q.pageSize);
      return { list: await present(rows, owner), total };
    },

    /** GET /api/v1/image/private/{id} */
    async getOwn(owner: Owner, id: number): Promise<UserImage> {
      return presentOne(await mustOwn(owner, id), owner);
    },

    /** PUT /api/v1/image/private/{id}: rename, describe, share (ready images only) or withdraw. */
    async updateOwn(owner: Owner, id: number, patch: { name?: string; description?: string; shared?: boolean }): Promise<UserImage> {
      return db.transaction(async (tx) => {
        const r = createUserImageRepository(tx);
        const row = await r.own(owner, id, { lock: true });
        if (!row) throw notFound(IMAGE_MISSING);
        const set: Partial<typeof images.$inferInsert> = {};
        if (patch.name !== undefined) set.name = patch.name;
        if (patch.description !== undefined) set.description = patch.description;
        if (patch.shared === true && !row.shared) {
          if (row.status !== 'ready') throw conflict(row.status === 'building' ? '镜像还在保存中，保存完成后才能分享' : '镜像保存失败，不能分享');
          set.shared = true;
          set.sharedAt = clock();
        } else if (patch.shared === false && row.shared) {
          set.shared = false;
          set.sharedAt = null;
        }
        const next = Object.keys(set).length > 0 ? ((await r.update(id, set)) ?? row) : row;
        return presentOne(next, owner, r);
      });
    },

    /** DELETE /api/v1/image/private/{id}: not while building or used; the row stays (deleted_at), the layer goes. */
    async removeOwn(owner: Owner, id: number): Promise<void> {
      const slug = await db.transaction(async (tx) => {
        const r = createUserImageRepository(tx);
        const row = await r.own(owner, id, { lock: true });
        if (!row) throw notFound(IMAGE_MISSING);
        if (row.status === 'building') throw conflict('镜像正在保存中，请等待保存完成后再删除');
        const reason = useReason((await r.uses([row.id], clock())).get(row.id));
        if (reason) throw conflict(reason);
        await r.update(row.id, { deletedAt: clock(), shared: false });
        return row.slug;
      });
      fs.rmSync(layerDirOf(slug), { recursive: true, force: true });
    },

    /** GET /api/v1/image/community: the tenant's shared, ready images. */
    async listCommunity(owner: Owner, q: { page: number; pageSize: number; keyword?: string; sort: 'hot' | 'new' }): Promise<UserImagePage> {
      const { rows, total } = await repo.pageCommunity(owner.tenantId, q);
      return { list: await present(rows, owner), total };
    },

    /** GET /api/v1/image/community/{id} */
    async getCommunity(owner: Owner, id: number): Promise<UserImage> {
      const row = await repo.community(owner.tenantId, id);
      if (!row) throw notFound(IMAGE_MISSING);
      return presentOne(row, owner);
    },

    /** The user's own ready private images, for GET /api/v1/image/all (the create page's picker). */
    async pickable(owner: Owner): Promise<ImageItem[]> {
      return (await repo.readyOwn(owner)).map(presentImage);
    },
  };
}
export type UserImageService = ReturnType<typeof createUserImageService>;
