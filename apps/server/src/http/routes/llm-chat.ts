import { z } from 'zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { okEnvelope } from '@suanli/contract/envelope';
import { ErrorReason } from '@suanli/contract/errors';
import {
  chatBody,
  conversationIdBody,
  conversationItem,
  conversationList,
  conversationMessages,
  conversationMessagesQuery,
  createConversationBody,
  updateConversationBody,
  usageQuery,
  usageStats,
} from '@suanli/contract/llm';
import type { App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import { ownerOf } from '../plugins/auth.ts';
import type { ChatService } from '../../modules/llm/chat.service.ts';
import { DEFAULT_USAGE_TIME_ZONE, type UsageService } from '../../modules/llm/usage.service.ts';
import { LlmError } from '../../modules/llm/errors.ts';

/** Per client IP and process, like the other limits (RATE_LIMITS): a person sends a few messages a minute. */
export const CHAT_RATE_LIMIT = { max: 60, timeWindow: '1 minute' } as const;
export const USAGE_EXPORT_RATE_LIMIT = { max: 30, timeWindow: '1 minute' } as const;

const chatTags = ['大模型对话'];
const usageTags = ['大模型用量'];
const security = [{ bearer: [] }];

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** An LlmError refused before the stream started: the usual envelope, 402 with the recharge reason. */
function sendLlmError(req: FastifyRequest, reply: FastifyReply, err: LlmError) {
  const reason = err.status === 402 ? ErrorReason.InsufficientBalance : undefined;
  return reply.status(err.status).send({ code: err.status, msg: err.message, data: null, requestId: req.id, ...(reason ? { reason } : {}) });
}

/** Issue #9: the console's text chat (conversations, a streamed answer) and the usage statistics. */
export function llmChatRoutes(app: App, chat: ChatService, usage: UsageService) {
  app.get(
    '/api/v1/llm/conversation/list',
    { onRequest: app.requireUser, schema: { tags: chatTags, summary: '我的对话列表（最近活跃在前）', security, response: { 200: okEnvelope(conversationList) } } },
    async (req) => {
      const list = await chat.list(ownerOf(req));
      return ok({ list, total: list.length });
    },
  );

  app.post(
    '/api/v1/llm/conversation/create',
    {
      onRequest: app.requireUser,
      schema: { tags: chatTags, summary: '新建对话（模型须为已上架模型）', security, body: createConversationBody, response: { 200: okEnvelope(conversationItem) } },
    },
    async (req) => ok(await chat.create(ownerOf(req), req.body)),
  );

  app.post(
    '/api/v1/llm/conversation/update',
    {
      onRequest: app.requireUser,
      schema: { tags: chatTags, summary: '修改对话（标题、模型、系统提示词、温度）', security, body: updateConversationBody, response: { 200: okEnvelope(conversationItem) } },
    },
    async (req) => ok(await chat.update(ownerOf(req), req.body)),
  );

  app.post(
    '/api/v1/llm/conversation/delete',
    { onRequest: app.requireUser, schema: { tags: chatTags, summary: '删除对话及其消息', security, body: conversationIdBody, response: { 200: okEnvelope(z.null()) } } },
    async (req) => {
      await chat.remove(ownerOf(req), req.body.id);
      return ok(null);
    },
  );

  app.get(
    '/api/v1/llm/conversation/messages',
    {
      onRequest: app.requireUser,
      schema: { tags: chatTags, summary: '对话的消息（最早在前）', security, querystring: conversationMessagesQuery, response: { 200: okEnvelope(conversationMessages) } },
    },
    async (req) => ok(await chat.messages(ownerOf(req), req.query.id)),
  );

  app.post(
    '/api/v1/llm/chat',
    {
      onRequest: app.requireUser,
      config: { rateLimit: CHAT_RATE_LIMIT },
      schema: {
        tags: chatTags,
        summary: '发送消息，流式返回回复（text/event-stream：start、delta、done、error 事件；断开连接即停止）',
        security,
        body: chatBody,
      },
    },
    async (req, reply) => {
      const controller = new AbortController();
      let streaming = false;
      let finished = false;
      const raw = reply.raw;
      // The client went away (stop button, closed tab) before the answer ended: stop generating.
      raw.on('close', () => {
        if (!finished) controller.abort();
      });
      const write = (chunk: string) => {
        if (!raw.destroyed && !raw.writableEnded) raw.write(chunk);
      };
      try {
        const done = await chat.send(ownerOf(req), req.body, {
          signal: controller.signal,
          onStart: (start) => {
            // Written straight to the socket: no compression, encryption or idempotency capture,
            // each event leaves as soon as it is written.
            reply.hijack();
            streaming = true;
            if (raw.destroyed) return;
            raw.writeHead(200, {
              ...(reply.getHeaders() as Record<string, string>),
              'content-type': 'text/event-stream; charset=utf-8',
              'cache-control': 'no-cache, no-transform',
              'x-accel-buffering': 'no',
              'x-content-type-options': 'nosniff',
              connection: 'keep-alive',
            });
            raw.flushHeaders();
            write(sse('start', start));
          },
          onDelta: (text) => write(sse('delta', { text })),
        });
        write(sse('done', done));
      } catch (err) {
        if (!streaming) {
          finished = true;
          if (err instanceof LlmError) return sendLlmError(req, reply, err);
          throw err;
        }
        req.log.error({ err }, 'chat failed after the stream started');
        write(sse('error', { msg: err instanceof LlmError ? err.message : '回复保存失败，请稍后重试', reason: null }));
      }
      finished = true;
      raw.end();
      return reply;
    },
  );

  app.post(
    '/api/v1/llm/usage/stats',
    {
      onRequest: app.requireUser,
      schema: { tags: usageTags, summary: '用量统计：按日（所选时区）、模型、密钥分组，含合计', security, body: usageQuery, response: { 200: okEnvelope(usageStats) } },
    },
    async (req) => ok(await usage.stats(ownerOf(req), req.body)),
  );

  app.get(
    '/api/v1/llm/usage/export',
    {
      onRequest: app.requireUser,
      config: { rateLimit: USAGE_EXPORT_RATE_LIMIT },
      schema: { tags: usageTags, summary: '导出用量统计（CSV，UTF-8 带 BOM）', security, querystring: usageQuery },
    },
    async (req, reply) => {
      const csv = await usage.csv(ownerOf(req), req.query);
      // The range's days in the zone the rows use (checked by csv()).
      const inZone = new Intl.DateTimeFormat('en-CA', { timeZone: req.query.timeZone ?? DEFAULT_USAGE_TIME_ZONE, year: 'numeric', month: '2-digit', day: '2-digit' });
      const day = (s: string) => inZone.format(new Date(s));
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="llm-usage-${day(req.query.startTime)}-${day(req.query.endTime)}.csv"`)
        .send(csv);
    },
  );
}
