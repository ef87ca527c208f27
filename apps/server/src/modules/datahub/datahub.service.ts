import fs from 'node:fs/promises';
import path from 'node:path';
import type { ActivateDatahubBody } from '@suanli/contract/datahub';
import type { Db } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { conflict, notFound } from '../../lib/errors.ts';
import { enqueueJob } from '../../jobs/queue.ts';
import { createDatahubRepository } from './datahub.repository.ts';
import { presentDatacenter, presentDatahub } from './datahub.presenter.ts';

/** The job that prepares a datahub's storage area after activation is requested. */
export const DATAHUB_ACTIVATE_JOB = 'datahub.activate';

/** Who is asking: the signed-in user of the request's tenant. */
export type DatahubActor = { id: number; tenantId: number };

const ALREADY_ACTIVATING = '该数据中心的数据中转站正在激活中，请勿重复提交';
const ALREADY_ACTIVE = '该数据中心的数据中转站已激活，无需重复激活';

/** Where a datahub's files live, relative to the files root: one folder per tenant, user and datacenter. */
export const datahubStorageKey = (tenantId: number, userId: number, datacenterId: number) =>
  path.posix.join('datahub', String(tenantId), String(userId), String(datacenterId));

/**
 * Datahub per datacenter (SPEC §3, §4). Activation is asked in a request and finished by a
 * persisted job, so a crash between the two leaves a job to retry, never a row stuck at 0.
 */
export function createDatahubService(deps: { db: Db; clock: Clock; filesRoot: string }) {
  const { db, clock } = deps;
  const repo = createDatahubRepository(db);

  async function requireDatacenter(tenantId: number, id: number) {
    const dc = await repo.findDatacenter(tenantId, id);
    if (!dc) throw notFound();
    return dc;
  }

  return {
    async listDatacenters(tenantId: number) {
      return (await repo.listDatacenters(tenantId)).map(presentDatacenter);
    },

    /** The user's datahub in the datacenter, or null when never activated. */
    async get(actor: DatahubActor, datacenterId: number) {
      await requireDatacenter(actor.tenantId, datacenterId);
      const row = await repo.findForUser(actor.id, datacenterId);
      return row ? presentDatahub(row) : null;
    },

    /** Creates the row at status 0 and its job in one transaction; a second activation is a 409. */
    async activate(actor: DatahubActor, input: ActivateDatahubBody) {
      await requireDatacenter(actor.tenantId, input.center_id);
      const row = await db.transaction(async (tx) => {
        const inserted = await createDatahubRepository(tx).insert({
          tenantId: actor.tenantId,
          userId: actor.id,
          datacenterId: input.center_id,
          name: input.name,
        });
        if (inserted) await enqueueJob(tx, DATAHUB_ACTIVATE_JOB, { datahubId: inserted.id });
        return inserted;
      });
      if (!row) {
        const existing = await repo.findForUser(actor.id, input.center_id);
        throw conflict(existing?.status === 1 ? ALREADY_ACTIVE : ALREADY_ACTIVATING);
      }
      return presentDatahub(row);
    },

    /**
     * Job handler: makes the storage area and marks the datahub activated. Idempotent: mkdir -p
     * succeeds on an existing folder, and an activated row is left as it is.
     */
    async runActivation(payload: Record<string, unknown>): Promise<void> {
      const id = payload.datahubId;
      if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) throw new Error(`datahub.activate: bad payload ${JSON.stringify(payload)}`);
      await db.transaction(async (tx) => {
        const r = createDatahubRepository(tx);
        const row = await r.lockById(id);
        if (!row || row.status === 1) return;
        const key = datahubStorageKey(row.tenantId, row.userId, row.datacenterId);
        await fs.mkdir(path.join(deps.filesRoot, key), { recursive: true });
        await r.markActivated(row.id, key, clock());
      });
    },
  };
}
export type DatahubService = ReturnType<typeof createDatahubService>;
