import type { AxiosInstance, AxiosRequestConfig, AxiosStatic, InternalAxiosRequestConfig } from 'axios';
import { t } from '../locales/i18n.ts';
import { feedback, toastError } from '../modules/feedback.ts';
import { ApiError, messageForStatus, toApiError } from './errors.ts';
import { getToken, removeToken } from './session.ts';
import { ENCRYPT_HEADER } from './encrypt-key.ts';

/** The cipher code loads with the first encrypted call, not with every page. */
const loadCrypto = () => import('./crypto.ts');

/** SPEC §9: request timeout. */
export const REQUEST_TIMEOUT_MS = 50_000;
/** SPEC §5: where the last post/put is recorded. */
export const REPEAT_SUBMIT_KEY = 'sessionObj';

export type CallOptions = {
  /** SPEC §5: send the body AES-encrypted with an RSA-protected key. */
  encrypt?: boolean;
  /** false: don't record this post/put as the last submission (SPEC §5). */
  repeatSubmit?: boolean;
  /** false: no bearer token (public calls). */
  withToken?: boolean;
  /** true: the caller shows the error itself; no toast. */
  silent?: boolean;
  headers?: Record<string, string>;
  signal?: AbortSignal;
};

type Meta = CallOptions & { aesKey?: string };
declare module 'axios' {
  interface AxiosRequestConfig {
    meta?: Meta;
  }
}

/**
 * axios loads with the first call rather than with the first page: the sign-in page shows
 * before any call is made (branding is inlined into index.html).
 */
let client: Promise<{ axios: AxiosStatic; instance: AxiosInstance }> | undefined;
function loadClient() {
  client ??= import('axios').then(({ default: axios }) => {
    const instance = axios.create({ timeout: REQUEST_TIMEOUT_MS, headers: { 'Content-Type': 'application/json;charset=utf-8' } });
    instance.interceptors.request.use(prepareRequest);
    return { axios, instance };
  });
  return client;
}

async function prepareRequest(config: InternalAxiosRequestConfig): Promise<InternalAxiosRequestConfig> {
  const meta = config.meta ?? {};
  const token = getToken();
  if (token && meta.withToken !== false) config.headers.set('Authorization', `Bearer ${token}`);
  const method = config.method?.toLowerCase();
  // Encrypted calls carry passwords: their plain body is never written to storage.
  if ((method === 'post' || method === 'put') && meta.repeatSubmit !== false && !meta.encrypt) {
    const record = { url: config.url, data: typeof config.data === 'object' ? JSON.stringify(config.data) : config.data, time: Date.now() };
    try {
      sessionStorage.setItem(REPEAT_SUBMIT_KEY, JSON.stringify(record));
    } catch {
      /* storage full or disabled: the record is advisory only */
    }
  }
  if (meta.encrypt && config.data !== undefined) {
    const { encryptRequest } = await loadCrypto();
    const { body, header, aesKey } = await encryptRequest(config.data);
    config.data = body;
    config.headers.set(ENCRYPT_HEADER, header);
    config.headers.set('Content-Type', 'text/plain;charset=utf-8');
    config.meta = { ...meta, aesKey };
  }
  return config;
}

let reloginOpen = false;
let onUnauthorized: () => void = () => window.location.assign('/login');
/** The app routes the 401 dialog's confirm through its router. */
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

/** SPEC §4: one confirm dialog however many calls fail at once; the session is cleared. */
function handleUnauthorized(): void {
  removeToken();
  if (reloginOpen) return;
  reloginOpen = true;
  feedback.modal.confirm({
    title: t('common.errors.sessionExpiredTitle'),
    content: t('common.errors.sessionExpired'),
    okText: t('common.errors.relogin'),
    cancelText: t('common.cancel'),
    onOk: () => {
      reloginOpen = false;
      onUnauthorized();
    },
    onCancel: () => {
      reloginOpen = false;
    },
  });
}

type EnvelopeBody = { code?: number; msg?: string; data?: unknown; reason?: string; requestId?: string };

async function unwrap(raw: unknown, meta: Meta, encryptedHeader: string | undefined): Promise<EnvelopeBody> {
  if (encryptedHeader && meta.aesKey && typeof raw === 'string') return (await loadCrypto()).decryptResponse(raw, meta.aesKey) as EnvelopeBody;
  if (typeof raw === 'string') {
    try {
      return JSON.parse(raw) as EnvelopeBody;
    } catch {
      return { code: 500, msg: raw };
    }
  }
  return raw as EnvelopeBody;
}

async function call<T>(config: AxiosRequestConfig, options: CallOptions = {}): Promise<T> {
  const meta: Meta = { ...options };
  let axios: AxiosStatic | undefined;
  try {
    const loaded = await loadClient();
    axios = loaded.axios;
    const instance = loaded.instance;
    const res = await instance.request({ ...config, meta, headers: options.headers, signal: options.signal, transformResponse: (d: unknown) => d });
    const body = await unwrap(res.data, res.config.meta ?? meta, res.headers[ENCRYPT_HEADER] as string | undefined);
    const code = body.code ?? 200;
    if (code === 200) return body.data as T;
    throw new ApiError(code, messageForStatus(code, body), body.reason, body.requestId);
  } catch (err) {
    let error = toApiError(err);
    if (axios?.isAxiosError(err) && err.response && typeof err.response.data === 'string') {
      try {
        const body = await unwrap(err.response.data, err.config?.meta ?? meta, err.response.headers[ENCRYPT_HEADER] as string | undefined);
        error = new ApiError(err.response.status, messageForStatus(err.response.status, body), body.reason, body.requestId);
      } catch {
        error = new ApiError(err.response.status, messageForStatus(err.response.status, undefined));
      }
    }
    if (axios?.isCancel(err)) throw error;
    if (error.status === 401) handleUnauthorized();
    else if (!options.silent) toastError(error.message);
    throw error;
  }
}

/** The one HTTP client: resolves with the envelope's data, rejects with ApiError (already toasted unless silent). */
export const http = {
  get: <T>(url: string, params?: object, options?: CallOptions) => call<T>({ method: 'get', url, params }, options),
  post: <T>(url: string, data?: unknown, options?: CallOptions) => call<T>({ method: 'post', url, data }, options),
  put: <T>(url: string, data?: unknown, options?: CallOptions) => call<T>({ method: 'put', url, data }, options),
  delete: <T>(url: string, params?: object, options?: CallOptions) => call<T>({ method: 'delete', url, params }, options),
};
