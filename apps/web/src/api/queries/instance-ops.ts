import { queryOptions, keepPreviousData, useMutation, useQueryClient } from '@tanstack/react-query';
import type { InstanceItem, InstancePage } from '@suanli/contract/instance';
import type { Order, PrepaidPeriod } from '@suanli/contract/order';
import type { AvailableExpandDisk, ChangePreview, InstanceDiskUsage } from '@suanli/contract/instance-ops';
import { http } from '../client.ts';
import { computeKeys } from './compute.ts';
import { userKeys } from './user.ts';
import { walletKeys } from './wallet.ts';

/**
 * Issue #10 calls of the console (docs/instance-operations.md): charge-type conversions, renewal,
 * GPU count and data disk changes, disk usage and the no-GPU start. Reads and previews are silent
 * (each page shows its own error); the changes are silent too, their pages show the server's reason.
 */

const read = { silent: true } as const;
/** A preview is a read: neither recorded as a submission nor toasted. */
const previewRead = { silent: true, repeatSubmit: false } as const;

export const opsKeys = {
  all: ['instance-ops'] as const,
  instance: (id: string) => [...computeKeys.instances(), 'one', id] as const,
  preview: (kind: string, body: object) => [...opsKeys.all, 'preview', kind, body] as const,
  expandDisk: (id: string) => [...computeKeys.instances(), 'expandDisk', id] as const,
  diskUsage: () => [...computeKeys.instances(), 'diskUsage'] as const,
};

export const isInstanceId = (id: string) => /^i-[a-z0-9]{10}$/.test(id);

/**
 * One of the user's instances. The list call has no id filter of its own but matches the keyword
 * against the id, released instances included (a released one answers "已释放" on these pages).
 */
export const instanceQuery = (id: string) =>
  queryOptions({
    queryKey: opsKeys.instance(id),
    queryFn: async ({ signal }): Promise<InstanceItem | null> => {
      const res = await http.get<InstancePage>('/api/v1/instance/list', { page: 1, pageSize: 20, keyword: id, includeReleased: 'true' }, { ...read, signal });
      return res.list.find((i) => i.id === id) ?? null;
    },
    enabled: isInstanceId(id),
  });

export type PeriodBody = { instanceId: string; period: PrepaidPeriod; quantity: number };
export type PreviewKind = 'prepay' | 'payg' | 'renewal' | 'spec' | 'disk';

const PREVIEW_URL: Record<PreviewKind, string> = {
  prepay: '/api/v1/order/charge_type/prepay/preview',
  payg: '/api/v1/order/charge_type/payg/preview',
  renewal: '/api/v1/order/instance/renewal/preview',
  spec: '/api/v1/order/instance/change/preview',
  disk: '/api/v1/order/data_disk/change/preview',
};

const CHANGE_URL: Record<PreviewKind, string> = {
  prepay: '/api/v1/order/charge_type/prepay',
  payg: '/api/v1/order/charge_type/payg',
  renewal: '/api/v1/order/instance/renewal',
  spec: '/api/v1/order/instance/change',
  disk: '/api/v1/order/data_disk/change',
};

export type ChangeBody =
  | { kind: 'prepay' | 'renewal'; body: PeriodBody }
  | { kind: 'payg'; body: { instanceId: string } }
  | { kind: 'spec'; body: { instanceId: string; gpuCount: number } }
  | { kind: 'disk'; body: { instanceId: string; dataDiskGb: number } };

/** What a change would cost (POST …/preview); `null` body: nothing to ask yet. */
export const changePreviewQuery = (input: ChangeBody | null) =>
  queryOptions({
    queryKey: opsKeys.preview(input?.kind ?? 'none', input?.body ?? {}),
    queryFn: ({ signal }) => http.post<ChangePreview>(PREVIEW_URL[input!.kind], input!.body, { ...previewRead, signal }),
    enabled: input !== null,
    placeholderData: keepPreviousData,
    staleTime: 10_000,
  });

/** What a change moves: the order lists, the instances, the balance everywhere. */
function useAfterChange() {
  const qc = useQueryClient();
  return () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: computeKeys.orders() }),
      qc.invalidateQueries({ queryKey: computeKeys.instances() }),
      qc.invalidateQueries({ queryKey: opsKeys.all }),
      qc.invalidateQueries({ queryKey: userKeys.detail() }),
      qc.invalidateQueries({ queryKey: walletKeys.all }),
    ]);
}

/**
 * Creates the change: an unpaid order when it costs money (paid on /center/control/changeOrderdetail),
 * or a paid order with amount ≤ 0 when it was applied at once (a refund is negative).
 */
export const useCreateChange = () => {
  const qc = useQueryClient();
  const after = useAfterChange();
  return useMutation({
    mutationFn: (input: ChangeBody) => http.post<Order>(CHANGE_URL[input.kind], input.body, { silent: true }),
    onSuccess: (order) => {
      if (order?.id) qc.setQueryData(computeKeys.order(order.id), order);
    },
    onSettled: () => void after(),
  });
};

/** GET /api/v1/instance/available_expand_disk?instanceId= */
export const expandDiskQuery = (instanceId: string) =>
  queryOptions({
    queryKey: opsKeys.expandDisk(instanceId),
    queryFn: ({ signal }) => http.get<AvailableExpandDisk>('/api/v1/instance/available_expand_disk', { instanceId }, { ...read, signal }),
    enabled: isInstanceId(instanceId),
  });

/** GET /api/v1/instance/disk_usage */
export const diskUsageQuery = () =>
  queryOptions({
    queryKey: opsKeys.diskUsage(),
    queryFn: async ({ signal }) => (await http.get<{ list: InstanceDiskUsage[] }>('/api/v1/instance/disk_usage', undefined, { ...read, signal })).list,
  });

/** POST /api/v1/ide-instance/power_on with noGpu: a stopped pay-as-you-go instance without its GPUs (无卡模式). */
export const useNoGpuPowerOn = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (instanceId: string) => http.post<InstanceItem>('/api/v1/ide-instance/power_on', { instanceId, noGpu: true }, { silent: true }),
    onSettled: () => void qc.invalidateQueries({ queryKey: computeKeys.instances() }),
  });
};
