import crypto from 'node:crypto';
import { MAX_ACTIVE_COPIES, type CopyDataBody, type CopyJob } from '@suanli/contract/instance-ops';
import { INSTANCE_STATE_LABELS } from '@suanli/domain/instance-state';
import type { Db, Tx } from '../../db/client.ts';
import { enqueueJob, type JobContext, type JobKindOptions } from '../../jobs/queue.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound, tooMany } from '../../lib/errors.ts';
import { ComputeError, type ComputeDriver, type CopyProgress } from '../../adapters/compute/port.ts';
import { createInstanceRepository, type InstanceRow } from './instance.repository.ts';
import { createDataCopyRepository, type DataCopyView } from './data-copy.repository.ts';
import { createUserRepository } from '../user/user.repository.ts';

/** The persisted job that runs a copy (payload { copyId }). */
export const COPY_JOB = 'instance.copy_data';
/** Attempts of a copy before it ends failed (each attempt resumes: the driver skips files already copied whole). */
export const COPY_ATTEMPTS = 5;
/**
 * A copy may take hours: one attempt may run for a day. A process that dies mid-copy is noticed by
 * the copy's heartbeat going quiet (recoverStale), not by this deadline.
 */
export const COPY_JOB_OPTIONS: JobKindOptions = { concurrency: 4, timeoutMs: 24 * 3_600_000, retry: { maxAttempts: COPY_ATTEMPTS, maxBackoffSeconds: 60 } };
/** Progress is written at most this often. */
export const COPY_PROGRESS_EVERY_MS = 500;
/** A running copy's row is touched this often even without progress (and its status re-read: terminate works across processes). */
export const COPY_HEARTBEAT_MS = 2_000;
/** A running copy whose row was not touched for this long belongs to a process that died. */
export const COPY_STALE_MS = 60_000;
/** How often the leader looks for such copies (container.ts scheduledTasks). */
export const COPY_RECOVER_EVERY_MS = 60_000;
/** Lists of copy_data_status. */
const LIST_LIMIT = 20;

type Owner = { tenantId: number; userId: number };
type Log = { info: (o: object, m?: string) => void; error: (o: object, m?: string) => void };

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const CopyMessages = {
  retriesExhausted: `拷贝失败：已重试 ${COPY_ATTEMPTS} 次仍未完成（计算节点出现故障）。已拷贝的文件保留在目标实例中，重新发起拷贝会跳过它们`,
  interrupted: `拷贝失败：服务多次中断，已重试 ${COPY_ATTEMPTS} 次仍未完成。已拷贝的文件保留在目标实例中，重新发起拷贝会跳过它们`,
  noSpace: '拷贝失败：目标实例的数据盘空间不足，请扩容数据盘或清理文件后重试',
  missing: '拷贝失败：源路径不存在，请检查路径后重试',
  generic: '拷贝失败：计算节点报告错误，请检查源路径和目标路径后重试，或联系客服',
} as const;

/** `cp-` + 12 lowercase letters and digits (COPY_ID_RE). */
export function newCopyId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return `cp-${Array.from({ length: 12 }, () => alphabet[crypto.randomInt(alphabet.length)]).join('')}`;
}

/** "/a//b/" → "a/b"; "" and "/" → "" (the whole data disk). ".." was refused by the schema. */
export const normalizeDataPath = (p: string | undefined) =>
  (p ?? '')
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');

export function presentCopy(v: DataCopyView): CopyJob {
  const percent = v.status === 'succeeded' ? 100 : v.totalBytes > 0 ? Math.min(100, Math.floor((v.copiedBytes * 100) / v.totalBytes)) : 0;
  return {
    id: v.id,
    sourceInstanceId: v.sourceInstanceId,
    sourceInstanceName: v.sourceInstanceName,
    targetInstanceId: v.targetInstanceId,
    targetInstanceName: v.targetInstanceName,
    sourcePath: v.sourcePath,
    targetPath: v.targetPath,
    status: v.status,
    totalBytes: v.totalBytes,
    copiedBytes: v.copiedBytes,
    percent,
    files: v.files,
    error: v.error,
    createdAt: v.createdAt.toISOString(),
    startedAt: iso(v.startedAt),
    finishedAt: iso(v.finishedAt),
  };
}

