import fs from 'node:fs';
import path from 'node:path';
import type { ImageItem, ImageRecipe, OperatorImageItem } from '@suanli/contract/machine';
import type { Db } from '../../db/client.ts';
import { enqueueJob, type JobContext } from '../../jobs/queue.ts';
import { conflict, forbidden, notFound } from '../../lib/errors.ts';
import type { Authenticated } from '../user/account.service.ts';
import { createImageRepository, type ImageRow } from './image.repository.ts';
import { presentImage, presentOperatorImage } from './image.presenter.ts';
import { buildHostImage, HOST_IMAGE_SLUG } from './host-image.ts';
import { buildDebianImage, RECIPES } from './recipes.ts';
import type { ComputeDriver } from '../../adapters/compute/port.ts';
import { systemClock, type Clock } from '../../lib/clock.ts';
import { createUserImageService } from './user-image.service.ts';

/** Job kind: build one image row from its recipe (payload { imageId, recipe }). */
export const IMAGE_BUILD_JOB = 'image.build';
/** A Debian build downloads and unpacks hundreds of MB (PyTorch): one at a time, up to an hour. */
export const IMAGE_BUILD_JOB_OPTIONS = { concurrency: 1, timeoutMs: 60 * 60_000, retry: { maxAttempts: 2, maxBackoffSeconds: 60 } };

const IMAGE_MISSING = '镜像不存在';
const PLATFORM_IMAGE = '平台镜像由平台管理员在服务器上维护（npm run image:build），不能在租户运营后台修改';

type Log = { info: (o: object, m?: string) => void; warn: (o: object, m?: string) => void; error?: (o: object, m?: string) => void };

export type ImageServiceDeps = {
  db: Db;
  dataDir: string;
  log?: Log;
  /** mmdebstrap stand-in for tests (same command line); mmdebstrap otherwise. */
  buildCommand?: string;
  /** Issue #10: private images are saved from instances' system layers through the driver. */
  compute?: ComputeDriver;
  clock?: Clock;
};

