import type { DatacenterItem, GpuType, MachineItem, Tag } from '@suanli/contract/machine';
import type { DatacenterRow, GpuTypeRow, MachineView, TagRow } from './inventory.repository.ts';

export const presentGpuType = (g: GpuTypeRow): GpuType => ({ id: g.id, name: g.name, memoryGb: g.memoryGb, vendor: g.vendor });
export const presentTag = (t: TagRow): Tag => ({ id: t.id, name: t.name, color: t.color });
export const presentDatacenter = (d: DatacenterRow): DatacenterItem => ({ id: d.id, name: d.name, region: d.region, sort: d.sort });

export function presentMachine(v: MachineView): MachineItem {
  const m = v.machine;
  const gpuFree = m.gpuTotal - m.gpuUsed;
  return {
    id: m.id,
    datacenterId: m.datacenterId,
    datacenterName: v.datacenterName,
    hostName: m.hostName,
    gpuType: presentGpuType(v.gpuType),
    gpuTotal: m.gpuTotal,
    gpuFree,
    cpuPerGpu: m.cpuPerGpu,
    memoryGbPerGpu: m.memoryGbPerGpu,
    systemDiskGb: m.systemDiskGb,
    dataDiskFreeGb: m.dataDiskFreeGb,
    dataDiskMaxGb: m.dataDiskMaxGb,
    dataDiskPricePerGbDay: Number(m.dataDiskPricePerGbDay),
    prices: { hour: Number(m.priceHour), day: Number(m.priceDay), week: Number(m.priceWeek), month: Number(m.priceMonth), year: Number(m.priceYear) },
    tags: m.tags,
    online: m.online,
    demo: m.demo,
    rentable: m.online && gpuFree > 0,
  };
}
