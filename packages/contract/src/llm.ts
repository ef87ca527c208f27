import { z } from 'zod';
import { isoDateTime, plainText } from './validation.ts';

/**
 * Issue #9, the large-model platform: the console's calls (envelope `{code,msg,data}`, under
 * /api/v1/llm/… and /api/v1/operate/llm/…). The OpenAI-compatible gateway (/v1/…) follows
 * OpenAI's own shapes instead and is not described here (modules/llm/openai-schema.ts).
 *
 * Money is integer units of 0.0001 yuan; model prices are units per million tokens. A call costs
 * ceil((promptTokens × inputPrice + completionTokens × outputPrice) / 1e6) units (llmCost).
 */

// ---------------------------------------------------------------------------------------------
// Constants

/** Secrets are `sk-` + 48 base62 characters; shown once, stored as sha256. */
export const API_KEY_PREFIX = 'sk-';
export const API_KEY_SECRET_RE = /^sk-[A-Za-z0-9]{48}$/;
/** Most API keys (not deleted) one user may keep. */
export const MAX_API_KEYS = 50;
/** Most IP allow-list entries on a key; most models on a key's allow-list. */
export const MAX_KEY_IPS = 32;
export const MAX_KEY_MODELS = 64;
/** Most conversations kept per user (the oldest beyond are refused, not dropped: delete some). */
export const MAX_CONVERSATIONS = 500;
/** One chat message's content, in characters. */
export const MAX_CHAT_MESSAGE_CHARS = 32_000;
/** The usage statistics' longest range. */
export const MAX_USAGE_RANGE_DAYS = 366;

/** Rolling windows a key's limits can use, and their lengths (month = 30 days). */
export const LIMIT_WINDOWS = ['5h', 'day', 'week', 'month'] as const;
export const LIMIT_WINDOW_MS: Record<LimitWindow, number> = {
  '5h': 5 * 3_600_000,
  day: 24 * 3_600_000,
  week: 7 * 24 * 3_600_000,
  month: 30 * 24 * 3_600_000,
};
export const LIMIT_UNITS = ['tokens', 'money'] as const;
export type LimitWindow = (typeof LIMIT_WINDOWS)[number];
export type LimitUnit = (typeof LIMIT_UNITS)[number];

export const UPSTREAM_KINDS = ['openai', 'embedded'] as const;
export type UpstreamKind = (typeof UPSTREAM_KINDS)[number];

/** What one call costs, in units: rounded up, so a call is never free and never undercharged. */
export function llmCost(promptTokens: number, completionTokens: number, inputPrice: number, outputPrice: number): number {
  const micro = BigInt(promptTokens) * BigInt(inputPrice) + BigInt(completionTokens) * BigInt(outputPrice);
  return Number((micro + 999_999n) / 1_000_000n);
}

// ---------------------------------------------------------------------------------------------
// Model square (signed-in users)

export const modelItem = z.object({
  /** What clients send as `model`. */
  id: z.string(),
  name: z.string(),
  provider: z.string(),
  description: z.string(),
  tags: z.array(z.string()),
  contextLength: z.number().int(),
  /** Units per million tokens. */
  inputPrice: z.number().int(),
  outputPrice: z.number().int(),
});
export type ModelItem = z.infer<typeof modelItem>;

/** GET /api/v1/llm/model/list: the tenant's published models; `tags` lists every tag among them. */
export const modelListQuery = z.strictObject({
  keyword: z.string({ error: '搜索词格式不正确' }).trim().max(64, { error: '搜索词不能超过 64 个字符' }).optional(),
  tag: z.string({ error: '标签格式不正确' }).trim().max(32, { error: '标签不能超过 32 个字符' }).optional(),
});
export const modelList = z.object({ list: z.array(modelItem), tags: z.array(z.string()) });
export type ModelList = z.infer<typeof modelList>;

// ---------------------------------------------------------------------------------------------
// API keys

export const limitRule = z.strictObject({
  window: z.enum(LIMIT_WINDOWS, { error: '限额周期应为 5h、day、week 或 month' }),
  unit: z.enum(LIMIT_UNITS, { error: '限额单位应为 tokens 或 money' }),
  /** Tokens, or money units. */
  limit: z.number({ error: '限额必须是数字' }).int({ error: '限额必须是整数' }).min(1, { error: '限额必须大于 0' }).max(1e15, { error: '限额过大' }),
});
export type LimitRule = z.infer<typeof limitRule>;