/** Why a copy failed for good, for the user (the driver's own message is logged for operators). */
function failureReason(err: unknown, exhausted: boolean): string {
  if (exhausted) return CopyMessages.retriesExhausted;
  const m = err instanceof Error ? err.message : String(err);
  if (/no space|ENOSPC/i.test(m)) return CopyMessages.noSpace;
  if (/missing|ENOENT|not exist|no such file/i.test(m)) return CopyMessages.missing;
  return CopyMessages.generic;
}

/**
 * Issue #10: data copies between two of a user's instances (docs/instance-operations.md). A copy is
 * a data_copies row and a persisted job `instance.copy_data`, created in one transaction; the job
 * runs the driver's copyData, writing progress to the row; a server restart runs it again, and the
 * driver skips what was already copied (resume). While a copy is queued or running, neither
 * instance may start, stop, reset or be released (instance-busy.ts).
 */
export function createDataCopyService(deps: { db: Db; clock: Clock; compute: ComputeDriver; log?: Log }) {
  const { db, clock, compute } = deps;
  const log: Log = deps.log ?? { info: () => {}, error: () => {} };
  const repo = createDataCopyRepository(db);
  /** Attempts running in this process, by copy id: terminate aborts them at once. */
  const running = new Map<string, { abort: AbortController; done: Promise<void> }>();

  async function view(id: string): Promise<CopyJob> {
    const v = await repo.findView(id);
    if (!v) throw notFound('拷贝任务不存在');
    return presentCopy(v);
  }

  /** One side of a copy: the caller's (404 otherwise, like a missing one), with disks that exist now. */
  async function checkSide(tx: Tx, owner: Owner, inst: InstanceRow | undefined, role: '源实例' | '目标实例'): Promise<InstanceRow> {
    if (!inst || inst.userId !== owner.userId || inst.tenantId !== owner.tenantId || inst.status === 'released') throw notFound(`${role}不存在`);
    const label = `${role}「${inst.name}」`;
    if (inst.status === 'creating') throw conflict(`${label}正在创建或重置系统，请完成后再拷贝`);
    if (inst.status === 'failed' && !inst.startedAt) throw conflict(`${label}创建失败，没有可拷贝的数据盘`);
    if (inst.status !== 'running' && inst.status !== 'stopped' && inst.status !== 'failed') {
      throw conflict(`${label}当前状态为「${INSTANCE_STATE_LABELS[inst.status]}」，请等待其开机或关机完成后再拷贝`);
    }
    const clone = await createDataCopyRepository(tx).cloningFrom(inst.id);
    if (clone) throw conflict(`${label}正在被克隆到 ${clone}，请等待克隆完成后再拷贝`);
    return inst;
  }

  /** One attempt of a copy (the job handler). */
  async function runCopy(payload: Record<string, unknown>, ctx: JobContext): Promise<void> {
    const id = String(payload.copyId);
    const row = await repo.find(id);
    if (!row || (row.status !== 'queued' && row.status !== 'running')) return; // terminated, or settled by another attempt
    if (!(await repo.begin(id, clock()))) return;
    const abort = new AbortController();
    const onJobAbort = () => abort.abort(ctx.signal.reason);
    ctx.signal.addEventListener('abort', onJobAbort, { once: true });
    let settle = () => {};
    running.set(id, { abort, done: new Promise<void>((resolve) => (settle = resolve)) });

    // Progress at most every COPY_PROGRESS_EVERY_MS, and a heartbeat every COPY_HEARTBEAT_MS; each
    // write re-reads the status, so a terminate from another process aborts this attempt too.
    let latest: CopyProgress | undefined;
    let lastWrite = 0;
    let writing: Promise<void> | undefined;
    const write = (p: CopyProgress | undefined) => {
      lastWrite = performance.now();
      writing = repo
        .progress(id, p, clock())
        .then((still) => {
          if (!still) abort.abort(new Error('terminated'));
        })
        .catch((err: unknown) => log.error({ err, copyId: id }, 'writing copy progress failed'))
        .finally(() => {
          writing = undefined;
        });
    };
    const onProgress = (p: CopyProgress) => {
      latest = p;
      if (!writing && performance.now() - lastWrite >= COPY_PROGRESS_EVERY_MS) write(p);
    };
    const heartbeat = setInterval(() => {
      if (!writing) write(latest);
    }, COPY_HEARTBEAT_MS);
    heartbeat.unref();

    try {
      const result = await compute.copyData({ sourceId: row.sourceInstanceId, targetId: row.targetInstanceId, sourcePath: row.sourcePath, targetPath: row.targetPath, signal: abort.signal, onProgress });
      clearInterval(heartbeat);
      await writing;
      await repo.finish(id, 'succeeded', result, '', clock());
    } catch (err) {
      clearInterval(heartbeat);
      await writing;
      const cur = await repo.find(id);
      if (!cur || cur.status !== 'running') return; // terminated: that abort was ours
      if (latest) await repo.progress(id, latest, clock()).catch(() => {});
      // The server stopping or the attempt's deadline: the job runs again and resumes.
      if (ctx.signal.aborted) throw err;
      const retryable = !(err instanceof ComputeError) || err.retryable;
      const exhausted = ctx.attempt >= COPY_ATTEMPTS;
      if (retryable && !exhausted) throw err;
      log.error({ err, copyId: id, attempt: ctx.attempt }, 'data copy failed');
      await repo.finish(id, 'failed', latest, failureReason(err, retryable && exhausted), clock());
    } finally {
      clearInterval(heartbeat);
      ctx.signal.removeEventListener('abort', onJobAbort);
      running.delete(id);
      settle();
    }
  }

  return {
    /** POST /api/v1/instance/copy_data: the row and its job, in one transaction. */
    async create(owner: Owner, body: CopyDataBody): Promise<CopyJob> {
      if (body.sourceInstanceId === body.targetInstanceId) throw badRequest('源实例和目标实例不能是同一个实例');
      const id = newCopyId();
      await db.transaction(async (tx) => {
        const r = createDataCopyRepository(tx);
        const ir = createInstanceRepository(tx);
        await createUserRepository(tx).lockRow(owner.userId); // the count of active copies is checked under it
        // Both instances locked in id order (two copies between the same pair never deadlock).
        const [first, second] = [body.sourceInstanceId, body.targetInstanceId].sort();
        const locked = new Map<string, InstanceRow | undefined>([
          [first!, await ir.lock(first!)],
          [second!, await ir.lock(second!)],
        ]);
        const source = await checkSide(tx, owner, locked.get(body.sourceInstanceId), '源实例');
        const target = await checkSide(tx, owner, locked.get(body.targetInstanceId), '目标实例');
        if ((await r.countActive(owner.userId)) >= MAX_ACTIVE_COPIES) throw tooMany(`同时进行的拷贝任务最多 ${MAX_ACTIVE_COPIES} 个，请等待已有任务完成或终止后再试`);
        const now = clock();
        await r.insert({
          id,
          tenantId: owner.tenantId,
          userId: owner.userId,
          sourceInstanceId: source.id,
          targetInstanceId: target.id,
          sourcePath: normalizeDataPath(body.sourcePath),
          targetPath: normalizeDataPath(body.targetPath),
          status: 'queued',
          createdAt: now,
          updatedAt: now,
        });
        await enqueueJob(tx, COPY_JOB, { copyId: id }, now);
      });
      return view(id);
    },

    /** GET /api/v1/instance/copy_data_status: one copy (`id`), those touching an instance, or the latest. */
    async status(owner: Owner, q: { id?: string; instanceId?: string }): Promise<{ list: CopyJob[] }> {
      if (q.id) {
        const v = await repo.findView(q.id);
        if (!v || v.userId !== owner.userId || v.tenantId !== owner.tenantId) throw notFound('拷贝任务不存在');
        return { list: [presentCopy(v)] };
      }
      if (q.instanceId) {
        // Another user's (or a missing) instance answers 404, exactly like every other id.
        const inst = await createInstanceRepository(db).find(q.instanceId);
        if (!inst || inst.userId !== owner.userId || inst.tenantId !== owner.tenantId) throw notFound('实例不存在');
      }
      const rows = await repo.listViews(owner.userId, q.instanceId, LIST_LIMIT);
      return { list: rows.filter((v) => v.tenantId === owner.tenantId).map(presentCopy) };
    },

    /** POST /api/v1/instance/terminate_copy: queued|running → terminated; the running attempt aborts (what was copied stays). */
    async terminate(owner: Owner, id: string): Promise<CopyJob> {
      await db.transaction(async (tx) => {
        const r = createDataCopyRepository(tx);
        const row = await r.lock(id);
        if (!row || row.userId !== owner.userId || row.tenantId !== owner.tenantId) throw notFound('拷贝任务不存在');
        if (row.status !== 'queued' && row.status !== 'running') {
          const label = { succeeded: '已完成', failed: '已失败', terminated: '已终止' }[row.status];
          throw conflict(`拷贝任务${label}，无法终止`);
        }
        await r.terminate(id, clock());
      });
      // In this process: abort and wait (briefly) for the attempt to let go of the disks. Another
      // process's attempt sees the status at its next heartbeat.
      const here = running.get(id);
      if (here) {
        here.abort.abort(new Error('terminated'));
        await Promise.race([here.done, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
      }
      return view(id);
    },

    runCopy,

    /**
     * Copies whose job was lost, or held by a process that died (its heartbeat went quiet for
     * COPY_STALE_MS), run again (and resume); one that has used up its attempts ends failed.
     * Called at start-up (InstanceService.recover) and by the leader every COPY_RECOVER_EVERY_MS.
     * Returns how many jobs it queued.
     */
    async recoverStale(): Promise<number> {
      const active = await repo.active();
      if (active.length === 0) return 0;
      const jobsOf = await repo.jobsOf(COPY_JOB, active.map((c) => c.id));
      const now = clock();
      let queued = 0;
      for (const copy of active) {
        if (running.has(copy.id)) continue;
        const own = jobsOf.filter((j) => j.copyId === copy.id);
        if (own.some((j) => j.status === 'queued')) continue;
        const held = own.find((j) => j.status === 'running');
        if (held) {
          if (now.getTime() - copy.updatedAt.getTime() < COPY_STALE_MS) continue; // alive elsewhere
          if (held.attempts >= COPY_ATTEMPTS) {
            await repo.failJob(held, 'abandoned: its process stopped during the last attempt');
            await repo.finish(copy.id, 'failed', undefined, CopyMessages.interrupted, now);
            continue;
          }
          if (await repo.requeueJob(held, now)) queued++;
          continue;
        }
        if (own.some((j) => j.status === 'failed')) {
          // Its last attempt ended with the server (the queue gave up): failed, with the reason.
          await repo.finish(copy.id, 'failed', undefined, CopyMessages.interrupted, now);
          continue;
        }
        await enqueueJob(db, COPY_JOB, { copyId: copy.id }, now); // the job was lost
        queued++;
      }
      if (queued > 0) log.info({ queued }, 'data copies resumed');
      return queued;
    },
  };
}
export type DataCopyService = ReturnType<typeof createDataCopyService>;
