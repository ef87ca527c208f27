import { keepPreviousData, queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import type { DiskOptions, GpuType, ImageItem, MachineItem, MachineListQuery, MachinePage, Tag } from '@suanli/contract/machine';
import type { CreatePaygOrderBody, CreatePrepayOrderBody, Order, OrderListQuery, OrderPage, PricePreview, PricePreviewBody } from '@suanli/contract/order';
import type { InstanceItem, InstanceListQuery, InstancePage, InstanceStatus, StatusTag } from '@suanli/contract/instance';
import type { PubKeyItem } from '@suanli/contract/ssh-key';
import type { BillListQuery, BillPage, DailyBillPage } from '@suanli/contract/bill';
import type { ShellTicket } from '@suanli/contract/shell';
import { http } from '../client.ts';
import { userKeys } from './user.ts';
import { walletKeys } from './wallet.ts';

/**
 * Issue #8 calls (SPEC §7 "Instances and machines", "Orders", "Account" bills, "Public keys"):
 * the market, orders, instances, SSH public keys, bills and the web shell ticket.
 * Reads are silent (each page shows its own error state); actions toast unless the caller shows
 * the error itself.
 */

/** A list answer: the contract's array, or `{ list }` as the paged calls answer. */
export function asList<T>(data: T[] | { list: T[] } | null | undefined): T[] {
  if (Array.isArray(data)) return data;
  return data?.list ?? [];
}

/** Only the filters that are set: the contract is strict and an empty string is not a value. */
export function compact<T extends object>(q: T): T {
  return Object.fromEntries(Object.entries(q).filter(([, v]) => v !== undefined && v !== null && v !== '')) as T;
}

const read = { silent: true } as const;
const listRead = { silent: true, repeatSubmit: false } as const;

export const computeKeys = {
  all: ['compute'] as const,
  machines: (q: MachineListQuery) => [...computeKeys.all, 'machines', q] as const,
  machine: (id: number) => [...computeKeys.all, 'machine', id] as const,
  gpuTypes: () => [...computeKeys.all, 'gpuTypes'] as const,
  tags: () => [...computeKeys.all, 'tags'] as const,
  disk: (machineId?: number) => [...computeKeys.all, 'disk', machineId ?? 0] as const,
  images: () => [...computeKeys.all, 'images'] as const,
  preview: (body: PricePreviewBody) => [...computeKeys.all, 'preview', body] as const,
  orders: () => [...computeKeys.all, 'orders'] as const,
  orderPage: (q: OrderListQuery) => [...computeKeys.orders(), 'page', q] as const,
  order: (id: string) => [...computeKeys.orders(), 'detail', id] as const,
  instances: () => [...computeKeys.all, 'instances'] as const,
  instancePage: (q: InstanceListQuery) => [...computeKeys.instances(), 'page', q] as const,
  statusTags: () => [...computeKeys.instances(), 'statusTags'] as const,
  dashboard: () => [...computeKeys.instances(), 'dashboard'] as const,
  pubKeys: () => [...computeKeys.all, 'pubKeys'] as const,
  bills: (q: BillListQuery) => [...computeKeys.all, 'bills', q] as const,
  dailyBills: (q: BillListQuery) => [...computeKeys.all, 'dailyBills', q] as const,
};

/* ---------------------------------------------------------------- market */

/** GET /api/v1/machine/list */
export const machinesQuery = (q: MachineListQuery) =>
  queryOptions({
    queryKey: computeKeys.machines(q),
    queryFn: ({ signal }) => http.get<MachinePage>('/api/v1/machine/list', compact(q), { ...read, signal }),
    placeholderData: keepPreviousData,
  });

/**
 * One machine for the create page. The list call has no id filter: the machine is found among
 * the pages of the list (the market rarely has more than a few hundred machines).
 */
export const machineQuery = (id: number) =>
  queryOptions({
    queryKey: computeKeys.machine(id),
    queryFn: async ({ signal }): Promise<MachineItem | null> => {
      for (let page = 1; page <= 20; page += 1) {
        const res = await http.get<MachinePage>('/api/v1/machine/list', { page, pageSize: 100 }, { ...read, signal });
        const hit = res.list.find((m) => m.id === id);
        if (hit) return hit;
        if (res.list.length < 100 || page * 100 >= res.total) return null;
      }
      return null;
    },
    enabled: Number.isInteger(id) && id > 0,
  });

/** GET /api/v1/machine/gpu_type */
export const gpuTypesQuery = () =>
  queryOptions({
    queryKey: computeKeys.gpuTypes(),
    queryFn: async () => asList(await http.get<GpuType[] | { list: GpuType[] }>('/api/v1/machine/gpu_type', undefined, read)),
    staleTime: 5 * 60_000,
  });

/** GET /api/v1/common/tag */
export const tagsQuery = () =>
  queryOptions({
    queryKey: computeKeys.tags(),
    queryFn: async () => asList(await http.get<Tag[] | { list: Tag[] }>('/api/v1/common/tag', undefined, read)),
    staleTime: 5 * 60_000,
  });

/** GET /api/v1/machine/disk */
export const diskQuery = (machineId?: number) =>
  queryOptions({
    queryKey: computeKeys.disk(machineId),
    queryFn: () => http.get<DiskOptions>('/api/v1/machine/disk', compact({ machineId }), read),
    staleTime: 60_000,
  });

/** How often the image list is asked again while an image is building. */
export const IMAGE_POLL_MS = 3_000;

/** GET /api/v1/image/all, asked again while any image builds (its progress moves). */
export const imagesQuery = () =>
  queryOptions({
    queryKey: computeKeys.images(),
    queryFn: async () => asList(await http.get<ImageItem[] | { list: ImageItem[] }>('/api/v1/image/all', undefined, read)),
    refetchInterval: (query) => (query.state.data?.some((i) => i.status === 'building') ? IMAGE_POLL_MS : false),
  });

/** POST /api/v1/order/price/preview (a read: not recorded as a submission). */
export const pricePreviewQuery = (body: PricePreviewBody | null) =>
  queryOptions({
    queryKey: computeKeys.preview(body ?? ({} as PricePreviewBody)),
    queryFn: ({ signal }) => http.post<PricePreview>('/api/v1/order/price/preview', body, { ...listRead, signal }),
    enabled: body !== null,
    placeholderData: keepPreviousData,
    staleTime: 30_000,
  });

/* ---------------------------------------------------------------- orders */

export type CreateOrderInput = { kind: 'payg'; body: CreatePaygOrderBody } | { kind: 'prepay'; body: CreatePrepayOrderBody };

/** POST /api/v1/order/payg or /api/v1/order/prepay: an unpaid order to check and pay. */
export const useCreateOrder = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (input: CreateOrderInput) => http.post<Order>(input.kind === 'payg' ? '/api/v1/order/payg' : '/api/v1/order/prepay', input.body, { silent: true }),
    onSuccess: (order) => {
      qc.setQueryData(computeKeys.order(order.id), order);
      void qc.invalidateQueries({ queryKey: computeKeys.orders() });
    },
  });
};