export const apiKeyStatuses = ['active', 'disabled', 'expired'] as const;
export const apiKeyItem = z.object({
  id: z.string(),
  name: z.string(),
  /** `sk-abcd…wxyz`: the first and last four characters of the secret. */
  maskedKey: z.string(),
  status: z.enum(apiKeyStatuses),
  expiresAt: z.string().nullable(),
  /** Model ids the key may call; null: all published models. */
  models: z.array(z.string()).nullable(),
  /** Most money (units) the key may spend in all; null: no quota (the balance still bounds it). */
  quota: z.number().int().nullable(),
  /** Money (units) spent through the key. */
  used: z.number().int(),
  /** Addresses or CIDRs calls may come from; empty: anywhere. */
  ipAllow: z.array(z.string()),
  limits: z.array(limitRule),
  lastUsedAt: z.string().nullable(),
  createdAt: z.string(),
});
export type ApiKeyItem = z.infer<typeof apiKeyItem>;

/** GET /api/v1/llm/api_key/list: the user's keys (not deleted), newest first. */
export const apiKeyList = z.object({ list: z.array(apiKeyItem), total: z.number().int() });

const keyFields = {
  name: plainText('密钥名称', 32),
  expiresAt: isoDateTime('过期时间').nullable().optional(),
  models: z.array(z.string({ error: '模型 ID 格式不正确' }).trim().min(1).max(128), { error: '模型列表格式不正确' }).max(MAX_KEY_MODELS, { error: `最多指定 ${MAX_KEY_MODELS} 个模型` }).nullable().optional(),
  quota: z.number({ error: '额度必须是数字' }).int({ error: '额度必须是整数' }).min(1, { error: '额度必须大于 0' }).max(1e15, { error: '额度过大' }).nullable().optional(),
  ipAllow: z.array(z.string({ error: 'IP 格式不正确' }).trim().min(1).max(64), { error: 'IP 白名单格式不正确' }).max(MAX_KEY_IPS, { error: `IP 白名单最多 ${MAX_KEY_IPS} 条` }).optional(),
  limits: z.array(limitRule, { error: '限额格式不正确' }).max(8, { error: '最多 8 条限额' }).optional(),
};
/** POST /api/v1/llm/api_key/create → the key and its secret (the only time it is shown). */
export const createApiKeyBody = z.strictObject(keyFields);
export type CreateApiKeyBody = z.input<typeof createApiKeyBody>;
export const createdApiKey = z.object({ key: apiKeyItem, secret: z.string() });
export type CreatedApiKey = z.infer<typeof createdApiKey>;
/** POST /api/v1/llm/api_key/update: change any of the fields, or enable/disable. */
export const updateApiKeyBody = z.strictObject({
  id: z.string({ error: '密钥 ID 格式不正确' }).uuid({ error: '密钥 ID 格式不正确' }),
  enabled: z.boolean({ error: 'enabled 必须是布尔值' }).optional(),
  ...Object.fromEntries(Object.entries(keyFields).map(([k, v]) => [k, v.optional()])),
} as { id: z.ZodString; enabled: z.ZodOptional<z.ZodBoolean> } & { [K in keyof typeof keyFields]: z.ZodOptional<(typeof keyFields)[K]> });
export type UpdateApiKeyBody = z.input<typeof updateApiKeyBody>;
/** POST /api/v1/llm/api_key/delete */
export const apiKeyIdBody = z.strictObject({ id: z.string({ error: '密钥 ID 格式不正确' }).uuid({ error: '密钥 ID 格式不正确' }) });

// ---------------------------------------------------------------------------------------------
// Text chat (the console's own chat, billed like the gateway; conversations kept per user)

export const chatMessageStatuses = ['done', 'stopped', 'length', 'error'] as const;
export const chatMessageItem = z.object({
  id: z.string(),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  /** Assistant replies: the model id, tokens, cost (units), and how it ended. */
  model: z.string().nullable(),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  cost: z.number().int(),
  status: z.enum(chatMessageStatuses),
  /** Why it ended in error, in Chinese. */
  error: z.string().nullable(),
  createdAt: z.string(),
});
export type ChatMessageItem = z.infer<typeof chatMessageItem>;

