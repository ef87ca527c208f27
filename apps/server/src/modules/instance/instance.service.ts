import type { z } from 'zod';
import type { instanceDashboard, InstanceItem, InstanceListQuery, InstancePage, StatusTag } from '@suanli/contract/instance';
type InstanceDashboard = z.infer<typeof instanceDashboard>;
import { instanceStatuses } from '@suanli/contract/instance';
import { formatMoney } from '@suanli/domain/format';
import { INSTANCE_STATE_LABELS, canDo, refusal, type InstanceAction } from '@suanli/domain/instance-state';
import { ErrorReason } from '@suanli/contract/errors';
import type { Db, Tx } from '../../db/client.ts';
import { enqueueJob, type JobContext } from '../../jobs/queue.ts';
import type { Clock } from '../../lib/clock.ts';
import { conflict, notFound } from '../../lib/errors.ts';
import { hashPassword, verifyPassword, burnPasswordCheck } from '../../lib/password.ts';
import type { ComputeDriver, InstanceSpec, TerminalOptions } from '../../adapters/compute/port.ts';
import type { LedgerService } from '../wallet/ledger.service.ts';
import type { MeterHooks, MeteredInstance, PlatformActions } from '../metering/meter-hooks.ts';
import type { InstanceAccess, SshTarget } from './instance-access.ts';
import { createInstanceRepository, type InstanceRow, type InstanceView } from './instance.repository.ts';
import { presentInstance, type SshEndpoint } from './instance.presenter.ts';
import { imageUsableBy, lockLiveImage } from '../image/image-access.ts';
import { instanceBusyReason } from './instance-busy.ts';
import { generateRootPassword, newInstanceId, type PasswordVault } from './password-vault.ts';
import { DISK_WARN_RATIO, NO_GPU_CPU_CORES, NO_GPU_HOURLY, NO_GPU_MEMORY_GB, type InstanceDiskUsage, type MigratableInstance } from '@suanli/contract/instance-ops';
import { COPY_JOB, createDataCopyService } from './data-copy.service.ts';
import { RESIZE_DISK_JOB, RESIZING_DISK } from '../order/instance-change.jobs.ts'; // Issue #10 (billing changes)

/** Persisted job kinds of the instance module (registered in container.ts). */
export const INSTANCE_JOBS = {
  provision: 'instance.provision',
  powerOn: 'instance.power_on',
  powerOff: 'instance.power_off',
  release: 'instance.release',
  reset: 'instance.reset',
  recover: 'instance.recover',
  /** Issue #10: a data copy between two instances (data-copy.service.ts). */
  copyData: COPY_JOB,
} as const;

/** Attempts of a driver call before the instance is given up on (a retryable ComputeError is retried). */
export const DRIVER_ATTEMPTS = 3;
const DAY_MS = 86_400_000;
/** A stopped pay-as-you-go instance is released after this long. */
export const STOPPED_RELEASE_DAYS = 15;
/** A prepaid instance is released this long after it expires, unless renewed. */
export const EXPIRED_RELEASE_DAYS = 7;
/** "Expiring soon" on the dashboard. */
const EXPIRING_SOON_DAYS = 3;
const GIB = 1024 ** 3;
const PIDS_PER_GPU = 1024;
/** How long a page of the instance list may be answered from memory (see `list`). */
const LIST_CACHE_MS = 1_000;
const LIST_CACHE_MAX = 10_000;
const MAX_PIDS = 8192;

const RESETTING = '正在重置系统';
const CHANGING_IMAGE = '正在更换镜像';
export const DEMO_BANNER = '演示机器：无物理 GPU';
/** Issue #10: printed at every login of an instance started in no-GPU mode. */
export const NO_GPU_BANNER = `无卡模式：本次开机未挂载 GPU（${NO_GPU_CPU_CORES} 核 CPU、${NO_GPU_MEMORY_GB} GB 内存，按 ¥${(NO_GPU_HOURLY / 10_000).toFixed(2)}/小时计费）。需要 GPU 时请关机后正常开机。`;
/** /center/system reads each instance's disks through the driver, this many at once. */
const USAGE_CONCURRENCY = 4;

type Owner = { tenantId: number; userId: number };
type Log = { info: (o: object, m?: string) => void; error: (o: object, m?: string) => void; warn?: (o: object, m?: string) => void };
const silent: Log = { info: () => {}, error: () => {} };

/** What a paid order hands over to make its instance, inside the paying transaction. */
export type NewInstance = {
  tenantId: number;
  userId: number;
  orderId: string;
  machine: { id: number; cpuPerGpu: number; memoryGbPerGpu: number; systemDiskGb: number };
  name: string;
  chargeType: 'payg' | 'prepaid';
  period: 'day' | 'week' | 'month' | 'year' | null;
  gpuCount: number;
  dataDiskGb: number;
  imageId: number;
  hourly: number;
  expiresAt: Date | null;
  /** Prepared before the transaction (argon2 takes tens of ms): see preparePassword. */
  password: { id: string; sealed: string; hash: string };
  /** Issue #10: a clone of this stopped instance (provisioning copies its disks instead of the image). */
  cloneSourceId?: string | null;
};

