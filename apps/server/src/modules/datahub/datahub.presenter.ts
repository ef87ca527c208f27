import type { Datacenter, Datahub } from '@suanli/contract/datahub';
import type { DatacenterRow, DatahubRow } from './datahub.repository.ts';

export function presentDatacenter(row: DatacenterRow): Datacenter {
  return { dataCenterId: row.id, dataCenterName: row.name };
}

export function presentDatahub(row: DatahubRow): Datahub {
  return {
    name: row.name,
    status: row.status === 1 ? 1 : 0,
    dataCenterId: row.datacenterId,
    activatedAt: row.activatedAt ? row.activatedAt.toISOString() : null,
  };
}