/** GET /api/v1/order/{id} */
export const orderQuery = (id: string) =>
  queryOptions({
    queryKey: computeKeys.order(id),
    queryFn: ({ signal }) => http.get<Order>(`/api/v1/order/${encodeURIComponent(id)}`, undefined, { ...read, signal }),
    enabled: /^\d{8,32}$/.test(id),
  });

/** POST /api/v1/order/list */
export const ordersPageQuery = (q: OrderListQuery) =>
  queryOptions({
    queryKey: computeKeys.orderPage(q),
    queryFn: ({ signal }) => http.post<OrderPage>('/api/v1/order/list', compact(q), { ...listRead, signal }),
    placeholderData: keepPreviousData,
  });

/** What paying changes: the order, the balance everywhere, the instances. */
function useAfterMoney() {
  const qc = useQueryClient();
  return () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: computeKeys.orders() }),
      qc.invalidateQueries({ queryKey: computeKeys.instances() }),
      qc.invalidateQueries({ queryKey: userKeys.detail() }),
      qc.invalidateQueries({ queryKey: walletKeys.all }),
    ]);
}

/**
 * POST /api/v1/order/pay with an Idempotency-Key: the caller makes the key when the user clicks
 * and passes the same key when that click's request is retried, so a lost answer never pays twice.
 */
export const usePayOrder = () => {
  const after = useAfterMoney();
  return useMutation({
    mutationFn: ({ orderId, idempotencyKey }: { orderId: string; idempotencyKey: string }) =>
      http.post<Order>('/api/v1/order/pay', { orderId }, { silent: true, headers: { 'Idempotency-Key': idempotencyKey } }),
    onSettled: () => void after(),
  });
};

/** PUT /api/v1/order/{id}/cancel */
export const useCancelOrder = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (orderId: string) => http.put<Order | null>(`/api/v1/order/${encodeURIComponent(orderId)}/cancel`, undefined, { silent: true }),
    onSettled: () => void qc.invalidateQueries({ queryKey: computeKeys.orders() }),
  });
};

/* ---------------------------------------------------------------- instances */

/** Statuses on the way to another: the list is asked again until none is left. */
export const TRANSITIONAL: readonly InstanceStatus[] = ['creating', 'starting', 'stopping', 'releasing'];
export const INSTANCE_POLL_MS = 2_000;

