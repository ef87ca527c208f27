import { keepPreviousData, queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import type {
  ApiKeyItem,
  ChatBody,
  ChatMessageItem,
  ConversationItem,
  CreateApiKeyBody,
  CreatedApiKey,
  ModelList,
  UpdateApiKeyBody,
  UsageQuery,
  UsageStats,
} from '@suanli/contract/llm';
import { http } from '../client.ts';
import { ApiError, messageForStatus } from '../errors.ts';
import { getToken } from '../session.ts';
import { readSse } from '../sse.ts';
import { t } from '../../locales/i18n.ts';
import { compact } from './compute.ts';
import { userKeys } from './user.ts';
import { walletKeys } from './wallet.ts';

/**
 * Issue #9 calls of the console (packages/contract/src/llm.ts): the model square, conversations,
 * the streamed chat, API keys and usage. Reads are silent (each page shows its own error state).
 */

const read = { silent: true, repeatSubmit: false } as const;

export const llmKeys = {
  all: ['llm'] as const,
  models: (keyword?: string, tag?: string) => [...llmKeys.all, 'models', keyword ?? '', tag ?? ''] as const,
  conversations: () => [...llmKeys.all, 'conversations'] as const,
  messages: (id: string) => [...llmKeys.all, 'messages', id] as const,
  apiKeys: () => [...llmKeys.all, 'apiKeys'] as const,
  usage: (q: UsageQuery) => [...llmKeys.all, 'usage', q] as const,
};

/** GET /api/v1/llm/model/list */
export const modelsQuery = (keyword?: string, tag?: string) =>
  queryOptions({
    queryKey: llmKeys.models(keyword, tag),
    queryFn: ({ signal }) => http.get<ModelList>('/api/v1/llm/model/list', compact({ keyword, tag }), { ...read, signal }),
    placeholderData: keepPreviousData,
    staleTime: 30_000,
  });

/* ---------------------------------------------------------------- conversations */

/** GET /api/v1/llm/conversation/list */
export const conversationsQuery = () =>
  queryOptions({
    queryKey: llmKeys.conversations(),
    queryFn: ({ signal }) => http.get<{ list: ConversationItem[]; total: number }>('/api/v1/llm/conversation/list', undefined, { ...read, signal }),
  });

/** GET /api/v1/llm/conversation/messages?id= */
export const messagesQuery = (id: string | null) =>
  queryOptions({
    queryKey: llmKeys.messages(id ?? ''),
    queryFn: ({ signal }) =>
      http.get<{ conversation: ConversationItem; list: ChatMessageItem[] }>('/api/v1/llm/conversation/messages', { id }, { ...read, signal }),
    enabled: Boolean(id),
  });

export type ConversationCreate = { model: string; title?: string; systemPrompt?: string; temperature?: number };
export type ConversationUpdate = { id: string; title?: string; model?: string; systemPrompt?: string; temperature?: number };

export const useCreateConversation = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: ConversationCreate) => http.post<ConversationItem>('/api/v1/llm/conversation/create', compact(body)),
    onSuccess: () => qc.invalidateQueries({ queryKey: llmKeys.conversations() }),
  });
};

export const useUpdateConversation = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: ConversationUpdate) => http.post<ConversationItem>('/api/v1/llm/conversation/update', compact(body)),
    onSuccess: () => qc.invalidateQueries({ queryKey: llmKeys.conversations() }),
  });
};

export const useDeleteConversation = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => http.post<null>('/api/v1/llm/conversation/delete', { id }),
    onSuccess: () => qc.invalidateQueries({ queryKey: llmKeys.conversations() }),
  });
};

/* ---------------------------------------------------------------- streamed chat */

export type ChatStart = { userMessage: ChatMessageItem | null; assistantMessageId: string };
export type ChatHandlers = {
  onStart?: (e: ChatStart) => void;
  onDelta?: (text: string) => void;
  onDone?: (message: ChatMessageItem) => void;
  /** The stream's own error event (the answer failed after it began). */
  onError?: (msg: string, reason: string | null) => void;
};

/** True for a refusal because the wallet can't pay (HTTP 402 or the reason saying so). */
export function isInsufficientBalance(status: number | undefined, reason: string | null | undefined): boolean {
  return status === 402 || /insufficient_balance/i.test(reason ?? '');
}

/**
 * POST /api/v1/llm/chat, answered as text/event-stream. Resolves when the stream ends (also after
 * an abort through `signal`, which the server saves as a stopped reply); rejects with ApiError when
 * the call is refused before the stream starts (the usual envelope: 400/402/404/409/429).
 */
