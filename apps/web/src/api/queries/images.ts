import { keepPreviousData, queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import type { CommunityImageQuery, CopyDataBody, CopyJob, MigratableInstance, SnapshotBody, UserImage, UserImagePage, UserImageUpdateBody, ClonePaygBody, ClonePrepayBody } from '@suanli/contract/instance-ops';
import type { Order } from '@suanli/contract/order';
import { http } from '../client.ts';
import { asList, compact, computeKeys } from './compute.ts';

/**
 * Issue #10 (images, clone, data copy): the user's private images, the image community,
 * snapshots of an instance, data copies between instances and clone orders. Reads are silent
 * (each page shows its own error state); actions are silent too and the caller shows the error.
 */

const read = { silent: true } as const;

/** How often a building image, a snapshot or a copy is asked again. */
export const IMAGE_POLL_MS = 2_000;
export const COPY_POLL_MS = 1_000;

export const imageKeys = {
  all: ['images'] as const,
  privatePage: (page: number, pageSize: number) => [...imageKeys.all, 'private', page, pageSize] as const,
  private: (id: number) => [...imageKeys.all, 'private', 'detail', id] as const,
  community: (q: CommunityImageQuery) => [...imageKeys.all, 'community', q] as const,
  communityOne: (id: number) => [...imageKeys.all, 'community', 'detail', id] as const,
  snapshots: (instanceId: string) => [...imageKeys.all, 'snapshots', instanceId] as const,
  migratable: () => [...imageKeys.all, 'migratable'] as const,
  copy: (id: string) => [...imageKeys.all, 'copy', id] as const,
};

const building = (list: UserImage[] | undefined) => Boolean(list?.some((i) => i.status === 'building'));

/** GET /api/v1/image/private (paged), asked again while any image is building. */
export const privateImagesQuery = (page: number, pageSize: number) =>
  queryOptions({
    queryKey: imageKeys.privatePage(page, pageSize),
    queryFn: ({ signal }) => http.get<UserImagePage>('/api/v1/image/private', { page, pageSize }, { ...read, signal }),
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (building(query.state.data?.list) ? IMAGE_POLL_MS : false),
  });

/** GET /api/v1/image/private/{id}, asked again while it is building. */
export const privateImageQuery = (id: number) =>
  queryOptions({
    queryKey: imageKeys.private(id),
    queryFn: ({ signal }) => http.get<UserImage>(`/api/v1/image/private/${id}`, undefined, { ...read, signal }),
    enabled: Number.isInteger(id) && id > 0,
    refetchInterval: (query) => (query.state.data?.status === 'building' ? IMAGE_POLL_MS : false),
  });

/** GET /api/v1/image/community (shared images of the tenant). */
export const communityImagesQuery = (q: CommunityImageQuery) =>
  queryOptions({
    queryKey: imageKeys.community(q),
    queryFn: ({ signal }) => http.get<UserImagePage>('/api/v1/image/community', compact(q), { ...read, signal }),
    placeholderData: keepPreviousData,
  });

/** GET /api/v1/image/community/{id} */
export const communityImageQuery = (id: number) =>
  queryOptions({
    queryKey: imageKeys.communityOne(id),
    queryFn: ({ signal }) => http.get<UserImage>(`/api/v1/image/community/${id}`, undefined, { ...read, signal }),
    enabled: Number.isInteger(id) && id > 0,
  });

/**
 * An image the create page was asked to preselect but that GET /api/v1/image/all doesn't list:
 * a community image (another user's, shared), else one of the user's own private images.
 */
export const pickableImageQuery = (id: number, enabled: boolean) =>
  queryOptions({
    queryKey: [...imageKeys.all, 'pickable', id] as const,
    queryFn: async ({ signal }): Promise<UserImage | null> => {
      try {
        return await http.get<UserImage>(`/api/v1/image/community/${id}`, undefined, { ...read, signal });
      } catch {
        try {
          return await http.get<UserImage>(`/api/v1/image/private/${id}`, undefined, { ...read, signal });
        } catch {
          return null;
        }
      }
    },
    enabled: enabled && Number.isInteger(id) && id > 0,
  });

/** What changing an image touches: every list of images and the create page's picker. */
function useAfterImageChange() {
  const qc = useQueryClient();
  return () => Promise.all([qc.invalidateQueries({ queryKey: imageKeys.all }), qc.invalidateQueries({ queryKey: computeKeys.images() })]);
}

/** PUT /api/v1/image/private/{id}: rename, describe, share or withdraw. */
export const useUpdateImage = () => {
  const after = useAfterImageChange();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: UserImageUpdateBody }) => http.put<UserImage>(`/api/v1/image/private/${id}`, body, { silent: true }),
    onSettled: () => void after(),
  });
};