/** What metering charges: the instance's hourly price, or NO_GPU_HOURLY for a no-GPU run (issue #10). */
const metered = (i: Pick<InstanceRow, 'id' | 'tenantId' | 'userId' | 'chargeType' | 'hourly' | 'noGpu'>): MeteredInstance => ({
  id: i.id,
  tenantId: i.tenantId,
  userId: i.userId,
  chargeType: i.chargeType,
  hourly: i.chargeType === 'payg' ? (i.noGpu ? NO_GPU_HOURLY : i.hourly) : 0,
});

/** Why a driver call failed, for the user (the driver's own message is for operators, logged). */
const userReason = (what: string) => `${what}：计算节点出现故障，请稍后重试或联系客服`;

export function createInstanceService(deps: {
  db: Db;
  clock: Clock;
  ledger: LedgerService;
  compute: ComputeDriver;
  meter: MeterHooks;
  vault: PasswordVault;
  ssh: { host?: string; port: number };
  onBalanceChanged?: (userId: number) => void;
  log?: Log;
}) {
  const { db, clock, compute, meter, vault } = deps;
  const repo = createInstanceRepository(db);
  let log = deps.log ?? silent;
  // Issue #10: data copies between a user's instances (their job runs with the instance jobs).
  const copies = createDataCopyService({ db, clock, compute, log: { info: (o, m) => log.info(o, m), error: (o, m) => log.error(o, m) } });

  /**
   * The console polls the instance list; answering each poll from the database would cost a
   * round trip per poll. A page is kept for LIST_CACHE_MS, keyed by user and query, and every
   * instance write in this process (each transaction of this service, and paying) starts a new
   * generation, which drops every kept page: in one process the list is always current; a write
   * made by another replica shows within LIST_CACHE_MS.
   */
  let generation = 0;
  const listCache = new Map<string, { gen: number; at: number; page: { list: InstanceView[]; passwords: string[]; total: number } }>();
  /** The dropdown's instance count (user/detail, read on every page): kept like list pages. */
  const countCache = new Map<number, { gen: number; at: number; n: number }>();
  const changed = () => {
    generation++;
    listCache.clear();
    countCache.clear();
  };
  async function transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      return await db.transaction(fn);
    } finally {
      changed();
    }
  }

  const endpoint = (requestHost: string | undefined): SshEndpoint => ({
    host: deps.ssh.host ?? hostNameOf(requestHost),
    port: deps.ssh.port,
  });

  const present = async (v: InstanceView, requestHost: string | undefined): Promise<InstanceItem> => presentInstance(v, await openPassword(v), endpoint(requestHost));

  async function openPassword(v: Pick<InstanceRow, 'id' | 'passwordSealed'>): Promise<string> {
    try {
      return await vault.open(v.id, v.passwordSealed);
    } catch (err) {
      log.error({ err, instanceId: v.id }, 'instance password does not open');
      return '';
    }
  }

  /** The caller's instance, locked; a foreign, missing or released one is 404 (checked first). */
  async function lockOwn(tx: Tx, owner: Owner, id: string): Promise<InstanceRow> {
    const inst = await createInstanceRepository(tx).lock(id);
    if (!inst || inst.userId !== owner.userId || inst.tenantId !== owner.tenantId || inst.status === 'released') throw notFound('实例不存在');
    return inst;
  }

  const must = (inst: InstanceRow, action: InstanceAction) => {
    if (!canDo(inst.status, action)) throw conflict(refusal(inst.status, action));
  };

  /** Issue #10: nothing may start, stop, reset or release an instance while a clone, copy or image save holds its disks. */
  async function mustBeFree(tx: Tx, id: string): Promise<void> {
    const reason = await instanceBusyReason(tx, id);
    if (reason) throw conflict(reason);
  }

  async function availability(): Promise<void> {
    const a = await compute.availability();
    if (!a.ok) throw conflict(`暂时无法启动实例：${a.reason}`);
  }

  /** The InstanceSpec the driver builds from: the machine's per-GPU resources × count, the image, the user's keys. */
  async function specOf(inst: InstanceRow): Promise<InstanceSpec> {
    const [machine, image, keys] = await Promise.all([repo.machine(inst.machineId), repo.image(inst.imageId), repo.publicKeysOf(inst.userId)]);
    if (!machine) throw new Error(`instance ${inst.id}: machine ${inst.machineId} is gone`);
    if (!image?.rootPath || image.status !== 'ready') throw new Error(`instance ${inst.id}: image ${inst.imageId} is not ready`);
    const banner = machine.demo ? `${DEMO_BANNER}\n实例 ${inst.id}（${image.name}）` : `实例 ${inst.id}（${image.name}）`;
    // Issue #10, no-GPU mode (无卡模式): no GPU device, 1 core, 2 GB, and the login says so.
    const noGpu = inst.noGpu;
    return {
      id: inst.id,
      hostname: inst.id,
      image: { id: image.id, rootPath: image.rootPath, layers: image.layers },
      cpuCores: noGpu ? NO_GPU_CPU_CORES : inst.cpuCores,
      memoryBytes: (noGpu ? NO_GPU_MEMORY_GB : inst.memoryGb) * GIB,
      pidsMax: Math.min(MAX_PIDS, PIDS_PER_GPU * inst.gpuCount),
      dataDiskBytes: inst.dataDiskGb * GIB,
      systemDiskBytes: inst.systemDiskGb * GIB,
      gpuDevices: noGpu || machine.demo ? [] : machine.gpuDevices,
      banner: noGpu ? `${NO_GPU_BANNER}\n${banner}` : banner,
      authorizedKeys: keys,
    };
  }

  /** When the platform releases a stopped instance: payg 15 days after it stopped; prepaid 7 days after expiry. */
  const releaseAtOf = (inst: Pick<InstanceRow, 'chargeType' | 'expiresAt'>, stoppedAt: Date | null): Date | null =>
    inst.chargeType === 'prepaid'
      ? inst.expiresAt && new Date(inst.expiresAt.getTime() + EXPIRED_RELEASE_DAYS * DAY_MS)
      : stoppedAt && new Date(stoppedAt.getTime() + STOPPED_RELEASE_DAYS * DAY_MS);

  const isFinal = (err: unknown, ctx: JobContext) => !(err instanceof Error && 'retryable' in err && (err as { retryable: boolean }).retryable) || ctx.attempt >= DRIVER_ATTEMPTS;

  // ---- jobs ----------------------------------------------------------------------------------

  /** creating → running (driver create + start); on failure: failed, GPUs freed, the order refunded once. */
  async function runProvision(payload: Record<string, unknown>, ctx: JobContext): Promise<void> {
    const id = String(payload.instanceId);
    const inst = await repo.find(id);
    if (!inst || inst.status !== 'creating') return;
    try {
      const spec = await specOf(inst);
      // Issue #10: a clone gets copies of its (stopped, busy meanwhile) source's disks instead of the image.
      if (inst.cloneSourceId) await compute.cloneFrom(inst.cloneSourceId, spec);
      else await compute.create(spec);
      await compute.start(spec);
    } catch (err) {
      if (!isFinal(err, ctx)) throw err;
      log.error({ err, instanceId: id }, 'provisioning failed');
      await failProvision(id, userReason('创建失败'));
      await compute.destroy(id).catch((e: unknown) => log.error({ err: e, instanceId: id }, 'cleaning up a failed instance failed'));
      return;
    }
    await transaction(async (tx) => {
      const r = createInstanceRepository(tx);
      const cur = await r.lock(id);
      if (!cur || cur.status !== 'creating') return;
      const now = clock();
      await r.update(id, { status: 'running', statusReason: '', startedAt: now, updatedAt: now, releaseAt: releaseAtOf(cur, null) });
      await meter.started(tx, metered(cur), now);
    });
  }

  /** The provisioning failed for good: failed with the reason, its GPUs freed, what the order took refunded (ref order:<id>, once). */
  async function failProvision(id: string, reason: string): Promise<void> {
    let refundedUser: number | undefined;
    await transaction(async (tx) => {
      const r = createInstanceRepository(tx);
      const cur = await r.lock(id);
      if (!cur || cur.status !== 'creating') return;
      const now = clock();
      if (cur.gpuHeld) await r.freeGpus(cur.machineId, cur.gpuCount);
      await r.update(id, { status: 'failed', statusReason: reason, gpuHeld: false, updatedAt: now, releaseAt: null });
      const paid = cur.orderId ? await r.orderAmount(cur.orderId) : 0;
      if (cur.orderId && paid > 0) {
        await deps.ledger.post({ tenantId: cur.tenantId, userId: cur.userId, kind: 'refund', amount: paid, ref: `order:${cur.orderId}`, memo: `instance ${id} failed` }, tx);
        refundedUser = cur.userId;
      }
    });
    if (refundedUser !== undefined) deps.onBalanceChanged?.(refundedUser);
  }

  async function runPowerOff(payload: Record<string, unknown>): Promise<void> {
    const id = String(payload.instanceId);
    const inst = await repo.find(id);
    if (!inst || inst.status !== 'stopping') return;
    await compute.stop(id); // a failure is retried by the queue; the instance stays 'stopping' (not billed)
    await transaction(async (tx) => {
      const r = createInstanceRepository(tx);
      const cur = await r.lock(id);
      if (!cur || cur.status !== 'stopping') return;
      const now = clock();
      const stoppedAt = cur.stoppedAt ?? now;
      // Pay-as-you-go gives its GPUs back while stopped; prepaid keeps them (it paid for them).
      const freeing = cur.chargeType === 'payg' && cur.gpuHeld;
      if (freeing) await r.freeGpus(cur.machineId, cur.gpuCount);
      // A no-GPU run held no GPU (nothing freed) and ends here: the next start is a normal one unless asked again.
      await r.update(id, { status: 'stopped', stoppedAt, gpuHeld: freeing ? false : cur.gpuHeld, noGpu: false, updatedAt: now, releaseAt: releaseAtOf(cur, stoppedAt) });
    });
  }

  async function runPowerOn(payload: Record<string, unknown>, ctx: JobContext): Promise<void> {
    const id = String(payload.instanceId);
    const inst = await repo.find(id);
    if (!inst || inst.status !== 'starting') return;
    try {
      await compute.start(await specOf(inst));
    } catch (err) {
      if (!isFinal(err, ctx)) throw err;
      log.error({ err, instanceId: id }, 'power on failed');
      await transaction(async (tx) => {
        const r = createInstanceRepository(tx);
        const cur = await r.lock(id);
        if (!cur || cur.status !== 'starting') return;
        const now = clock();
        const freeing = cur.chargeType === 'payg' && cur.gpuHeld;
        if (freeing) await r.freeGpus(cur.machineId, cur.gpuCount);
        await r.update(id, { status: 'stopped', statusReason: userReason('开机失败'), gpuHeld: freeing ? false : cur.gpuHeld, noGpu: false, updatedAt: now, releaseAt: releaseAtOf(cur, cur.stoppedAt ?? now) });
      });
      return;
    }
    await transaction(async (tx) => {
      const r = createInstanceRepository(tx);
      const cur = await r.lock(id);
      if (!cur || cur.status !== 'starting') return;
      const now = clock();
      await r.update(id, { status: 'running', statusReason: '', startedAt: now, updatedAt: now, releaseAt: releaseAtOf(cur, null) });
      await meter.started(tx, metered(cur), now);
    });
  }

  async function runRelease(payload: Record<string, unknown>): Promise<void> {
    const id = String(payload.instanceId);
    const inst = await repo.find(id);
    if (!inst || inst.status !== 'releasing') return;
    await compute.destroy(id); // retried by the queue until the disks are gone
    await transaction(async (tx) => {
      const r = createInstanceRepository(tx);
      const cur = await r.lock(id);
      if (!cur || cur.status !== 'releasing') return;
      const now = clock();
      if (cur.gpuHeld) await r.freeGpus(cur.machineId, cur.gpuCount);
      await r.update(id, { status: 'released', gpuHeld: false, noGpu: false, releasedAt: now, releaseAt: null, updatedAt: now });
    });
  }

  /** A fresh system disk from the instance's (possibly new) image; back to stopped. */
  async function runReset(payload: Record<string, unknown>, ctx: JobContext): Promise<void> {
    const id = String(payload.instanceId);
    const previousImageId = Number(payload.previousImageId);
    const inst = await repo.find(id);
    if (!inst || inst.status !== 'creating' || (inst.statusReason !== RESETTING && inst.statusReason !== CHANGING_IMAGE)) return;
    let failure: string | undefined;
    try {
      await compute.resetSystem(await specOf(inst));
    } catch (err) {
      if (!isFinal(err, ctx)) throw err;
      log.error({ err, instanceId: id }, 'system reset failed');
      failure = userReason(inst.statusReason === CHANGING_IMAGE ? '更换镜像失败' : '重置系统失败');
    }
    await transaction(async (tx) => {
      const r = createInstanceRepository(tx);
      const cur = await r.lock(id);
      if (!cur || cur.status !== 'creating') return;
      const now = clock();
      await r.update(id, {
        status: 'stopped',
        statusReason: failure ?? '',
        updatedAt: now,
        ...(failure && Number.isSafeInteger(previousImageId) && previousImageId > 0 ? { imageId: previousImageId } : {}),
      });
    });
  }

  /** Start-up recovery of one instance the database says is running: start it again, or stop it with the reason. */
  async function runRecover(payload: Record<string, unknown>, ctx: JobContext): Promise<void> {
    const id = String(payload.instanceId);
    const inst = await repo.find(id);
    if (!inst || inst.status !== 'running') return;
    if ((await compute.status(id)) === 'running') return;
    try {
      await compute.start(await specOf(inst));
      return;
    } catch (err) {
      if (!isFinal(err, ctx)) throw err;
      log.error({ err, instanceId: id }, 'restarting an instance after a server restart failed');
    }
    await transaction(async (tx) => {
      const r = createInstanceRepository(tx);
      const cur = await r.lock(id);
      if (!cur || cur.status !== 'running') return;
      const now = clock();
      const freeing = cur.chargeType === 'payg' && cur.gpuHeld;
      if (freeing) await r.freeGpus(cur.machineId, cur.gpuCount);
      await r.update(id, { status: 'stopped', statusReason: userReason('服务器重启后未能恢复运行'), stoppedAt: now, gpuHeld: freeing ? false : cur.gpuHeld, noGpu: false, updatedAt: now, releaseAt: releaseAtOf(cur, now) });
      await meter.stopped(tx, id, now);
    });
  }

  // ---- shared transitions ----------------------------------------------------------------------

  async function beginStop(tx: Tx, inst: InstanceRow, reason: string): Promise<void> {
    const now = clock();
    await createInstanceRepository(tx).update(inst.id, { status: 'stopping', statusReason: reason, stoppedAt: now, updatedAt: now });
    await meter.stopped(tx, inst.id, now);
    await enqueueJob(tx, INSTANCE_JOBS.powerOff, { instanceId: inst.id }, clock());
  }

  async function beginRelease(tx: Tx, inst: InstanceRow, reason: string): Promise<void> {
    const now = clock();
    await createInstanceRepository(tx).update(inst.id, { status: 'releasing', statusReason: reason, updatedAt: now, ...(inst.status === 'running' ? { stoppedAt: now } : {}) });
    if (inst.status === 'running') await meter.stopped(tx, inst.id, now);
    await enqueueJob(tx, INSTANCE_JOBS.release, { instanceId: inst.id }, clock());
  }

  /** Issue #10: stopped pay-as-you-go → starting without GPUs (无卡模式), under the instance's row lock. */
  async function beginNoGpuStart(tx: Tx, inst: InstanceRow): Promise<void> {
    const r = createInstanceRepository(tx);
    if (inst.chargeType !== 'payg') throw conflict('包周期实例已占用 GPU，不支持无卡模式开机，请正常开机');
    must(inst, 'power_on');
    await mustBeFree(tx, inst.id);
    const balance = await r.balanceOf(inst.userId);
    if (balance < NO_GPU_HOURLY) {
      throw conflict(`余额不足：无卡模式开机需至少可支付一小时的费用 ${formatMoney(NO_GPU_HOURLY)}，还差 ${formatMoney(NO_GPU_HOURLY - balance)}，请先充值`, ErrorReason.InsufficientBalance);
    }
    // A stopped pay-as-you-go instance holds no GPU; should one be held, it is given back (the mode holds none).
    if (inst.gpuHeld) await r.freeGpus(inst.machineId, inst.gpuCount);
    await r.update(inst.id, { status: 'starting', statusReason: '', gpuHeld: false, noGpu: true, updatedAt: clock() });
    await enqueueJob(tx, INSTANCE_JOBS.powerOn, { instanceId: inst.id }, clock());
  }

  async function viewOf(id: string, requestHost: string | undefined): Promise<InstanceItem> {
    const v = await repo.findView(id);
    if (!v) throw notFound('实例不存在');
    return present(v, requestHost);
  }

  const service = {
    setLogger(l: Log) {
      log = l;
    },

    /** Hashes and seals a new root password before the paying transaction (argon2 is slow). */
    async preparePassword(): Promise<NewInstance['password']> {
      const id = newInstanceId();
      const password = generateRootPassword();
      const [sealed, hash] = await Promise.all([vault.seal(id, password), hashPassword(password)]);
      return { id, sealed, hash };
    },

    /** Refuses (409, the driver's Chinese reason) when this host can't run instances now. */
    availability,

    /** Inside the paying transaction (GPUs already reserved): the instance row and its provisioning job. */
    async createInTx(tx: Tx, n: NewInstance, now: Date): Promise<InstanceRow> {
      const row = await createInstanceRepository(tx).insert({
        id: n.password.id,
        tenantId: n.tenantId,
        userId: n.userId,
        orderId: n.orderId,
        machineId: n.machine.id,
        name: n.name || `实例-${n.password.id.slice(2, 8)}`,
        status: 'creating',
        chargeType: n.chargeType,
        period: n.period,
        gpuCount: n.gpuCount,
        gpuHeld: true,
        cpuCores: n.machine.cpuPerGpu * n.gpuCount,
        memoryGb: n.machine.memoryGbPerGpu * n.gpuCount,
        systemDiskGb: n.machine.systemDiskGb,
        dataDiskGb: n.dataDiskGb,
        imageId: n.imageId,
        cloneSourceId: n.cloneSourceId ?? null,
        hourly: n.chargeType === 'payg' ? n.hourly : 0,
        passwordSealed: n.password.sealed,
        passwordHash: n.password.hash,
        expiresAt: n.expiresAt,
        releaseAt: null,
        createdAt: now,
        updatedAt: now,
      });
      await enqueueJob(tx, INSTANCE_JOBS.provision, { instanceId: row.id }, clock());
      changed();
      return row;
    },

    async list(owner: Owner, q: InstanceListQuery & { page: number; pageSize: number }, requestHost?: string): Promise<InstancePage> {
      const filter = { status: q.status, chargeType: q.chargeType, keyword: q.keyword || undefined, includeReleased: q.includeReleased === 'true' };
      const key = JSON.stringify([owner.tenantId, owner.userId, filter, q.page, q.pageSize]);
      const hit = listCache.get(key);
      let page = hit && hit.gen === generation && performance.now() - hit.at < LIST_CACHE_MS ? hit.page : undefined;
      if (!page) {
        const gen = generation;
        const at = performance.now();
        const r = await repo.page(owner.userId, filter, q.page, q.pageSize);
        page = { list: r.list, total: r.total, passwords: await Promise.all(r.list.map(openPassword)) };
        // Kept only if no write happened while it was read.
        if (gen === generation) {
          if (listCache.size >= LIST_CACHE_MAX) listCache.clear();
          listCache.set(key, { gen, at, page });
        }
      }
      const ep = endpoint(requestHost);
      const p = page;
      return { list: p.list.map((v, i) => presentInstance(v, p.passwords[i] ?? '', ep)), total: p.total };
    },

    /** Paying wrote an instance (in the order's transaction): called after it commits. */
    changed,

    async get(owner: Owner, id: string, requestHost?: string): Promise<InstanceItem> {
      const v = await repo.findView(id);
      if (!v || v.userId !== owner.userId || v.tenantId !== owner.tenantId || v.status === 'released') throw notFound('实例不存在');
      return present(v, requestHost);
    },

    async statusTags(owner: Owner): Promise<StatusTag[]> {
      const counts = await repo.countByStatus(owner.userId);
      return instanceStatuses.map((status) => ({ status, label: INSTANCE_STATE_LABELS[status], count: counts.get(status) ?? 0 }));
    },

    async dashboard(owner: Owner): Promise<InstanceDashboard> {
      const now = clock();
      const [counts, expiringSoon] = await Promise.all([repo.countByStatus(owner.userId), repo.expiringCount(owner.userId, now, new Date(now.getTime() + EXPIRING_SOON_DAYS * DAY_MS))]);
      let total = 0;
      for (const [status, n] of counts) if (status !== 'released') total += n;
      return { total, running: counts.get('running') ?? 0, stopped: counts.get('stopped') ?? 0, expiringSoon };
    },

    /** Instances the user has (not released): the user dropdown's count. */
    async count(owner: Owner): Promise<number> {
      const hit = countCache.get(owner.userId);
      if (hit && hit.gen === generation && performance.now() - hit.at < LIST_CACHE_MS) return hit.n;
      const gen = generation;
      const at = performance.now();
      let total = 0;
      for (const [status, n] of await repo.countByStatus(owner.userId)) if (status !== 'released') total += n;
      if (gen === generation) {
        if (countCache.size >= LIST_CACHE_MAX) countCache.clear();
        countCache.set(owner.userId, { gen, at, n: total });
      }
      return total;
    },

    async storage(owner: Owner) {
      return repo.storage(owner.userId);
    },

    async rename(owner: Owner, id: string, name: string, requestHost?: string): Promise<InstanceItem> {
      await transaction(async (tx) => {
        const inst = await lockOwn(tx, owner, id);
        must(inst, 'modify_name');
        await createInstanceRepository(tx).update(id, { name, updatedAt: clock() });
      });
      return viewOf(id, requestHost);
    },

    async changePassword(owner: Owner, id: string, password: string, requestHost?: string): Promise<InstanceItem> {
      const [sealed, hash] = await Promise.all([vault.seal(id, password), hashPassword(password)]);
      await transaction(async (tx) => {
        const inst = await lockOwn(tx, owner, id);
        must(inst, 'modify_password');
        await createInstanceRepository(tx).update(id, { passwordSealed: sealed, passwordHash: hash, updatedAt: clock() });
      });
      return viewOf(id, requestHost);
    },

    async powerOff(owner: Owner, id: string, requestHost?: string): Promise<InstanceItem> {
      await transaction(async (tx) => {
        const inst = await lockOwn(tx, owner, id);
        must(inst, 'power_off');
        await mustBeFree(tx, id);
        await beginStop(tx, inst, '');
      });
      return viewOf(id, requestHost);
    },

    /**
     * stopped → starting. Pay-as-you-go needs one hour of balance and takes its GPUs back (409 when
     * none are free). Issue #10, `noGpu`: a pay-as-you-go instance starts without GPUs at
     * NO_GPU_HOURLY, holding none (docs/instance-operations.md, no-GPU mode).
     */
    async powerOn(owner: Owner, id: string, requestHost?: string, opts: { noGpu?: boolean } = {}): Promise<InstanceItem> {
      await availability();
      await transaction(async (tx) => {
        const r = createInstanceRepository(tx);
        const inst = await lockOwn(tx, owner, id);
        if (opts.noGpu) {
          await beginNoGpuStart(tx, inst);
          return;
        }
        must(inst, 'power_on');
        await mustBeFree(tx, id);
        const now = clock();
        if (inst.chargeType === 'prepaid' && inst.expiresAt && inst.expiresAt <= now) throw conflict('包周期实例已到期，请先续费再开机');
        if (inst.chargeType === 'payg') {
          const balance = await r.balanceOf(inst.userId);
          if (balance < inst.hourly) {
            throw conflict(`余额不足：按量计费实例开机需至少可支付一小时的费用 ${formatMoney(inst.hourly)}，还差 ${formatMoney(inst.hourly - balance)}，请先充值`, ErrorReason.InsufficientBalance);
          }
        }
        if (!inst.gpuHeld) {
          if (!(await r.reserveGpus(inst.machineId, inst.gpuCount))) throw conflict(`该机器的空闲 GPU 不足 ${inst.gpuCount} 张（或机器已下线），暂时无法开机，请稍后再试`);
        }
        await r.update(id, { status: 'starting', statusReason: '', gpuHeld: true, noGpu: false, updatedAt: now });
        await enqueueJob(tx, INSTANCE_JOBS.powerOn, { instanceId: id }, clock());
      });
      return viewOf(id, requestHost);
    },

    async release(owner: Owner, id: string, requestHost?: string): Promise<InstanceItem> {
      await transaction(async (tx) => {
        const inst = await lockOwn(tx, owner, id);
        must(inst, 'release');
        await mustBeFree(tx, id);
        await beginRelease(tx, inst, '');
      });
      return viewOf(id, requestHost);
    },

    /** Reset system (stopped only): a fresh system disk from the same image; the data disk is kept. */
    async init(owner: Owner, id: string, requestHost?: string): Promise<InstanceItem> {
      await transaction(async (tx) => {
        const inst = await lockOwn(tx, owner, id);
        must(inst, 'init');
        await mustBeFree(tx, id);
        await createInstanceRepository(tx).update(id, { status: 'creating', statusReason: RESETTING, updatedAt: clock() });
        await enqueueJob(tx, INSTANCE_JOBS.reset, { instanceId: id, previousImageId: inst.imageId }, clock());
      });
      return viewOf(id, requestHost);
    },

    /** Change image (stopped only): a fresh system disk from another ready image of the tenant. */
    async changeImage(owner: Owner, id: string, imageId: number, requestHost?: string): Promise<InstanceItem> {
      await transaction(async (tx) => {
        const r = createInstanceRepository(tx);
        const inst = await lockOwn(tx, owner, id);
        const image = await r.image(imageId);
        if (!image || !imageUsableBy(image, owner)) throw notFound('镜像不存在');
        if (image.kind === 'private') await lockLiveImage(tx, image.id); // a delete can't commit under the change
        if (image.status !== 'ready' || !image.rootPath) throw conflict(`镜像「${image.name}」尚未就绪，暂不可用`);
        must(inst, 'change_image');
        await mustBeFree(tx, id);
        await r.update(id, { status: 'creating', statusReason: CHANGING_IMAGE, imageId, updatedAt: clock() });
        await enqueueJob(tx, INSTANCE_JOBS.reset, { instanceId: id, previousImageId: inst.imageId }, clock());
      });
      return viewOf(id, requestHost);
    },

    /** Job handlers, by kind (container.ts registers them). */
    jobHandlers: {
      [INSTANCE_JOBS.provision]: runProvision,
      [INSTANCE_JOBS.powerOn]: runPowerOn,
      [INSTANCE_JOBS.powerOff]: (p: Record<string, unknown>) => runPowerOff(p),
      [INSTANCE_JOBS.release]: (p: Record<string, unknown>) => runRelease(p),
      [INSTANCE_JOBS.reset]: runReset,
      [INSTANCE_JOBS.recover]: runRecover,
      [INSTANCE_JOBS.copyData]: copies.runCopy,
    },

    /**
     * Start-up recovery (main.ts, once, before the job loop starts): instances in a passing state
     * whose job is no longer queued (it failed for good, or was lost) get their job again; instances
     * the database says are running get a recover job, which starts them again if the driver has
     * lost them (a host reboot) or stops them with the reason. Returns how many jobs it enqueued.
     */
    async recover(): Promise<number> {
      const [rows, pending] = await Promise.all([repo.unsettled(), repo.withPendingJobs()]);
      let enqueued = 0;
      for (const inst of rows) {
        if (pending.has(inst.id)) continue;
        // Issue #10 (billing changes): a stopped instance whose data disk was being resized gets its resize job again.
        if (inst.status === 'creating' && inst.statusReason === RESIZING_DISK) {
          await enqueueJob(db, RESIZE_DISK_JOB, { instanceId: inst.id }, clock());
          enqueued++;
          continue;
        }
        const kind =
          inst.status === 'running'
            ? INSTANCE_JOBS.recover
            : inst.status === 'creating'
              ? inst.statusReason === RESETTING || inst.statusReason === CHANGING_IMAGE
                ? INSTANCE_JOBS.reset
                : INSTANCE_JOBS.provision
              : inst.status === 'starting'
                ? INSTANCE_JOBS.powerOn
                : inst.status === 'stopping'
                  ? INSTANCE_JOBS.powerOff
                  : INSTANCE_JOBS.release;
        await enqueueJob(db, kind, { instanceId: inst.id, previousImageId: inst.imageId }, clock());
        enqueued++;
      }
      // Issue #10: data copies whose process died (or whose job was lost) run again and resume.
      enqueued += await copies.recoverStale();
      return enqueued;
    },

    /** Issue #10: data copies (copy_data, copy_data_status, terminate_copy). */
    copies,

    /**
     * Issue #10, GET /api/v1/instance/user_left_migrate: the caller's instances whose disks still
     * exist (stopped, running, or failed after having run), offline machines first.
     */
    async migratable(owner: Owner): Promise<MigratableInstance[]> {
      const rows = await repo.withDisks(owner.userId);
      const reasonOf = (r: (typeof rows)[number]) => (!r.machineOnline ? '机器已下线' : r.status === 'stopped' ? '已关机' : r.status === 'running' ? '运行中' : '实例异常，磁盘仍保留');
      return rows
        .filter((r) => r.tenantId === owner.tenantId)
        .sort((a, b) => Number(a.machineOnline) - Number(b.machineOnline) || b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
        .map((r) => ({ instanceId: r.id, name: r.name, status: r.status, machineId: r.machineId, hostName: r.hostName, machineOnline: r.machineOnline, dataDiskGb: r.dataDiskGb, reason: reasonOf(r) }));
    },

    /**
     * Issue #10, GET /api/v1/instance/disk_usage (/center/system): each instance's system and data
     * disk as the driver reads them (a few at once); an instance the driver can't read shows zeros.
     */
    async diskUsage(owner: Owner): Promise<InstanceDiskUsage[]> {
      const rows = (await repo.notReleased(owner.userId)).filter((r) => r.tenantId === owner.tenantId);
      const out: InstanceDiskUsage[] = new Array(rows.length);
      let next = 0;
      const worker = async () => {
        for (let i = next++; i < rows.length; i = next++) {
          const r = rows[i]!;
          let systemUsedBytes = 0;
          let dataUsedBytes = 0;
          let dataTotalBytes = 0;
          // A creating or failed instance may have no disks yet (or any more): zeros, not an error.
          if (r.status !== 'creating' && !(r.status === 'failed' && !r.startedAt)) {
            try {
              const u = await compute.usage(r.id);
              systemUsedBytes = Math.max(0, Math.round(u.systemLayerBytes));
              dataUsedBytes = Math.max(0, Math.round(u.dataDiskUsedBytes));
              dataTotalBytes = Math.max(0, Math.round(u.dataDiskTotalBytes));
            } catch (err) {
              log.warn?.({ err, instanceId: r.id }, 'disk usage unreadable');
            }
          }
          const systemTotal = r.systemDiskGb * GIB;
          const dataTotal = dataTotalBytes || r.dataDiskGb * GIB;
          const warn = (systemTotal > 0 && systemUsedBytes > systemTotal * DISK_WARN_RATIO) || (dataTotal > 0 && dataUsedBytes > dataTotal * DISK_WARN_RATIO);
          out[i] = { instanceId: r.id, name: r.name, status: r.status, systemDiskGb: r.systemDiskGb, systemUsedBytes, dataDiskGb: r.dataDiskGb, dataUsedBytes, dataTotalBytes, warn };
        }
      };
      await Promise.all(Array.from({ length: Math.min(USAGE_CONCURRENCY, rows.length) }, worker));
      return out;
    },
  };

  /** InstanceAccess: for the web shell and the SSH gateway. */
  const access: InstanceAccess = {
    async openTerminal(owner, instanceId, opts: TerminalOptions) {
      const inst = await repo.find(instanceId);
      if (!inst || inst.userId !== owner.userId || inst.tenantId !== owner.tenantId || inst.status === 'released') throw notFound('实例不存在');
      if (inst.status !== 'running') throw conflict(`实例当前状态为「${INSTANCE_STATE_LABELS[inst.status]}」，请先开机再打开终端`);
      return compute.openTerminal(instanceId, opts);
    },
    async sshTarget(instanceId): Promise<SshTarget | null> {
      const inst = await repo.find(instanceId);
      if (!inst || inst.status === 'released') return null;
      const ensureRunning = async () => {
        const cur = await repo.find(instanceId);
        if (cur?.status !== 'running') throw conflict('实例未在运行');
      };
      return {
        instanceId,
        tenantId: inst.tenantId,
        userId: inst.userId,
        running: inst.status === 'running',
        async checkPassword(password) {
          if (!password) {
            await burnPasswordCheck(password);
            return false;
          }
          return verifyPassword(inst.passwordHash, password);
        },
        publicKeys: () => repo.publicKeysOf(inst.userId),
        async exec(opts) {
          await ensureRunning();
          return compute.exec(instanceId, opts);
        },
        async openTerminal(opts) {
          await ensureRunning();
          return compute.openTerminal(instanceId, opts);
        },
      };
    },
  };

  /** PlatformActions: metering stops (arrears, expiry) and releases (long stopped, long expired). */
  const platform: PlatformActions = {
    async platformStop(instanceId, reason) {
      await transaction(async (tx) => {
        const inst = await createInstanceRepository(tx).lock(instanceId);
        if (!inst || inst.status !== 'running') return;
        await beginStop(tx, inst, reason);
      });
    },
    async platformRelease(instanceId, reason) {
      await transaction(async (tx) => {
        const inst = await createInstanceRepository(tx).lock(instanceId);
        if (!inst || !['running', 'stopped', 'failed'].includes(inst.status)) return;
        await beginRelease(tx, inst, reason);
      });
    },
  };

  return Object.assign(service, access, platform);
}
export type InstanceService = ReturnType<typeof createInstanceService>;

/** "console.example.com:8080" → "console.example.com"; "[::1]:80" → "::1". */
export function hostNameOf(host: string | undefined): string {
  if (!host) return 'localhost';
  const h = host.trim();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined);
  const colon = h.lastIndexOf(':');
  return (colon > 0 && h.indexOf(':') === colon ? h.slice(0, colon) : h) || 'localhost';
}