export async function streamChat(body: ChatBody, handlers: ChatHandlers, signal?: AbortSignal): Promise<void> {
  const token = getToken();
  let res: Response;
  try {
    res = await fetch('/api/v1/llm/chat', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json;charset=utf-8', Accept: 'text/event-stream', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
      signal,
    });
  } catch (err) {
    if (signal?.aborted) return;
    throw new ApiError(0, err instanceof Error && err.name === 'AbortError' ? t('common.errors.network') : t('common.errors.network'));
  }
  const type = res.headers.get('content-type') ?? '';
  if (!res.ok || !type.includes('text/event-stream') || !res.body) {
    let envelope: { code?: number; msg?: string; reason?: string; requestId?: string } | undefined;
    try {
      envelope = (await res.json()) as typeof envelope;
    } catch {
      envelope = undefined;
    }
    const status = res.ok ? (envelope?.code ?? 500) : res.status;
    throw new ApiError(status, messageForStatus(status, envelope), envelope?.reason, envelope?.requestId);
  }
  try {
    await readSse(res.body, (e) => {
      let data: unknown;
      try {
        data = JSON.parse(e.data);
      } catch {
        return;
      }
      if (e.event === 'start') handlers.onStart?.(data as ChatStart);
      else if (e.event === 'delta') handlers.onDelta?.((data as { text?: string }).text ?? '');
      else if (e.event === 'done') handlers.onDone?.(data as ChatMessageItem);
      else if (e.event === 'error') {
        const err = data as { msg?: string; reason?: string | null };
        handlers.onError?.(err.msg ?? t('common.errors.server500'), err.reason ?? null);
      }
    });
  } catch (err) {
    if (signal?.aborted) return;
    throw new ApiError(0, err instanceof Error ? err.message : t('common.errors.network'));
  }
}

/** After a reply: the balance shown in the nav and on the page moved. */
export function useRefreshBalance() {
  const qc = useQueryClient();
  return () => Promise.all([qc.invalidateQueries({ queryKey: userKeys.detail() }), qc.invalidateQueries({ queryKey: walletKeys.all })]);
}

/* ---------------------------------------------------------------- API keys */

/** GET /api/v1/llm/api_key/list */
export const apiKeysQuery = () =>
  queryOptions({
    queryKey: llmKeys.apiKeys(),
    queryFn: ({ signal }) => http.get<{ list: ApiKeyItem[]; total: number }>('/api/v1/llm/api_key/list', undefined, { ...read, signal }),
  });

export const useCreateApiKey = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: CreateApiKeyBody) => http.post<CreatedApiKey>('/api/v1/llm/api_key/create', body, { silent: true }),
    onSuccess: () => qc.invalidateQueries({ queryKey: llmKeys.apiKeys() }),
  });
};

export const useUpdateApiKey = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: UpdateApiKeyBody) => http.post<ApiKeyItem>('/api/v1/llm/api_key/update', body),
    onSuccess: () => qc.invalidateQueries({ queryKey: llmKeys.apiKeys() }),
  });
};

export const useDeleteApiKey = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => http.post<null>('/api/v1/llm/api_key/delete', { id }),
    onSuccess: () => qc.invalidateQueries({ queryKey: llmKeys.apiKeys() }),
  });
};

/* ---------------------------------------------------------------- usage */

/** POST /api/v1/llm/usage/stats (a read: not recorded as a submission). */
export const usageQuery = (q: UsageQuery) =>
  queryOptions({
    queryKey: llmKeys.usage(q),
    queryFn: ({ signal }) => http.post<UsageStats>('/api/v1/llm/usage/stats', compact(q), { ...read, signal }),
    placeholderData: keepPreviousData,
  });

/** GET /api/v1/llm/usage/export with the page's filters: fetched with the session, saved as a file. */
export async function downloadUsageCsv(q: UsageQuery, fileName: string): Promise<void> {
  const params = new URLSearchParams(compact(q) as Record<string, string>);
  const token = getToken();
  const res = await fetch(`/api/v1/llm/usage/export?${params.toString()}`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  if (!res.ok) {
    let envelope: { msg?: string; reason?: string } | undefined;
    try {
      envelope = (await res.json()) as typeof envelope;
    } catch {
      envelope = undefined;
    }
    throw new ApiError(res.status, messageForStatus(res.status, envelope), envelope?.reason);
  }
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1_000);
}