/** DELETE /api/v1/image/private/{id} (409 while instances or orders use it). */
export const useDeleteImage = () => {
  const after = useAfterImageChange();
  return useMutation({
    mutationFn: (id: number) => http.delete<null>(`/api/v1/image/private/${id}`, undefined, { silent: true }),
    onSettled: () => void after(),
  });
};

/* ---------------------------------------------------------------- snapshots */

/** GET /api/v1/instance/snapshot?instanceId=, asked again while one is building. */
export const snapshotsQuery = (instanceId: string, poll = true) =>
  queryOptions({
    queryKey: imageKeys.snapshots(instanceId),
    queryFn: async ({ signal }) => asList(await http.get<UserImage[] | { list: UserImage[] }>('/api/v1/instance/snapshot', { instanceId }, { ...read, signal })),
    refetchInterval: (query) => (poll && building(query.state.data) ? IMAGE_POLL_MS : false),
  });

/** POST /api/v1/instance/snapshot: starts saving a stopped instance's system disk as an image. */
export const useCreateSnapshot = () => {
  const after = useAfterImageChange();
  return useMutation({
    mutationFn: (body: SnapshotBody) => http.post<UserImage | null>('/api/v1/instance/snapshot', compact(body), { silent: true }),
    onSettled: () => void after(),
  });
};

/* ---------------------------------------------------------------- data copy */

/** GET /api/v1/instance/user_left_migrate */
export const migratableQuery = () =>
  queryOptions({
    queryKey: imageKeys.migratable(),
    queryFn: async ({ signal }) => asList(await http.get<MigratableInstance[] | { list: MigratableInstance[] }>('/api/v1/instance/user_left_migrate', undefined, { ...read, signal })),
  });

export const COPY_DONE: readonly CopyJob['status'][] = ['succeeded', 'failed', 'terminated'];

/** GET /api/v1/instance/copy_data_status?id=, every second until the copy ends. */
export const copyJobQuery = (id: string) =>
  queryOptions({
    queryKey: imageKeys.copy(id),
    queryFn: async ({ signal }): Promise<CopyJob | null> => {
      const res = await http.get<CopyJob | { list: CopyJob[] }>('/api/v1/instance/copy_data_status', { id }, { ...read, signal });
      if (res && 'list' in res) return res.list.find((j) => j.id === id) ?? res.list[0] ?? null;
      return res ?? null;
    },
    enabled: id !== '',
    refetchInterval: (query) => (query.state.data && COPY_DONE.includes(query.state.data.status) ? false : COPY_POLL_MS),
  });

/** GET /api/v1/instance/copy_data_status?instanceId=: the latest copies touching an instance (to pick up one still running). */
export const instanceCopiesQuery = (instanceId: string) =>
  queryOptions({
    queryKey: [...imageKeys.all, 'copies', instanceId] as const,
    queryFn: async ({ signal }) => asList(await http.get<CopyJob[] | { list: CopyJob[] } | CopyJob>('/api/v1/instance/copy_data_status', { instanceId }, { ...read, signal }).then((r) => (r && !Array.isArray(r) && 'id' in r ? [r] : r))),
  });

/** POST /api/v1/instance/copy_data */
export const useStartCopy = () =>
  useMutation({ mutationFn: (body: CopyDataBody) => http.post<CopyJob>('/api/v1/instance/copy_data', body, { silent: true }) });

/** POST /api/v1/instance/terminate_copy */
export const useTerminateCopy = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => http.post<CopyJob | null>('/api/v1/instance/terminate_copy', { id }, { silent: true }),
    onSettled: (_d, _e, id) => void qc.invalidateQueries({ queryKey: imageKeys.copy(id) }),
  });
};

/* ---------------------------------------------------------------- clone */

export type CloneInput = { kind: 'payg'; body: ClonePaygBody } | { kind: 'prepay'; body: ClonePrepayBody };

/** POST /api/v1/order/instance/clone/payg or /clone/prepay: an unpaid order to check and pay. */
export const useCloneOrder = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (input: CloneInput) => http.post<Order>(`/api/v1/order/instance/clone/${input.kind}`, input.body, { silent: true }),
    onSuccess: (order) => {
      qc.setQueryData(computeKeys.order(order.id), order);
      void qc.invalidateQueries({ queryKey: computeKeys.orders() });
    },
  });
};
