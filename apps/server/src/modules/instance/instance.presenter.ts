import type { InstanceItem } from '@suanli/contract/instance';
import type { InstanceView } from './instance.repository.ts';

export type SshEndpoint = { host: string; port: number };

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** An instance row (with its machine's, GPU type's and image's names) as the console sees it. */
export function presentInstance(v: InstanceView, password: string, ssh: SshEndpoint): InstanceItem {
  return {
    id: v.id,
    name: v.name,
    status: v.status,
    statusReason: v.statusReason,
    machineId: v.machineId,
    hostName: v.hostName,
    datacenterName: v.datacenterName,
    gpuTypeName: v.gpuTypeName,
    gpuCount: v.gpuCount,
    demo: v.demo,
    cpuCores: v.cpuCores,
    memoryGb: v.memoryGb,
    systemDiskGb: v.systemDiskGb,
    dataDiskGb: v.dataDiskGb,
    imageId: v.imageId,
    imageName: v.imageName,
    chargeType: v.chargeType,
    period: v.period,
    hourly: v.chargeType === 'payg' ? v.hourly : 0,
    noGpu: v.noGpu,
    cloneSourceId: v.cloneSourceId,
    expiresAt: iso(v.expiresAt),
    releaseAt: iso(v.releaseAt),
    createdAt: v.createdAt.toISOString(),
    startedAt: iso(v.startedAt),
    stoppedAt: iso(v.stoppedAt),
    ssh: { host: ssh.host, port: ssh.port, user: v.id, command: `ssh -p ${ssh.port} ${v.id}@${ssh.host}` },
    password,
  };
}
