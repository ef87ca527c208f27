import type { z } from 'zod';
import type {
  DatacenterBody,
  DatacenterItem,
  DiskOptions,
  GpuType,
  GpuTypeBody,
  MachineItem,
  MachinePage,
  Tag,
  TagBody,
  machineCreateBody,
  machineListQuery,
  machineUpdateBody,
} from '@suanli/contract/machine';
import type { Db } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound } from '../../lib/errors.ts';
import { createInventoryRepository, type InventoryRepository } from './inventory.repository.ts';
import { presentDatacenter, presentGpuType, presentMachine, presentTag } from './inventory.presenter.ts';

/** Data disks are sized in whole multiples of this many GB. */
export const DISK_STEP_GB = 10;
/** Disk options when no machine is named: what a machine gets unless the operator says otherwise. */
export const DEFAULT_DISKS: DiskOptions = { systemDiskGb: 30, dataDiskFreeGb: 50, dataDiskMaxGb: 500, stepGb: DISK_STEP_GB, pricePerGbDay: 0 };

export const InventoryMessages = {
  datacenterExists: '数据中心名称已存在',
  gpuTypeExists: 'GPU 型号已存在',
  tagExists: '标签已存在',
  hostExists: '主机名已存在',
  unknownDatacenter: '数据中心不存在',
  unknownGpuType: 'GPU 型号不存在',
  unknownTags: (names: string[]) => `标签不存在：${names.join('、')}`,
  gpuTotalBelowUsed: (used: number) => `GPU 总数不能少于已被实例占用的 ${used} 张`,
  diskFreeAboveMax: '免费数据盘不能大于数据盘上限',
} as const;

type MachineListQuery = z.output<typeof machineListQuery>;
type MachineCreate = z.output<typeof machineCreateBody>;
type MachineUpdate = z.output<typeof machineUpdateBody>;

/**
 * The market's inventory (issue #8): datacenters → machines with a GPU type, prices per GPU, disks
 * and tags, all rows of the tenant. Users read it; operators edit it (every id is the tenant's: a
 * foreign one is missing).
 */