export function createImageService(deps: ImageServiceDeps) {
  const { db } = deps;
  const repo = createImageRepository(db);
  const imagesDir = path.resolve(deps.dataDir, 'images');
  const users = deps.compute ? createUserImageService({ db, clock: deps.clock ?? systemClock, compute: deps.compute, imagesDir, log: deps.log }) : undefined;
  const dirOf = (slug: string) => {
    if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(slug)) throw new Error(`bad image slug ${slug}`);
    return path.join(imagesDir, slug);
  };

  /** The operator's tenant's own image; a platform image is forbidden, another tenant's is missing. */
  async function ownImage(auth: Authenticated, id: number): Promise<ImageRow> {
    const row = await repo.byId(id);
    // A user's private image (issue #10) is theirs alone: the operator API doesn't see it.
    if (!row || row.kind === 'private' || (row.tenantId !== null && row.tenantId !== auth.user.tenantId)) throw notFound(IMAGE_MISSING);
    if (row.tenantId === null) throw forbidden(PLATFORM_IMAGE);
    return row;
  }

  /** Runs a recipe into the row, writing progress (at most every 2 s and at each stage) and the outcome. */
  async function build(row: ImageRow, recipe: ImageRecipe, signal?: AbortSignal): Promise<ImageRow> {
    let last = 0;
    try {
      const built = await buildDebianImage({
        recipe,
        dir: dirOf(row.slug),
        signal,
        command: deps.buildCommand,
        onProgress: async (progress) => {
          const now = Date.now();
          if (now - last < 2000 && progress < 90) return;
          last = now;
          await repo.update(row.id, { progress });
        },
      });
      deps.log?.info({ image: row.slug, contents: built.contents }, 'image built');
      return (await repo.update(row.id, { status: 'ready', progress: 100, error: null, rootPath: built.rootPath, contents: built.contents, os: built.os, sizeBytes: built.sizeBytes }))!;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      deps.log?.warn({ image: row.slug, err: message }, 'image build failed');
      return (await repo.update(row.id, { status: 'failed', error: message.slice(0, 2000) }))!;
    }
  }

  return {
    /**
     * Start-up (and tests): the host-based image is ready at once. Built from the host's own /usr
     * (see host-image.ts); rebuilt when its files are missing. Returns its row.
     */
    async ensureSeeded(): Promise<ImageRow> {
      const row = await repo.bySlug(HOST_IMAGE_SLUG);
      const dir = dirOf(HOST_IMAGE_SLUG);
      if (row?.status === 'ready' && row.rootPath && fs.existsSync(path.join(row.rootPath, 'etc/passwd')) && fs.existsSync(path.join(dir, 'host-usr/wh/local'))) return row;
      const built = buildHostImage(dir);
      const values = {
        name: `${built.os.replace(/ GNU\/Linux/, '')}（主机系统）`,
        description: `由本机的 /usr 构建（与主机共享、只读，实例的写入落在自己的系统盘层）：${built.contents.join('、')}。主机的 /usr/local 不可见；apt 与 pip 安装的软件写入实例自己的系统盘层（主机 /etc 中未复制的配置文件在实例内缺失）。`,
        os: built.os,
        contents: [...built.contents, '/usr 来自主机（只读共享）'],
        status: 'ready' as const,
        progress: 100,
        error: null,
        rootPath: built.rootPath,
        sizeBytes: built.sizeBytes,
      };
      if (row) return (await repo.update(row.id, values))!;
      await repo.upsertBuilding({ tenantId: null, slug: HOST_IMAGE_SLUG, name: values.name, description: values.description, os: values.os });
      const fresh = (await repo.bySlug(HOST_IMAGE_SLUG))!;
      deps.log?.info({ image: HOST_IMAGE_SLUG, contents: built.contents }, 'image seeded from the host /usr');
      return (await repo.update(fresh.id, values))!;
    },

    /**
     * GET /api/v1/image/all: what the tenant's users may pick (published; ready, or building with
     * progress), then (issue #10) the caller's own ready private images.
     */
    async listForTenant(tenantId: number, owner?: { tenantId: number; userId: number }): Promise<ImageItem[]> {
      const shared = (await repo.visibleTo(tenantId, { publishedOnly: true, statuses: ['ready', 'building'] })).map(presentImage);
      return owner && users ? [...shared, ...(await users.pickable(owner))] : shared;
    },

    /** Issue #10: snapshots, private images and the image community (user-image.service.ts); present when the driver is given. */
    users,

    async listForOperator(auth: Authenticated): Promise<OperatorImageItem[]> {
      return (await repo.visibleTo(auth.user.tenantId, { publishedOnly: false })).map(presentOperatorImage);
    },

    /** Operator API: (re)build a recipe as the operator's tenant's image, as a persisted job. */
    async startBuild(auth: Authenticated, recipe: ImageRecipe): Promise<OperatorImageItem> {
      const slug = `${recipe}-t${auth.user.tenantId}`;
      const r = RECIPES[recipe];
      return db.transaction(async (tx) => {
        const txRepo = createImageRepository(tx);
        const existing = await txRepo.bySlug(slug);
        if (existing?.status === 'building') throw conflict('该镜像正在构建中，请等待完成');
        if (existing && (await txRepo.inUse(existing.id))) throw conflict('该镜像正被订单或实例使用，不能重新构建');
        const row = await txRepo.upsertBuilding({ tenantId: auth.user.tenantId, slug, name: r.name, description: r.description, os: 'Debian 12' });
        await enqueueJob(tx, IMAGE_BUILD_JOB, { imageId: row.id, recipe });
        return presentOperatorImage(row);
      });
    },

    /** Job handler for IMAGE_BUILD_JOB. A failed build ends as `failed` with the reason (not retried). */
    async runBuildJob(payload: Record<string, unknown>, ctx?: JobContext): Promise<void> {
      const id = payload.imageId;
      const recipe = payload.recipe as ImageRecipe;
      if (typeof id !== 'number' || !(recipe in RECIPES)) throw new Error(`image.build: bad payload ${JSON.stringify(payload)}`);
      const row = await repo.byId(id);
      if (!row || row.status !== 'building') return;
      await build(row, recipe, ctx?.signal);
    },

    /** The operator command: builds a platform image (every tenant) in this process. */
    async buildPlatformImage(recipe: ImageRecipe): Promise<ImageRow> {
      const r = RECIPES[recipe];
      const existing = await repo.bySlug(recipe);
      if (existing && existing.status !== 'building' && (await repo.inUse(existing.id))) throw new Error(`image ${recipe} is used by orders or instances; not rebuilding it under them`);
      const row = await repo.upsertBuilding({ tenantId: null, slug: recipe, name: r.name, description: r.description, os: 'Debian 12' });
      return build(row, recipe);
    },

    async update(auth: Authenticated, id: number, patch: { name?: string; description?: string; published?: boolean }): Promise<OperatorImageItem> {
      const row = await ownImage(auth, id);
      return presentOperatorImage((await repo.update(row.id, patch))!);
    },

    async remove(auth: Authenticated, id: number): Promise<void> {
      const row = await ownImage(auth, id);
      if (row.status === 'building') throw conflict('该镜像正在构建中，不能删除');
      if (await repo.inUse(row.id)) throw conflict('该镜像正被订单或实例使用，不能删除');
      await repo.remove(row.id);
      fs.rmSync(dirOf(row.slug), { recursive: true, force: true });
    },
  };
}
export type ImageService = ReturnType<typeof createImageService>;
