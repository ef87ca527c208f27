import crypto from 'node:crypto';
import type { z } from 'zod';
import { MAX_CONVERSATIONS, type ChatMessageItem, type ConversationItem, type chatBody, type createConversationBody, type updateConversationBody } from '@suanli/contract/llm';
import type { Db } from '../../db/client.ts';
import type { ChatMessage } from '../../adapters/llm/port.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound } from '../../lib/errors.ts';
import { createChatRepository, type ChatMessageRow, type ConversationRow, type Owner } from './chat.repository.ts';
import { chatConversations } from '../../db/schema/llm.ts';
import { eq } from 'drizzle-orm';
import type { CompletionCaller, CompletionResult, CompletionService, LlmCatalog } from './types.ts';

/** A new conversation's title until its first message names it. */
export const DEFAULT_CONVERSATION_TITLE = '新对话';
/** The first message's first characters become the title. */
export const TITLE_FROM_MESSAGE_CHARS = 30;
/** Tokens left for the answer when the history is cut to fit the context (characters ≈ 3 × tokens). */
export const ANSWER_RESERVE_TOKENS = 512;
export const CHARS_PER_TOKEN = 3;

export const ChatMessages = {
  conversationMissing: '对话不存在',
  tooMany: `最多保留 ${MAX_CONVERSATIONS} 个对话，请先删除不需要的对话`,
  modelUnavailable: (model: string) => `模型 ${model} 不存在或未上架，请选择其他模型`,
  modelGone: (model: string) => `对话使用的模型 ${model} 已下架，请在对话设置中更换模型`,
  busy: '该对话正在回复中，请等待回复结束或先停止',
  nothingToRegenerate: '对话中还没有可以重新生成回复的消息',
  regenerateWithContent: '重新生成时不能同时发送新消息',
  unsavable: '消息包含无法保存的字符（NUL）',
  upstreamFailed: '模型服务暂时不可用',
} as const;

export type ChatStart = { userMessage: ChatMessageItem | null; assistantMessageId: string };
export type ChatIo = {
  signal: AbortSignal;
  /** Called once, synchronously, before the first delta (or before the reply is saved when none came). */
  onStart: (start: ChatStart) => void;
  onDelta: (text: string) => void;
};

const iso = (d: Date) => d.toISOString();

export function toConversationItem(r: ConversationRow): ConversationItem {
  return { id: r.id, title: r.title, model: r.model, systemPrompt: r.systemPrompt, temperature: r.temperature / 100, createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt) };
}

export function toMessageItem(r: ChatMessageRow): ChatMessageItem {
  return {
    id: r.id,
    role: r.role,
    content: r.content,
    model: r.model,
    promptTokens: r.promptTokens,
    completionTokens: r.completionTokens,
    cost: r.cost,
    status: r.status,
    error: r.error,
    createdAt: iso(r.createdAt),
  };
}

/** The first characters of a message as a one-line title. */
export function titleFrom(content: string): string {
  // eslint-disable-next-line no-control-regex
  const line = content.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/\s+/g, ' ').trim();
  const chars = Array.from(line);
  if (chars.length === 0) return DEFAULT_CONVERSATION_TITLE;
  return chars.length > TITLE_FROM_MESSAGE_CHARS ? `${chars.slice(0, TITLE_FROM_MESSAGE_CHARS).join('')}…` : line;
}

/**
 * The system prompt and as much of the history as fits in about CHARS_PER_TOKEN × (contextLength −
 * ANSWER_RESERVE_TOKENS) characters: the oldest messages go first, and the kept history never starts
 * with a reply. The last message (the one to answer) is always kept: the completion service refuses
 * with the exact token count when even that doesn't fit.
 */
export function fitHistory(systemPrompt: string, history: ChatMessage[], contextLength: number): ChatMessage[] {
  const budget = CHARS_PER_TOKEN * Math.max(contextLength - ANSWER_RESERVE_TOKENS, Math.floor(contextLength / 2));
  const kept = [...history];
  let chars = systemPrompt.length + kept.reduce((n, m) => n + m.content.length, 0);
  while (kept.length > 1 && chars > budget) chars -= kept.shift()!.content.length;
  while (kept.length > 1 && kept[0]!.role === 'assistant') kept.shift();
  return systemPrompt ? [{ role: 'system', content: systemPrompt }, ...kept] : kept;
}