export function createInventoryService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  const repo = createInventoryRepository(db);

  async function checkRefs(r: InventoryRepository, tenantId: number, m: { datacenterId?: number; gpuTypeId?: number; tags?: string[] }) {
    if (m.datacenterId !== undefined && !(await r.findDatacenter(tenantId, m.datacenterId))) throw badRequest(InventoryMessages.unknownDatacenter);
    if (m.gpuTypeId !== undefined && !(await r.findGpuType(tenantId, m.gpuTypeId))) throw badRequest(InventoryMessages.unknownGpuType);
    if (m.tags && m.tags.length > 0) {
      const known = new Set((await r.tags(tenantId)).map((t) => t.name));
      const unknown = [...new Set(m.tags)].filter((t) => !known.has(t));
      if (unknown.length > 0) throw badRequest(InventoryMessages.unknownTags(unknown));
    }
  }

  async function machineItem(tenantId: number, id: number): Promise<MachineItem> {
    const v = await repo.machineView(tenantId, id);
    if (!v) throw notFound();
    return presentMachine(v);
  }

  return {
    async listMachines(tenantId: number, q: MachineListQuery): Promise<MachinePage> {
      const r = await repo.machinePage(tenantId, q, q.page, q.pageSize);
      return { list: r.list.map(presentMachine), total: r.total };
    },
    async getMachine(tenantId: number, id: number): Promise<MachineItem> {
      return machineItem(tenantId, id);
    },
    async gpuTypes(tenantId: number): Promise<GpuType[]> {
      return (await repo.gpuTypes(tenantId)).map(presentGpuType);
    },
    async tags(tenantId: number): Promise<Tag[]> {
      return (await repo.tags(tenantId)).map(presentTag);
    },
    /** A machine's disk options (a foreign or missing machine: 404), or the defaults. */
    async diskOptions(tenantId: number, machineId?: number): Promise<DiskOptions> {
      if (machineId === undefined) return DEFAULT_DISKS;
      const v = await repo.machineView(tenantId, machineId);
      if (!v) throw notFound();
      const m = v.machine;
      return { systemDiskGb: m.systemDiskGb, dataDiskFreeGb: m.dataDiskFreeGb, dataDiskMaxGb: m.dataDiskMaxGb, stepGb: DISK_STEP_GB, pricePerGbDay: Number(m.dataDiskPricePerGbDay) };
    },
    async datacenters(tenantId: number): Promise<DatacenterItem[]> {
      return (await repo.datacenters(tenantId)).map(presentDatacenter);
    },

    // ---- operators ----
    async createDatacenter(tenantId: number, b: DatacenterBody): Promise<DatacenterItem> {
      if (await repo.findDatacenterByName(tenantId, b.name)) throw conflict(InventoryMessages.datacenterExists);
      return presentDatacenter(await repo.insertDatacenter({ tenantId, name: b.name, region: b.region ?? '', sort: b.sort ?? 0 }));
    },
    async updateDatacenter(tenantId: number, id: number, b: Partial<DatacenterBody>): Promise<DatacenterItem> {
      if (!(await repo.findDatacenter(tenantId, id))) throw notFound();
      if (b.name !== undefined) {
        const same = await repo.findDatacenterByName(tenantId, b.name);
        if (same && same.id !== id) throw conflict(InventoryMessages.datacenterExists);
      }
      const row = await repo.updateDatacenter(tenantId, id, { name: b.name, region: b.region, sort: b.sort });
      if (!row) throw notFound();
      return presentDatacenter(row);
    },
    async createGpuType(tenantId: number, b: GpuTypeBody): Promise<GpuType> {
      const row = await repo.insertGpuType({ tenantId, name: b.name, memoryGb: b.memoryGb, vendor: b.vendor ?? 'NVIDIA', sort: b.sort ?? 0 });
      if (!row) throw conflict(InventoryMessages.gpuTypeExists);
      return presentGpuType(row);
    },
    async updateGpuType(tenantId: number, id: number, b: Partial<GpuTypeBody>): Promise<GpuType> {
      if (!(await repo.findGpuType(tenantId, id))) throw notFound();
      try {
        const row = await repo.updateGpuType(tenantId, id, { name: b.name, memoryGb: b.memoryGb, vendor: b.vendor, sort: b.sort });
        if (!row) throw notFound();
        return presentGpuType(row);
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(InventoryMessages.gpuTypeExists);
        throw err;
      }
    },
    async createTag(tenantId: number, b: TagBody): Promise<Tag> {
      const row = await repo.insertTag({ tenantId, name: b.name, color: b.color ?? 'blue', sort: b.sort ?? 0 });
      if (!row) throw conflict(InventoryMessages.tagExists);
      return presentTag(row);
    },
    async updateTag(tenantId: number, id: number, b: Partial<TagBody>): Promise<Tag> {
      try {
        return await db.transaction(async (tx) => {
          const r = createInventoryRepository(tx);
          const old = await r.findTag(tenantId, id);
          if (!old) throw notFound();
          const row = await r.updateTag(id, { name: b.name, color: b.color, sort: b.sort });
          if (!row) throw notFound();
          if (b.name !== undefined && b.name !== old.name) await r.renameTagOnMachines(tenantId, old.name, b.name);
          return presentTag(row);
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(InventoryMessages.tagExists);
        throw err;
      }
    },
    async createMachine(tenantId: number, b: MachineCreate): Promise<MachineItem> {
      await checkRefs(repo, tenantId, b);
      const now = clock();
      const row = await repo.insertMachine({
        tenantId,
        datacenterId: b.datacenterId,
        hostName: b.hostName,
        gpuTypeId: b.gpuTypeId,
        gpuTotal: b.gpuTotal,
        cpuPerGpu: b.cpuPerGpu,
        memoryGbPerGpu: b.memoryGbPerGpu,
        systemDiskGb: b.systemDiskGb,
        dataDiskFreeGb: b.dataDiskFreeGb,
        dataDiskMaxGb: b.dataDiskMaxGb,
        dataDiskPricePerGbDay: b.dataDiskPricePerGbDay,
        priceHour: b.prices.hour,
        priceDay: b.prices.day,
        priceWeek: b.prices.week,
        priceMonth: b.prices.month,
        priceYear: b.prices.year,
        tags: [...new Set(b.tags)],
        online: b.online,
        demo: b.demo,
        createdAt: now,
        updatedAt: now,
      });
      if (!row) throw conflict(InventoryMessages.hostExists);
      return machineItem(tenantId, row.id);
    },
    /** Any subset of a machine's fields; GPUs held by instances can't be taken away. */
    async updateMachine(tenantId: number, id: number, b: MachineUpdate): Promise<MachineItem> {
      try {
        await db.transaction(async (tx) => {
          const r = createInventoryRepository(tx);
          const m = await r.lockMachine(tenantId, id);
          if (!m) throw notFound();
          await checkRefs(r, tenantId, b);
          if (b.gpuTotal !== undefined && b.gpuTotal < m.gpuUsed) throw badRequest(InventoryMessages.gpuTotalBelowUsed(m.gpuUsed));
          if ((b.dataDiskFreeGb ?? m.dataDiskFreeGb) > (b.dataDiskMaxGb ?? m.dataDiskMaxGb)) throw badRequest(InventoryMessages.diskFreeAboveMax);
          const p = b.prices ?? {};
          await r.updateMachine(id, {
            datacenterId: b.datacenterId,
            hostName: b.hostName,
            gpuTypeId: b.gpuTypeId,
            gpuTotal: b.gpuTotal,
            cpuPerGpu: b.cpuPerGpu,
            memoryGbPerGpu: b.memoryGbPerGpu,
            systemDiskGb: b.systemDiskGb,
            dataDiskFreeGb: b.dataDiskFreeGb,
            dataDiskMaxGb: b.dataDiskMaxGb,
            dataDiskPricePerGbDay: b.dataDiskPricePerGbDay,
            priceHour: p.hour,
            priceDay: p.day,
            priceWeek: p.week,
            priceMonth: p.month,
            priceYear: p.year,
            tags: b.tags ? [...new Set(b.tags)] : undefined,
            online: b.online,
            demo: b.demo,
            updatedAt: clock(),
          });
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(InventoryMessages.hostExists);
        throw err;
      }
      return machineItem(tenantId, id);
    },
  };
}
export type InventoryService = ReturnType<typeof createInventoryService>;

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } };
  return e?.code === '23505' || e?.cause?.code === '23505';
}
