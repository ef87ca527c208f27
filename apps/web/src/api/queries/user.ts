import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import type { z } from 'zod';
import type {
  changePasswordBody,
  changePhoneBody,
  findPasswordBody,
  loginCodeBody,
  loginPasswordBody,
  registerBody,
  SessionItem,
  sendCodeBody,
  UserDetail,
} from '@suanli/contract/user';
import { http } from '../client.ts';
import { getToken, removeToken, setToken } from '../session.ts';

type LoginResult = { token: string; expiresAt: string };

export const userKeys = {
  all: ['user'] as const,
  detail: () => [...userKeys.all, 'detail'] as const,
  sessions: () => [...userKeys.all, 'sessions'] as const,
};

/** GET /api/v1/user/detail — only asked with a session token. */
export const userDetailQuery = () =>
  queryOptions({
    queryKey: userKeys.detail(),
    queryFn: () => http.get<UserDetail>('/api/v1/user/detail', undefined, { silent: true }),
    enabled: Boolean(getToken()),
    staleTime: 30_000,
  });

export const sessionsQuery = () =>
  queryOptions({
    queryKey: userKeys.sessions(),
    queryFn: () => http.get<{ list: SessionItem[]; total: number }>('/api/v1/user/sessions'),
  });

export const sendCode = (body: z.input<typeof sendCodeBody>) => http.post<{ retryAfterSeconds: number }>('/user/send-code', body, { withToken: false });

/** Signs in: keeps the token and drops whatever another user's session had cached. */
function useSignIn<T>(call: (body: T) => Promise<LoginResult>) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: call,
    onSuccess: (res) => {
      qc.clear();
      setToken(res.token);
    },
  });
}

export const useRegister = () =>
  useSignIn((body: z.input<typeof registerBody>) => http.post<LoginResult>('/user/register', body, { encrypt: true, withToken: false, silent: true }));
export const useLoginPassword = () =>
  useSignIn((body: z.input<typeof loginPasswordBody>) => http.post<LoginResult>('/user/login/password', body, { encrypt: true, withToken: false, silent: true }));
export const useLoginCode = () =>
  useSignIn((body: z.input<typeof loginCodeBody>) => http.post<LoginResult>('/user/login/code', body, { encrypt: true, withToken: false, silent: true }));

export const useFindPassword = () =>
  useMutation({ mutationFn: (body: z.input<typeof findPasswordBody>) => http.put<null>('/user/password/find', body, { encrypt: true, withToken: false, silent: true }) });

/** Changing the password signs the other devices out: the device list is stale afterwards. */
export const useChangePassword = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: z.input<typeof changePasswordBody>) => http.put<null>('/api/v1/user/password', body, { encrypt: true, silent: true }),
    onSuccess: () => qc.invalidateQueries({ queryKey: userKeys.sessions() }),
  });
};

/** Carries the current password (encrypted); the other devices are signed out afterwards. */
export const useChangePhone = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: z.input<typeof changePhoneBody>) => http.put<null>('/api/v1/user/phoneNumber', body, { encrypt: true, silent: true }),
    onSuccess: () => Promise.all([qc.invalidateQueries({ queryKey: userKeys.detail() }), qc.invalidateQueries({ queryKey: userKeys.sessions() })]),
  });
};

export const useRevokeSession = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => http.delete<null>(`/api/v1/user/sessions/${encodeURIComponent(id)}`),
    onSuccess: () => qc.invalidateQueries({ queryKey: userKeys.sessions() }),
  });
};

export const useRevokeOtherSessions = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => http.post<{ revoked: number }>('/api/v1/user/sessions/revoke-others'),
    onSuccess: () => qc.invalidateQueries({ queryKey: userKeys.sessions() }),
  });
};

/** SPEC §4: logout revokes the session, clears user info and the token. */
export const useLogout = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => http.post<null>('/api/v1/user/logout', undefined, { silent: true }).catch(() => null),
    onSettled: () => {
      removeToken();
      qc.clear();
    },
  });
};

/**
 * POST /user/send-code as a mutation. Silent: the form shows the error itself, and a
 * CAPTCHA_REQUIRED answer is the caller's cue to open the captcha and try again.
 */
export const useSendCode = () =>
  useMutation({
    mutationFn: (body: z.input<typeof sendCodeBody>) => http.post<{ retryAfterSeconds: number }>('/user/send-code', body, { withToken: false, silent: true }),
  });
