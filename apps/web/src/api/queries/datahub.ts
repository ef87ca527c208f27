import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import type { z } from 'zod';
import type { activateDatahubBody, Datacenter, Datahub } from '@suanli/contract/datahub';
import { datahubStatus } from '@suanli/domain/datahub';
import { http } from '../client.ts';

/** SPEC §9: while a datahub is activating, its status is asked again every 3 s. */
export const DATAHUB_POLL_MS = 3_000;

export const datahubKeys = {
  all: ['datahub'] as const,
  datacenters: () => [...datahubKeys.all, 'datacenters'] as const,
  detail: (dataCenterId: number) => [...datahubKeys.all, 'detail', dataCenterId] as const,
};

/** GET /api/v1/ai-web/console/datacenters — the tenant's datacenters, a plain list (SPEC §7). */
export const datacentersQuery = () =>
  queryOptions({
    queryKey: datahubKeys.datacenters(),
    // silent: the tools menu shows its own error entry instead of a toast
    queryFn: () => http.get<Datacenter[]>('/api/v1/ai-web/console/datacenters', undefined, { silent: true }),
    staleTime: 5 * 60_000,
  });

/**
 * GET /api/v1/ai-web/datahub/{id} — null when never activated. Polls every 3 s while the status is
 * 0 (activating) and stops by itself once it is not (SPEC §4).
 */
export const datahubQuery = (dataCenterId: number) =>
  queryOptions({
    queryKey: datahubKeys.detail(dataCenterId),
    // silent: the dialog shows the error in place; a failed poll must not toast every 3 s
    queryFn: ({ signal }) => http.get<Datahub | null>(`/api/v1/ai-web/datahub/${encodeURIComponent(dataCenterId)}`, undefined, { silent: true, signal }),
    refetchInterval: (query) => (query.state.data?.status === datahubStatus.activating ? DATAHUB_POLL_MS : false),
    refetchIntervalInBackground: true,
  });

/** POST /api/v1/ai-web/datahub; the answer (status 0) goes into the cache, which starts the polling. */
export const useActivateDatahub = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: z.input<typeof activateDatahubBody>) => http.post<Datahub>('/api/v1/ai-web/datahub', body),
    onSuccess: (hub) => {
      qc.setQueryData(datahubKeys.detail(hub.dataCenterId), hub);
    },
    onError: (_err, body) => {
      // A 409 means one exists already (another tab, a double click): show what the server has.
      void qc.invalidateQueries({ queryKey: datahubKeys.detail(body.center_id) });
    },
  });
};
