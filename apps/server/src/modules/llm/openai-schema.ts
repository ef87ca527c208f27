import crypto from 'node:crypto';
import { z } from 'zod';
import type { ChatMessage } from '../../adapters/llm/port.ts';
import { LlmErrors, type LlmError } from './errors.ts';
import type { ResolvedModel } from './types.ts';

/**
 * The OpenAI Chat Completions shapes the /v1 gateway accepts and answers (the subset it serves:
 * text only, one choice). Unknown request fields are ignored, as OpenAI does; a known field with a
 * wrong value is a 400 naming it in `param`.
 */

const textPart = z.object({ type: z.literal('text'), text: z.string({ error: '文本内容（text）必须是字符串' }) });

const content = z.union([z.string(), z.array(z.unknown())], { error: '消息内容（content）必须是字符串或内容片段数组' });

const message = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant'], { error: '消息角色（role）应为 system、developer、user 或 assistant' }),
  content: content.nullable().optional(),
}, { error: '每条消息（messages 的元素）必须是对象' });

const intMin1 = (name: string) =>
  z
    .number({ error: `${name} 必须是整数` })
    .int({ error: `${name} 必须是整数` })
    .min(1, { error: `${name} 必须大于等于 1` })
    .max(10_000_000, { error: `${name} 过大` });

export const chatCompletionBody = z.object({
  model: z.string({ error: '请提供模型（model）' }).min(1, { error: '请提供模型（model）' }).max(256, { error: '模型名过长' }),
  messages: z.array(message, { error: '请提供消息列表（messages）' }).min(1, { error: '消息列表（messages）不能为空' }).max(2_048, { error: '消息过多（最多 2048 条）' }),
  stream: z.boolean({ error: 'stream 必须是布尔值' }).nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean({ error: 'include_usage 必须是布尔值' }).nullable().optional() }, { error: 'stream_options 必须是对象' }).nullable().optional(),
  temperature: z.number({ error: 'temperature 必须是数字' }).min(0, { error: 'temperature 应在 0 到 2 之间' }).max(2, { error: 'temperature 应在 0 到 2 之间' }).nullable().optional(),
  top_p: z.number({ error: 'top_p 必须是数字' }).min(0, { error: 'top_p 应在 0 到 1 之间' }).max(1, { error: 'top_p 应在 0 到 1 之间' }).nullable().optional(),
  max_tokens: intMin1('max_tokens').nullable().optional(),
  max_completion_tokens: intMin1('max_completion_tokens').nullable().optional(),
  stop: z
    .union([z.string().max(256, { error: 'stop 过长' }), z.array(z.string().max(256, { error: 'stop 过长' })).max(4, { error: 'stop 最多 4 个' })], { error: 'stop 必须是字符串或字符串数组（最多 4 个）' })
    .nullable()
    .optional(),
  seed: z.number({ error: 'seed 必须是整数' }).int({ error: 'seed 必须是整数' }).nullable().optional(),
  n: z.number({ error: 'n 必须是整数' }).int({ error: 'n 必须是整数' }).nullable().optional(),
});
export type ChatCompletionBody = z.infer<typeof chatCompletionBody>;

/** `messages[0].content` from a zod path. */
function paramOf(path: PropertyKey[]): string | null {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out || null;
}

export type ParsedCompletion = {
  model: string;
  messages: ChatMessage[];
  stream: boolean;
  includeUsage: boolean;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  seed?: number;
};