/** A reply that goes into the next prompt: not an error, not empty. */
const inHistory = (m: ChatMessageRow) => m.role === 'user' || (m.status !== 'error' && m.content.length > 0);

const statusOf = (r: CompletionResult['finishReason']): ChatMessageItem['status'] => (r === 'stop' ? 'done' : r === 'aborted' ? 'stopped' : r);

/**
 * The console's text chat: conversations kept per user, answered through the CompletionService
 * (billed like the gateway, source 'chat', no key). One answer in flight per conversation in this
 * process.
 */
export function createChatService(deps: { db: Db; clock: Clock; catalog: LlmCatalog; completions: CompletionService }) {
  const repo = createChatRepository(deps.db);
  const inFlight = new Set<string>();

  async function owned(o: Owner, id: string): Promise<ConversationRow> {
    const row = await repo.find(o, id);
    if (!row) throw notFound(ChatMessages.conversationMissing);
    return row;
  }

  async function publishedModel(tenantId: number, model: string) {
    const m = await deps.catalog.resolveModel(tenantId, model);
    if (!m) throw badRequest(ChatMessages.modelUnavailable(model));
    return m;
  }

  return {
    async list(o: Owner): Promise<ConversationItem[]> {
      return (await repo.list(o)).map(toConversationItem);
    },

    async create(o: Owner, body: z.output<typeof createConversationBody>): Promise<ConversationItem> {
      const model = await publishedModel(o.tenantId, body.model);
      const row = await repo.insertCapped(
        o,
        {
          title: body.title ?? DEFAULT_CONVERSATION_TITLE,
          model: model.modelId,
          systemPrompt: body.systemPrompt ?? '',
          temperature: body.temperature === undefined ? 70 : Math.round(body.temperature * 100),
          at: deps.clock(),
        },
        MAX_CONVERSATIONS,
      );
      if (row === 'full') throw conflict(ChatMessages.tooMany);
      return toConversationItem(row);
    },

    async update(o: Owner, body: z.output<typeof updateConversationBody>): Promise<ConversationItem> {
      await owned(o, body.id);
      if (body.model !== undefined) await publishedModel(o.tenantId, body.model);
      const row = await repo.update(o, body.id, {
        ...(body.title !== undefined ? { title: body.title } : {}),
        ...(body.model !== undefined ? { model: body.model } : {}),
        ...(body.systemPrompt !== undefined ? { systemPrompt: body.systemPrompt } : {}),
        ...(body.temperature !== undefined ? { temperature: Math.round(body.temperature * 100) } : {}),
        updatedAt: deps.clock(),
      });
      if (!row) throw notFound(ChatMessages.conversationMissing);
      return toConversationItem(row);
    },

    async remove(o: Owner, id: string): Promise<void> {
      if (!(await repo.remove(o, id))) throw notFound(ChatMessages.conversationMissing);
    },

    async messages(o: Owner, id: string): Promise<{ conversation: ConversationItem; list: ChatMessageItem[] }> {
      const conv = await owned(o, id);
      return { conversation: toConversationItem(conv), list: (await repo.messages(conv.id)).map(toMessageItem) };
    },

    /** Whether a conversation is being answered in this process (tests). */
    busy: (conversationId: string) => inFlight.has(conversationId),

    /**
     * Sends a message (or, with `regenerate`, answers the last user message again) and returns the
     * saved reply. Throws (AppError, LlmError) before `io.onStart` when refused: nothing is kept then
     * (the user message saved for the call is removed again). After the start every ending is a saved
     * reply: done, length, stopped (the signal aborted: charged for what was generated) or error.
     */
    async send(o: Owner, body: z.output<typeof chatBody>, io: ChatIo): Promise<ChatMessageItem> {
      const content = body.content ?? '';
      if (body.regenerate === true && content.length > 0) throw badRequest(ChatMessages.regenerateWithContent);
      if (content.includes('\u0000')) throw badRequest(ChatMessages.unsavable);
      const conv = await owned(o, body.conversationId);
      if (inFlight.has(conv.id)) throw conflict(ChatMessages.busy);
      inFlight.add(conv.id);
      try {
        const model = await deps.catalog.resolveModel(o.tenantId, conv.model);
        if (!model) throw badRequest(ChatMessages.modelGone(conv.model));
        const history = await repo.messages(conv.id);

        let prompt: ChatMessageRow[];
        let replaced: string[] = [];
        let userMessage: ChatMessageRow | null = null;
        let undo: () => Promise<void> = async () => {};
        if (body.regenerate === true) {
          const lastUser = history.findLastIndex((m) => m.role === 'user');
          if (lastUser < 0) throw badRequest(ChatMessages.nothingToRegenerate);
          prompt = history.slice(0, lastUser + 1);
          replaced = history.slice(lastUser + 1).map((m) => m.id);
        } else {
          const at = deps.clock();
          const retitle = conv.title === DEFAULT_CONVERSATION_TITLE && !history.some((m) => m.role === 'user');
          const saved = await deps.db.transaction(async (tx) => {
            const m = await repo.insertMessage({ conversationId: conv.id, role: 'user', content, createdAt: at }, tx);
            await repo.update(o, conv.id, { updatedAt: at, ...(retitle ? { title: titleFrom(content) } : {}) }, tx);
            return m;
          });
          userMessage = saved;
          prompt = [...history, saved];
          undo = () =>
            deps.db.transaction(async (tx) => {
              await repo.deleteMessage(conv.id, saved.id, tx);
              await tx
                .update(chatConversations)
                .set({ title: conv.title, updatedAt: conv.updatedAt })
                .where(eq(chatConversations.id, conv.id));
            });
        }

        const messages = fitHistory(
          conv.systemPrompt,
          prompt.filter(inHistory).map((m) => ({ role: m.role, content: m.content })),
          model.contextLength,
        );
        const caller: CompletionCaller = { tenantId: o.tenantId, userId: o.userId, keyId: null, quota: null, limits: [], source: 'chat' };
        const assistantMessageId = crypto.randomUUID();
        let started = false;
        const start = () => {
          if (started) return;
          started = true;
          io.onStart({ userMessage: userMessage && toMessageItem(userMessage), assistantMessageId });
        };
        let sofar = '';

        let ending: Pick<ChatMessageRow, 'content' | 'promptTokens' | 'completionTokens' | 'cost' | 'status' | 'error'>;
        try {
          const result = await deps.completions.run(
            caller,
            { model, messages, temperature: conv.temperature / 100, stream: true },
            {
              signal: io.signal,
              onDelta: (text) => {
                start();
                sofar += text;
                io.onDelta(text);
              },
            },
          );
          const status = statusOf(result.finishReason);
          ending = {
            content: result.text,
            promptTokens: result.promptTokens,
            completionTokens: result.completionTokens,
            cost: result.cost,
            status,
            error: status === 'error' ? (result.error?.message ?? ChatMessages.upstreamFailed) : null,
          };
        } catch (err) {
          if (!started) {
            await undo();
            throw err;
          }
          // The service promises not to throw after the first token; if it does, keep what came.
          ending = { content: sofar, promptTokens: 0, completionTokens: 0, cost: 0, status: 'error', error: err instanceof Error && err.name === 'LlmError' ? err.message : ChatMessages.upstreamFailed };
        }
        start();

        const reply = await deps.db.transaction(async (tx) => {
          for (const id of replaced) await repo.deleteMessage(conv.id, id, tx);
          const at = deps.clock();
          const m = await repo.insertMessage({ id: assistantMessageId, conversationId: conv.id, role: 'assistant', model: model.modelId, createdAt: at, ...ending }, tx);
          await repo.update(o, conv.id, { updatedAt: at }, tx);
          return m;
        });
        return toMessageItem(reply);
      } finally {
        inFlight.delete(conv.id);
      }
    },
  };
}
export type ChatService = ReturnType<typeof createChatService>;
