/**
 * A large-model call refused or failed, in OpenAI's terms (status, type, code) with a Chinese
 * message for people. The /v1 gateway answers `{"error":{"message","type","code","param"}}`; the
 * console's chat answers the usual envelope with the same status and message.
 */
export type LlmErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error' | 'insufficient_quota' | 'rate_limit_error' | 'api_error' | 'timeout_error';

export class LlmError extends Error {
  constructor(
    readonly status: number,
    readonly type: LlmErrorType,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}

/** The catalogue (docs/llm.md "Errors"); the gateway and chat build their errors only from these. */
export const LlmErrors = {
  missingKey: () => new LlmError(401, 'authentication_error', 'missing_api_key', '缺少 API 密钥：请在 Authorization 头中以 Bearer sk-… 提供'),
  invalidKey: () => new LlmError(401, 'authentication_error', 'invalid_api_key', 'API 密钥无效'),
  keyDisabled: () => new LlmError(401, 'authentication_error', 'api_key_disabled', 'API 密钥已停用'),
  keyExpired: () => new LlmError(401, 'authentication_error', 'api_key_expired', 'API 密钥已过期'),
  ipRefused: (ip: string) => new LlmError(403, 'permission_error', 'ip_not_allowed', `来源 IP ${ip} 不在该密钥的白名单内`),
  modelNotAllowed: (model: string) => new LlmError(403, 'permission_error', 'model_not_allowed', `该密钥无权调用模型 ${model}`),
  modelNotFound: (model: string) => new LlmError(404, 'not_found_error', 'model_not_found', `模型 ${model} 不存在或未上架`),
  badRequest: (message: string, param: string | null = null) => new LlmError(400, 'invalid_request_error', 'invalid_request', message, param),
  contextTooLong: (tokens: number, limit: number) =>
    new LlmError(400, 'invalid_request_error', 'context_length_exceeded', `输入约 ${tokens} 个 token，超过模型的上下文长度 ${limit}`, 'messages'),
  insufficientBalance: () => new LlmError(402, 'insufficient_quota', 'insufficient_balance', '余额不足，请先充值'),
  quotaExceeded: () => new LlmError(429, 'insufficient_quota', 'quota_exceeded', '该密钥的额度已用完'),
  windowExceeded: (window: string) => new LlmError(429, 'rate_limit_error', 'window_limit_exceeded', `该密钥在 ${window} 滚动周期内的限额已用完`),
  busy: () => new LlmError(429, 'rate_limit_error', 'upstream_busy', '模型繁忙，排队已满，请稍后再试'),
  upstreamTimeout: () => new LlmError(504, 'timeout_error', 'upstream_timeout', '模型服务响应超时'),
  upstreamFailed: () => new LlmError(502, 'api_error', 'upstream_error', '模型服务暂时不可用'),
} as const;

/** Issue #9 (gateway): answers of the /v1 scope itself (its error handler and 404). */
export const GatewayErrors = {
  notJson: () => new LlmError(400, 'invalid_request_error', 'invalid_json', '请求体不是合法的 JSON'),
  tooLarge: (mb: number) => new LlmError(413, 'invalid_request_error', 'request_too_large', `请求体过大（最多 ${mb} MB）`),
  unknownPath: (method: string, path: string) => new LlmError(404, 'invalid_request_error', 'unknown_url', `未知的接口：${method} ${path}`),
  internal: () => new LlmError(500, 'api_error', 'internal_error', '服务器内部错误，请稍后重试'),
} as const;