/** The request body (any JSON value) → what the completion needs, or the LlmError (400) that says what is wrong. */
export function parseCompletionBody(body: unknown): ParsedCompletion | LlmError {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return LlmErrors.badRequest('请求体必须是 JSON 对象');
  const r = chatCompletionBody.safeParse(body);
  if (!r.success) {
    const issue = r.error.issues[0];
    return LlmErrors.badRequest(issue?.message ?? '请求参数不合法', issue ? paramOf(issue.path) : null);
  }
  const b = r.data;
  if (b.n !== undefined && b.n !== null && b.n !== 1) return LlmErrors.badRequest('n 只支持 1', 'n');
  const messages: ChatMessage[] = [];
  for (const [i, m] of b.messages.entries()) {
    let text: string;
    if (m.content === undefined || m.content === null) {
      if (m.role !== 'assistant') return LlmErrors.badRequest('消息内容（content）不能为空', `messages[${i}].content`);
      text = '';
    } else if (typeof m.content === 'string') {
      text = m.content;
    } else {
      const parts: string[] = [];
      for (const [j, part] of m.content.entries()) {
        const p = textPart.safeParse(part);
        if (!p.success) {
          const type = part && typeof part === 'object' && 'type' in part ? String((part as { type: unknown }).type).slice(0, 32) : '';
          return LlmErrors.badRequest(
            type && type !== 'text' ? `不支持的内容类型 ${type}：该模型只接受文本（type 为 text）` : (p.error.issues[0]?.message ?? '内容片段应为 {"type":"text","text":"…"}'),
            `messages[${i}].content[${j}]`,
          );
        }
        parts.push(p.data.text);
      }
      text = parts.join('');
    }
    messages.push({ role: m.role === 'developer' ? 'system' : m.role, content: text });
  }
  const max = b.max_completion_tokens ?? b.max_tokens ?? undefined;
  return {
    model: b.model,
    messages,
    stream: b.stream === true,
    includeUsage: b.stream_options?.include_usage === true,
    ...(max !== undefined ? { maxTokens: max } : {}),
    ...(b.temperature !== undefined && b.temperature !== null ? { temperature: b.temperature } : {}),
    ...(b.top_p !== undefined && b.top_p !== null ? { topP: b.top_p } : {}),
    ...(b.stop !== undefined && b.stop !== null ? { stop: typeof b.stop === 'string' ? [b.stop] : b.stop } : {}),
    ...(b.seed !== undefined && b.seed !== null ? { seed: b.seed } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Answers

export const completionId = () => `chatcmpl-${crypto.randomBytes(18).toString('base64url')}`;

export type OpenAiUsage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };
export const usageOf = (promptTokens: number, completionTokens: number): OpenAiUsage => ({
  prompt_tokens: promptTokens,
  completion_tokens: completionTokens,
  total_tokens: promptTokens + completionTokens,
});

export function errorBody(e: LlmError) {
  return { error: { message: e.message, type: e.type, param: e.param, code: e.code } };
}

export function modelList(models: ResolvedModel[]) {
  return {
    object: 'list' as const,
    data: models.map((m) => ({ id: m.modelId, object: 'model' as const, created: Math.floor(m.createdAt.getTime() / 1000), owned_by: m.provider })),
  };
}

export function chatCompletion(v: { id: string; created: number; model: string; text: string; finishReason: 'stop' | 'length'; promptTokens: number; completionTokens: number }) {
  return {
    id: v.id,
    object: 'chat.completion' as const,
    created: v.created,
    model: v.model,
    choices: [{ index: 0, message: { role: 'assistant' as const, content: v.text, refusal: null }, logprobs: null, finish_reason: v.finishReason }],
    usage: usageOf(v.promptTokens, v.completionTokens),
    system_fingerprint: null,
  };
}

/** One `chat.completion.chunk` (choices empty: the usage chunk). */
export function chunk(v: { id: string; created: number; model: string }, choice: { delta: { role?: 'assistant'; content?: string }; finishReason: 'stop' | 'length' | null } | null, usage?: OpenAiUsage | null) {
  return {
    id: v.id,
    object: 'chat.completion.chunk' as const,
    created: v.created,
    model: v.model,
    system_fingerprint: null,
    choices: choice ? [{ index: 0, delta: choice.delta, logprobs: null, finish_reason: choice.finishReason }] : [],
    ...(usage !== undefined ? { usage } : {}),
  };
}

export const sseFrame = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
export const SSE_DONE = 'data: [DONE]\n\n';