export const conversationItem = z.object({
  id: z.string(),
  title: z.string(),
  model: z.string(),
  systemPrompt: z.string(),
  temperature: z.number(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ConversationItem = z.infer<typeof conversationItem>;

const conversationId = z.string({ error: '对话 ID 格式不正确' }).uuid({ error: '对话 ID 格式不正确' });
const temperature = z.number({ error: '温度必须是数字' }).min(0, { error: '温度应在 0 到 2 之间' }).max(2, { error: '温度应在 0 到 2 之间' });
const systemPrompt = z.string({ error: '系统提示词格式不正确' }).max(8_000, { error: '系统提示词不能超过 8000 个字符' });

/** GET /api/v1/llm/conversation/list: newest first. */
export const conversationList = z.object({ list: z.array(conversationItem), total: z.number().int() });
/** POST /api/v1/llm/conversation/create */
export const createConversationBody = z.strictObject({
  model: z.string({ error: '请选择模型' }).trim().min(1, { error: '请选择模型' }).max(128),
  title: plainText('对话标题', 64).optional(),
  systemPrompt: systemPrompt.optional(),
  temperature: temperature.optional(),
});
/** POST /api/v1/llm/conversation/update: rename, change model, system prompt or temperature. */
export const updateConversationBody = z.strictObject({
  id: conversationId,
  title: plainText('对话标题', 64).optional(),
  model: z.string({ error: '请选择模型' }).trim().min(1, { error: '请选择模型' }).max(128).optional(),
  systemPrompt: systemPrompt.optional(),
  temperature: temperature.optional(),
});
/** POST /api/v1/llm/conversation/delete */
export const conversationIdBody = z.strictObject({ id: conversationId });
/** GET /api/v1/llm/conversation/messages?id=… : oldest first. */
export const conversationMessagesQuery = z.strictObject({ id: conversationId });
export const conversationMessages = z.object({ conversation: conversationItem, list: z.array(chatMessageItem) });

/**
 * POST /api/v1/llm/chat: send `content` to the conversation (or, with `regenerate`, answer the
 * last user message again, replacing the reply after it). Answers `text/event-stream`:
 *   event: start  data: {"userMessage": ChatMessageItem | null, "assistantMessageId": "…"}
 *   event: delta  data: {"text": "…"}                    (as the tokens arrive)
 *   event: done   data: ChatMessageItem                  (the saved reply: tokens, cost, status)
 *   event: error  data: {"msg": "…", "reason": ErrorReason | null}
 * Errors before the stream starts answer in the usual envelope (400/402/404/409/429). Closing the
 * request stops the answer: it is saved as `stopped` and charged for what was generated.
 */
export const chatBody = z
  .strictObject({
    conversationId,
    content: z.string({ error: '请输入消息' }).trim().max(MAX_CHAT_MESSAGE_CHARS, { error: `消息不能超过 ${MAX_CHAT_MESSAGE_CHARS} 个字符` }).optional(),
    regenerate: z.boolean({ error: 'regenerate 必须是布尔值' }).optional(),
  })
  .refine((b) => b.regenerate === true || (b.content !== undefined && b.content.length > 0), { error: '请输入消息', path: ['content'] });
export type ChatBody = z.input<typeof chatBody>;
export const chatStartEvent = z.object({ userMessage: chatMessageItem.nullable(), assistantMessageId: z.string() });

// ---------------------------------------------------------------------------------------------
// Usage statistics

/** POST /api/v1/llm/usage/stats: the user's calls (gateway and chat) in [startTime, endTime]. */
export const usageQuery = z
  .strictObject({
    startTime: isoDateTime('开始时间'),
    endTime: isoDateTime('结束时间'),
    model: z.string().trim().max(128).optional(),
    keyId: z.string().uuid({ error: '密钥 ID 格式不正确' }).optional(),
    /** Days are cut at midnight in this IANA zone (default Asia/Shanghai). */
    timeZone: z.string().max(64).optional(),
  })
  .refine((q) => Date.parse(q.startTime) <= Date.parse(q.endTime), { error: '开始时间不能晚于结束时间', path: ['startTime'] })
  .refine((q) => Date.parse(q.endTime) - Date.parse(q.startTime) <= MAX_USAGE_RANGE_DAYS * 86_400_000, { error: `时间范围不能超过 ${MAX_USAGE_RANGE_DAYS} 天`, path: ['endTime'] });
export type UsageQuery = z.input<typeof usageQuery>;

const usageFigures = {
  requests: z.number().int(),
  /** Calls that ended in an error (4xx/5xx after the call was accepted, upstream failures). */
  errors: z.number().int(),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  cost: z.number().int(),
};
/** One row per (day, model, key): the page groups it by day, model or key itself. `keyId` null: the console's chat. */
export const usageRow = z.object({ day: z.string(), model: z.string(), keyId: z.string().nullable(), keyName: z.string().nullable(), ...usageFigures });
export type UsageRow = z.infer<typeof usageRow>;
export const usageStats = z.object({ rows: z.array(usageRow), totals: z.object(usageFigures) });
export type UsageStats = z.infer<typeof usageStats>;
/** GET /api/v1/llm/usage/export?startTime&endTime&model&keyId&timeZone: the same rows as CSV (UTF-8 with BOM). */

// ---------------------------------------------------------------------------------------------
// Operator calls (/api/v1/operate/llm/…)

export const upstreamItem = z.object({
  id: z.number().int(),
  name: z.string(),
  kind: z.enum(UPSTREAM_KINDS),
  /** openai: the server's base URL (…/v1); embedded: ''. */
  baseUrl: z.string(),
  /** An API key is stored (it is never shown again). */
  hasKey: z.boolean(),
  /** embedded: the GGUF file; '' for the default (LLM_MODEL_PATH or the bundled SmolLM2). */
  modelPath: z.string(),
  timeoutMs: z.number().int(),
  /** Calls in flight at once; more wait in a queue of the same size, beyond it 429. */
  maxConcurrency: z.number().int(),
  retired: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type UpstreamItem = z.infer<typeof upstreamItem>;
const upstreamFields = {
  name: plainText('上游名称', 64),
  kind: z.enum(UPSTREAM_KINDS, { error: '上游类型应为 openai 或 embedded' }),
  baseUrl: z.url({ protocol: /^https?$/, error: '上游地址应为 http(s) URL' }).max(512).optional(),
  apiKey: z.string().max(512, { error: '上游密钥过长' }).optional(),
  modelPath: z.string().max(1024).optional(),
  timeoutMs: z.number().int().min(1_000, { error: '超时至少 1000 毫秒' }).max(600_000, { error: '超时最多 600000 毫秒' }).optional(),
  maxConcurrency: z.number().int().min(1, { error: '并发至少为 1' }).max(1024, { error: '并发最多 1024' }).optional(),
};
/** POST /api/v1/operate/llm/upstream; PUT /api/v1/operate/llm/upstream/:id (fields optional; apiKey '' clears it). */
export const upstreamBody = z.strictObject(upstreamFields);
export const upstreamPatch = z.strictObject(Object.fromEntries(Object.entries(upstreamFields).map(([k, v]) => [k, v.optional()])) as { [K in keyof typeof upstreamFields]: z.ZodOptional<(typeof upstreamFields)[K]> });
/** POST /api/v1/operate/llm/upstream/:id/test */
export const upstreamHealth = z.object({ ok: z.boolean(), latencyMs: z.number().int(), models: z.array(z.string()), error: z.string().nullable() });
export type UpstreamHealth = z.infer<typeof upstreamHealth>;

export const operatorModelItem = modelItem.extend({
  dbId: z.number().int(),
  published: z.boolean(),
  upstreamId: z.number().int(),
  /** The model's name at the upstream (what is sent there). */
  upstreamModel: z.string(),
  sort: z.number().int(),
  retired: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type OperatorModelItem = z.infer<typeof operatorModelItem>;
const price = (label: string) => z.number({ error: `${label}必须是数字` }).int({ error: `${label}必须是整数` }).min(0, { error: `${label}不能为负` }).max(1e12, { error: `${label}过大` });
const modelFields = {
  modelId: z.string({ error: '请输入模型 ID' }).trim().regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/, { error: '模型 ID 只能包含字母、数字和 . _ : / -，最长 128 个字符' }),
  name: plainText('模型名称', 64),
  provider: plainText('提供方', 64),
  description: plainText('描述', 2_000, 0).optional(),
  tags: z.array(plainText('标签', 32)).max(16, { error: '最多 16 个标签' }).optional(),
  contextLength: z.number().int().min(256, { error: '上下文长度至少 256' }).max(10_000_000, { error: '上下文长度过大' }),
  inputPrice: price('输入价格'),
  outputPrice: price('输出价格'),
  published: z.boolean().optional(),
  upstreamId: z.number().int().min(1, { error: '上游不存在' }),
  upstreamModel: z.string().trim().min(1, { error: '请输入上游模型名' }).max(256),
  sort: z.number().int().min(-1_000_000).max(1_000_000).optional(),
};
/** POST /api/v1/operate/llm/model; PUT /api/v1/operate/llm/model/:id; DELETE retires it. */
export const modelBody = z.strictObject(modelFields);
export const modelPatch = z.strictObject(Object.fromEntries(Object.entries(modelFields).map(([k, v]) => [k, v.optional()])) as { [K in keyof typeof modelFields]: z.ZodOptional<(typeof modelFields)[K]> });
export const operatorModelList = z.object({ list: z.array(operatorModelItem), total: z.number().int() });
export const upstreamList = z.object({ list: z.array(upstreamItem), total: z.number().int() });