/** GET /api/v1/instance/list, asked again every 2 s while any instance is changing state. */
export const instancesPageQuery = (q: InstanceListQuery) =>
  queryOptions({
    queryKey: computeKeys.instancePage(q),
    queryFn: ({ signal }) => http.get<InstancePage>('/api/v1/instance/list', compact(q), { ...read, signal }),
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (query.state.data?.list.some((i) => TRANSITIONAL.includes(i.status)) ? INSTANCE_POLL_MS : false),
  });

/** GET /api/v1/instance/status_tag */
export const statusTagsQuery = () =>
  queryOptions({
    queryKey: computeKeys.statusTags(),
    queryFn: async () => asList(await http.get<StatusTag[] | { list: StatusTag[] }>('/api/v1/instance/status_tag', undefined, read)),
  });

export type InstanceDashboard = { total: number; running: number; stopped: number; expiringSoon: number };

/** GET /api/v1/dashboard/common/instance: the dropdown's count and the home card. */
export const instanceDashboardQuery = () =>
  queryOptions({
    queryKey: computeKeys.dashboard(),
    queryFn: () => http.get<InstanceDashboard>('/api/v1/dashboard/common/instance', undefined, read),
    staleTime: 10_000,
  });

export type InstanceAction =
  | { kind: 'power_on' | 'power_off' | 'release'; instanceId: string }
  | { kind: 'rename'; instanceId: string; name: string }
  | { kind: 'password'; instanceId: string; password: string }
  | { kind: 'init'; instanceId: string }
  | { kind: 'change_image'; instanceId: string; imageId: number };

function actionCall(a: InstanceAction): Promise<InstanceItem | null> {
  switch (a.kind) {
    case 'power_on':
    case 'power_off':
    case 'release':
      return http.post(`/api/v1/ide-instance/${a.kind}`, { instanceId: a.instanceId }, { silent: true });
    case 'rename':
      return http.post('/api/v1/instance/modify_name', { instanceId: a.instanceId, name: a.name }, { silent: true });
    case 'password':
      return http.post('/api/v1/instance/modify_password', { instanceId: a.instanceId, password: a.password }, { silent: true });
    case 'init':
      return http.post('/api/v1/instance/init', { instanceId: a.instanceId }, { silent: true });
    case 'change_image':
      return http.post('/api/v1/instance/change_image', { instanceId: a.instanceId, imageId: a.imageId }, { silent: true });
  }
}

/** One of the instance actions; the list, its tabs and the dashboard are asked again after it. */
export const useInstanceAction = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: actionCall,
    onSettled: () => void qc.invalidateQueries({ queryKey: computeKeys.instances() }),
  });
};

/** POST /api/v1/instance/shell_ticket: a one-time ticket for the web shell's WebSocket. */
export const fetchShellTicket = (instanceId: string) => http.post<ShellTicket>('/api/v1/instance/shell_ticket', { instanceId }, { silent: true, repeatSubmit: false });

/* ---------------------------------------------------------------- SSH keys */

/** GET /api/v1/pub_key/list */
export const pubKeysQuery = () =>
  queryOptions({
    queryKey: computeKeys.pubKeys(),
    queryFn: async () => asList(await http.get<PubKeyItem[] | { list: PubKeyItem[] }>('/api/v1/pub_key/list', undefined, read)),
  });

/** POST /api/v1/pub_key/add: the caller shows the server's message (malformed, duplicate, too many). */
export const useAddPubKey = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: { name?: string; key: string }) => http.post<PubKeyItem>('/api/v1/pub_key/add', compact(body), { silent: true }),
    onSuccess: () => void qc.invalidateQueries({ queryKey: computeKeys.pubKeys() }),
  });
};

/** POST /api/v1/pub_key/delete */
export const useDeletePubKey = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => http.post<null>('/api/v1/pub_key/delete', { id }, { silent: true }),
    onSettled: () => void qc.invalidateQueries({ queryKey: computeKeys.pubKeys() }),
  });
};

/* ---------------------------------------------------------------- bills */

/** POST /api/v1/bills/list */
export const billsQuery = (q: BillListQuery) =>
  queryOptions({
    queryKey: computeKeys.bills(q),
    queryFn: ({ signal }) => http.post<BillPage>('/api/v1/bills/list', compact(q), { ...listRead, signal }),
    placeholderData: keepPreviousData,
  });

/** POST /api/v1/bills/daily_bill/list */
export const dailyBillsQuery = (q: BillListQuery) =>
  queryOptions({
    queryKey: computeKeys.dailyBills(q),
    queryFn: ({ signal }) => http.post<DailyBillPage>('/api/v1/bills/daily_bill/list', compact(q), { ...listRead, signal }),
    placeholderData: keepPreviousData,
  });
