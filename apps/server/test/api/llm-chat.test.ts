import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_CHAT_MESSAGE_CHARS, MAX_CONVERSATIONS, llmCost, type ChatMessageItem, type ConversationItem } from '@suanli/contract/llm';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { engines } from '../helpers/db.ts';
import { createUser } from '../helpers/factories.ts';
import { addModel, addUpstream } from '../helpers/llm.ts';
import { balanceOf, recharge } from '../helpers/metering.ts';
import { createFakeCompletions, type FakeCompletions } from '../fakes/llm-completions.ts';
import { chatConversations, chatMessages, llmModels } from '../../src/db/schema/llm.ts';
import { LlmErrors } from '../../src/modules/llm/errors.ts';
import { fitHistory } from '../../src/modules/llm/chat.service.ts';

type SseEvent = { event: string; data: unknown };

/** Events of an SSE body read whole (inject). */
function parseSse(body: string): SseEvent[] {
  return body
    .split('\n\n')
    .filter((b) => b.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? '';
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? 'null';
      return { event, data: JSON.parse(data) as unknown };
    });
}

/** POST /api/v1/llm/chat over a real socket, reading events as they arrive. */
function openChat(port: number, token: string, body: object) {
  const events: SseEvent[] = [];
  const waiters: Array<() => void> = [];
  let buffer = '';
  let ended = false;
  const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/api/v1/llm/chat', headers: { host: 'localhost', authorization: `Bearer ${token}`, 'content-type': 'application/json', 'accept-encoding': 'gzip, br' } });
  const response = new Promise<http.IncomingMessage>((resolve, reject) => {
    req.on('response', (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let i: number;
        while ((i = buffer.indexOf('\n\n')) >= 0) {
          events.push(...parseSse(buffer.slice(0, i + 2)));
          buffer = buffer.slice(i + 2);
        }
        waiters.splice(0).forEach((w) => w());
      });
      res.on('end', () => {
        ended = true;
        waiters.splice(0).forEach((w) => w());
      });
      resolve(res);
    });
    req.on('error', reject);
  });
  req.end(JSON.stringify(body));
  let read = 0;
  return {
    response,
    /** The next event (waits for it); null once the stream ended without one. */
    async next(): Promise<SseEvent | null> {
      while (read >= events.length && !ended) await new Promise<void>((r) => waiters.push(r));
      return read < events.length ? events[read++]! : null;
    },
    close: () => req.destroy(),
  };
}

describe('fitHistory', () => {
  it('drops the oldest messages beyond about 3 × (context − 512) characters, never the last, never starting with a reply', () => {
    const h = [
      { role: 'user' as const, content: 'a'.repeat(1000) },
      { role: 'assistant' as const, content: 'b'.repeat(1000) },
      { role: 'user' as const, content: 'c'.repeat(500) },
      { role: 'assistant' as const, content: 'd'.repeat(500) },
      { role: 'user' as const, content: 'e'.repeat(100) },
    ];
    // 3 × (1024 − 512) = 1536 characters: the last three fit with the system prompt.
    expect(fitHistory('sys', h, 1024).map((m) => m.content[0])).toEqual(['s', 'c', 'd', 'e']);
    // Everything fits.
    expect(fitHistory('', h, 4096)).toHaveLength(5);
    // 3 × 512 (half the context when the reserve would leave less): only the question fits.
    expect(fitHistory('', [...h, { role: 'assistant', content: 'f'.repeat(2000) }, { role: 'user', content: 'g'.repeat(3000) }], 1024).map((m) => m.content[0])).toEqual(['g']);
  });
});

describe.each(engines)('console chat (%s)', (engine) => {
  let t: TestApp;
  let fake: FakeCompletions;
  let model: string;
  let model2: string;
  let unpublished: string;
  let port: number;

  beforeAll(async () => {
    fake = createFakeCompletions();
    t = await buildTestApp({ engine, overrides: { llmCompletions: fake } });
    const tenant = await t.container.tenants.resolve('localhost');
    const upstreamId = await addUpstream(t, { tenantId: tenant.id });
    model = (await addModel(t, { tenantId: tenant.id, upstreamId, inputPrice: 20_000, outputPrice: 60_000 })).modelId;
    model2 = (await addModel(t, { tenantId: tenant.id, upstreamId })).modelId;
    unpublished = (await addModel(t, { tenantId: tenant.id, upstreamId, published: false })).modelId;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t?.close();
  });

  const post = (token: string | undefined, url: string, payload: object, host?: string) => t.request({ method: 'POST', url, token, payload, host });
  const create = async (token: string, body: object = {}) => {
    const res = await post(token, '/api/v1/llm/conversation/create', { model, ...body });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ data: ConversationItem }>().data;
  };
  const messages = async (token: string, id: string) => {
    const res = await t.request({ method: 'GET', url: `/api/v1/llm/conversation/messages?id=${id}`, token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ data: { conversation: ConversationItem; list: ChatMessageItem[] } }>().data;
  };
  /** A whole chat answer through inject: status and events. */
  const chat = async (token: string, body: object) => {
    const res = await post(token, '/api/v1/llm/chat', body);
    return { res, events: res.statusCode === 200 ? parseSse(res.body) : [] };
  };

  it('creates, lists, updates and deletes conversations; the model must be published', async () => {
    const { token } = await createUser(t);
    const a = await create(token);
    expect(a).toMatchObject({ title: '新对话', model, systemPrompt: '', temperature: 0.7 });
    const b = await create(token, { title: '翻译', systemPrompt: '你是翻译', temperature: 0.2 });
    expect(b).toMatchObject({ title: '翻译', systemPrompt: '你是翻译', temperature: 0.2 });

    const list = await t.request({ method: 'GET', url: '/api/v1/llm/conversation/list', token });
    expect(list.json().data.total).toBe(2);

    for (const m of ['no-such-model', unpublished]) {
      const bad = await post(token, '/api/v1/llm/conversation/create', { model: m });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().msg).toBe(`模型 ${m} 不存在或未上架，请选择其他模型`);
    }

    const up = await post(token, '/api/v1/llm/conversation/update', { id: a.id, title: '改名', model: model2, temperature: 1.5, systemPrompt: '简洁' });
    expect(up.statusCode).toBe(200);
    expect(up.json().data).toMatchObject({ id: a.id, title: '改名', model: model2, temperature: 1.5, systemPrompt: '简洁' });
    const badModel = await post(token, '/api/v1/llm/conversation/update', { id: a.id, model: unpublished });
    expect(badModel.statusCode).toBe(400);
    expect(badModel.json().msg).toContain(unpublished);
    // Most recently changed first.
    const after = (await t.request({ method: 'GET', url: '/api/v1/llm/conversation/list', token })).json<{ data: { list: ConversationItem[] } }>().data.list;
    expect(after.map((c) => c.id)).toEqual([a.id, b.id]);

    expect((await chat(token, { conversationId: a.id, content: '你好' })).res.statusCode).toBe(200);
    const del = await post(token, '/api/v1/llm/conversation/delete', { id: a.id });
    expect(del.statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: `/api/v1/llm/conversation/messages?id=${a.id}`, token })).statusCode).toBe(404);
    expect(await t.container.db.select().from(chatMessages).where(eq(chatMessages.conversationId, a.id))).toEqual([]);
    expect((await post(token, '/api/v1/llm/conversation/delete', { id: a.id })).statusCode).toBe(404);
  });

  it('refuses bad input with 400 in Chinese and callers without a session with 401', async () => {
    const { token } = await createUser(t);
    const c = await create(token);
    const callsBefore = fake.calls.length;
    const cases: [string, object, RegExp][] = [
      ['/api/v1/llm/conversation/create', { model: '' }, /请选择模型/],
      ['/api/v1/llm/conversation/create', { model, temperature: 3 }, /温度应在 0 到 2 之间/],
      ['/api/v1/llm/conversation/create', { model, systemPrompt: 'x'.repeat(8001) }, /系统提示词不能超过/],
      ['/api/v1/llm/conversation/create', { model, extra: 1 }, /.+/],
      ['/api/v1/llm/conversation/update', { id: 'nope' }, /对话 ID 格式不正确/],
      ['/api/v1/llm/chat', { conversationId: c.id }, /请输入消息/],
      ['/api/v1/llm/chat', { conversationId: c.id, content: '   ' }, /请输入消息/],
      ['/api/v1/llm/chat', { conversationId: c.id, content: 'x'.repeat(MAX_CHAT_MESSAGE_CHARS + 1) }, /消息不能超过 32000 个字符/],
      ['/api/v1/llm/chat', { conversationId: c.id, content: 'a\u0000b' }, /空字符/],
      ['/api/v1/llm/chat', { conversationId: c.id, content: 'hi', regenerate: true }, /重新生成时不能同时发送新消息/],
      ['/api/v1/llm/chat', { conversationId: c.id, regenerate: true }, /还没有可以重新生成/],
      ['/api/v1/llm/chat', { conversationId: 'x', content: 'hi' }, /对话 ID 格式不正确/],
    ];
    for (const [url, body, msg] of cases) {
      const res = await post(token, url, body);
      expect(res.statusCode, `${url} ${JSON.stringify(body).slice(0, 80)}`).toBe(400);
      expect(res.json()).toMatchObject({ code: 400, data: null });
      expect(res.json().msg).toMatch(msg);
    }
    expect((await t.request({ method: 'GET', url: '/api/v1/llm/conversation/messages?id=1', token })).statusCode).toBe(400);
    expect((await post(undefined, '/api/v1/llm/chat', { conversationId: c.id, content: 'hi' })).statusCode).toBe(401);
    expect((await t.request({ method: 'GET', url: '/api/v1/llm/conversation/list' })).statusCode).toBe(401);
    expect((await messages(token, c.id)).list).toEqual([]);
    expect(fake.calls.length).toBe(callsBefore);
  });

  it("answers 404 for another user's or tenant's conversation exactly like a missing one", async () => {
    const owner = await createUser(t);
    const other = await createUser(t);
    const stranger = await createUser(t, { host: '127.0.0.1' });
    const c = await create(owner.token);
    const missing = '00000000-0000-4000-8000-000000000000';
    const calls = (id: string): [string, string, object | undefined][] => [
      ['GET', `/api/v1/llm/conversation/messages?id=${id}`, undefined],
      ['POST', '/api/v1/llm/conversation/update', { id, title: 'x' }],
      ['POST', '/api/v1/llm/conversation/delete', { id }],
      ['POST', '/api/v1/llm/chat', { conversationId: id, content: 'hi' }],
    ];
    const before = fake.calls.length;
    for (const [who, host] of [
      [other.token, 'localhost'],
      [stranger.token, '127.0.0.1'],
    ] as const) {
      for (const [[method, url, payload], [, missUrl, missPayload]] of calls(c.id).map((x, i) => [x, calls(missing)[i]!] as const)) {
        const foreign = await t.request({ method: method as 'GET', url, payload, token: who, host });
        const absent = await t.request({ method: method as 'GET', url: missUrl, payload: missPayload, token: who, host });
        expect(foreign.statusCode, url).toBe(404);
        expect({ ...foreign.json(), requestId: 0 }).toEqual({ ...absent.json(), requestId: 0 });
      }
    }
    expect(fake.calls.length).toBe(before);
    expect((await messages(owner.token, c.id)).conversation.title).toBe('新对话');
  });

  it(`keeps at most ${MAX_CONVERSATIONS} conversations per user (409)`, async () => {
    const { token, user } = await createUser(t);
    await t.container.db
      .insert(chatConversations)
      .values(Array.from({ length: MAX_CONVERSATIONS - 1 }, (_, i) => ({ tenantId: user.tenantId, userId: user.id, title: `c${i}`, model })));
    await create(token);
    const over = await post(token, '/api/v1/llm/conversation/create', { model });
    expect(over.statusCode).toBe(409);
    expect(over.json().msg).toBe(`最多保留 ${MAX_CONVERSATIONS} 个对话，请先删除不需要的对话`);
    // Another user is not affected.
    await create((await createUser(t)).token);
  });

  it('streams start, deltas and done; saves both messages with tokens and cost; names the conversation from the first message', async () => {
    const { token, user } = await createUser(t);
    const c = await create(token, { systemPrompt: '你是助手', temperature: 0.3 });
    const first = '请帮我把这段很长很长的文字翻译成英文，并且解释其中每一个成语的来历和用法，谢谢';
    fake.script({ parts: ['Hello', ', ', 'world'] });
    const { res, events } = await chat(token, { conversationId: c.id, content: first });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(events.map((e) => e.event)).toEqual(['start', 'delta', 'delta', 'delta', 'done']);
    const start = events[0]!.data as { userMessage: ChatMessageItem; assistantMessageId: string };
    expect(start.userMessage).toMatchObject({ role: 'user', content: first, status: 'done' });
    expect(events.slice(1, 4).map((e) => (e.data as { text: string }).text)).toEqual(['Hello', ', ', 'world']);

    const call = fake.calls.at(-1)!;
    expect(call.caller).toEqual({ tenantId: user.tenantId, userId: user.id, keyId: null, quota: null, limits: [], source: 'chat' });
    expect(call.input).toMatchObject({ temperature: 0.3, stream: true, messages: [{ role: 'system', content: '你是助手' }, { role: 'user', content: first }] });
    expect(call.input.model.modelId).toBe(model);

    const promptTokens = Math.ceil(('你是助手'.length + first.length) / 4);
    const done = events[4]!.data as ChatMessageItem;
    expect(done).toMatchObject({ id: start.assistantMessageId, role: 'assistant', content: 'Hello, world', model, status: 'done', error: null, promptTokens, completionTokens: 3, cost: llmCost(promptTokens, 3, 20_000, 60_000) });

    const saved = await messages(token, c.id);
    expect(saved.list.map((m) => [m.role, m.content])).toEqual([
      ['user', first],
      ['assistant', 'Hello, world'],
    ]);
    expect(saved.list[1]).toEqual(done);
    expect(saved.conversation.title).toBe(`${Array.from(first).slice(0, 30).join('')}…`);

    // The second message keeps the title and carries the history.
    await chat(token, { conversationId: c.id, content: '再来' });
    expect((await messages(token, c.id)).conversation.title).toBe(saved.conversation.title);
    expect(fake.calls.at(-1)!.input.messages.map((m) => m.content)).toEqual(['你是助手', first, 'Hello, world', '再来']);
  });

  it('a failure after the first token is saved as an error reply, left out of the next prompt; length is saved as length', async () => {
    const { token } = await createUser(t);
    const c = await create(token, { title: '固定标题' });
    fake.script({ parts: ['半'], failWith: LlmErrors.upstreamTimeout() }, { parts: ['长'], finishReason: 'length' }, {});
    const failed = await chat(token, { conversationId: c.id, content: '一' });
    expect(failed.events.at(-1)).toMatchObject({ event: 'done', data: { status: 'error', content: '半', error: '模型服务响应超时', completionTokens: 1 } });
    const long = await chat(token, { conversationId: c.id, content: '二' });
    expect(long.events.at(-1)).toMatchObject({ event: 'done', data: { status: 'length', content: '长' } });
    await chat(token, { conversationId: c.id, content: '三' });
    expect(fake.calls.at(-1)!.input.messages.map((m) => m.content)).toEqual(['一', '二', '长', '三']);
    // An explicit title is not replaced by the first message.
    expect((await messages(token, c.id)).conversation.title).toBe('固定标题');
  });

  it('regenerate replaces the last reply and answers the last user message again', async () => {
    const { token } = await createUser(t);
    const c = await create(token);
    fake.script({ parts: ['第一个回答'] }, { parts: ['第二个回答'] });
    await chat(token, { conversationId: c.id, content: '问题' });
    const old = (await messages(token, c.id)).list;
    const again = await chat(token, { conversationId: c.id, regenerate: true });
    expect(again.res.statusCode).toBe(200);
    expect(again.events[0]!.data).toMatchObject({ userMessage: null });
    expect(fake.calls.at(-1)!.input.messages).toEqual([{ role: 'user', content: '问题' }]);
    const now = (await messages(token, c.id)).list;
    expect(now.map((m) => [m.role, m.content])).toEqual([
      ['user', '问题'],
      ['assistant', '第二个回答'],
    ]);
    expect(now[0]!.id).toBe(old[0]!.id);
    expect(now[1]!.id).not.toBe(old[1]!.id);
    expect(now[1]!.id).toBe((again.events[0]!.data as { assistantMessageId: string }).assistantMessageId);

    // Refused before the start, a regenerate keeps the old reply.
    fake.script({ refuse: LlmErrors.busy() });
    expect((await chat(token, { conversationId: c.id, regenerate: true })).res.statusCode).toBe(429);
    expect((await messages(token, c.id)).list).toEqual(now);
  });

  it('402 before the stream: the envelope with INSUFFICIENT_BALANCE, nothing kept', async () => {
    const { token } = await createUser(t);
    const c = await create(token);
    fake.script({ refuse: LlmErrors.insufficientBalance() });
    const res = await post(token, '/api/v1/llm/chat', { conversationId: c.id, content: '你好' });
    expect(res.statusCode).toBe(402);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toMatchObject({ code: 402, msg: '余额不足，请先充值', data: null, reason: 'INSUFFICIENT_BALANCE' });
    const after = await messages(token, c.id);
    expect(after.list).toEqual([]);
    expect(after.conversation.title).toBe('新对话');

    fake.script({ refuse: LlmErrors.contextTooLong(9000, 4096) });
    const long = await post(token, '/api/v1/llm/chat', { conversationId: c.id, content: '你好' });
    expect(long.statusCode).toBe(400);
    expect(long.json().msg).toBe('输入约 9000 个 token，超过模型的上下文长度 4096');
    expect(long.json().reason).toBeUndefined();
  });

  it('a conversation whose model was taken down answers 400 naming it', async () => {
    const { token, user } = await createUser(t);
    const upstreamId = await addUpstream(t, { tenantId: user.tenantId });
    const temp = await addModel(t, { tenantId: user.tenantId, upstreamId });
    const c = await create(token, { model: temp.modelId });
    await t.container.db.update(llmModels).set({ published: false }).where(eq(llmModels.id, temp.dbId));
    t.container.llmCatalog.changed(user.tenantId);
    const res = await post(token, '/api/v1/llm/chat', { conversationId: c.id, content: '你好' });
    expect(res.statusCode).toBe(400);
    expect(res.json().msg).toBe(`对话使用的模型 ${temp.modelId} 已下架，请在对话设置中更换模型`);
    expect((await messages(token, c.id)).list).toEqual([]);
  });

  it('over HTTP: each delta arrives as it is generated, uncompressed', async () => {
    const { token } = await createUser(t);
    const c = await create(token);
    let seen!: () => void;
    const clientSawFirst = new Promise<void>((r) => (seen = r));
    // The rest is generated only once the client has read the first delta: a buffered stream never gets there.
    fake.script({ parts: ['第一段', () => clientSawFirst, '第二段'] });
    const s = openChat(port, token, { conversationId: c.id, content: '讲个故事' });
    const res = await s.response;
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(res.headers['content-encoding']).toBeUndefined();
    // The security headers set before the reply was hijacked are kept.
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect((await s.next())?.event).toBe('start');
    expect(await s.next()).toEqual({ event: 'delta', data: { text: '第一段' } });
    seen();
    expect(await s.next()).toEqual({ event: 'delta', data: { text: '第二段' } });
    expect(await s.next()).toMatchObject({ event: 'done', data: { content: '第一段第二段', status: 'done' } });
    expect(await s.next()).toBeNull();
  });

  it('over HTTP: closing the request stops the answer, saved as stopped and charged for what came; one answer at a time', async () => {
    const { token } = await createUser(t);
    const c = await create(token);
    fake.script({ parts: ['一', '二'], hang: true });
    const s = openChat(port, token, { conversationId: c.id, content: '长篇' });
    expect((await s.next())?.event).toBe('start');
    expect((await s.next())?.data).toEqual({ text: '一' });
    expect((await s.next())?.data).toEqual({ text: '二' });

    const second = await post(token, '/api/v1/llm/chat', { conversationId: c.id, content: '插队' });
    expect(second.statusCode).toBe(409);
    expect(second.json().msg).toBe('该对话正在回复中，请等待回复结束或先停止');

    s.close();
    await vi.waitFor(() => expect(t.container.llmChat.busy(c.id)).toBe(false), { timeout: 5_000, interval: 10 });
    const list = (await messages(token, c.id)).list;
    expect(list.map((m) => [m.role, m.content, m.status])).toEqual([
      ['user', '长篇', 'done'],
      ['assistant', '一二', 'stopped'],
    ]);
    const promptTokens = Math.ceil('长篇'.length / 4);
    expect(list[1]).toMatchObject({ promptTokens, completionTokens: 2, cost: llmCost(promptTokens, 2, 20_000, 60_000) });

    // The conversation takes messages again.
    expect((await chat(token, { conversationId: c.id, content: '继续' })).res.statusCode).toBe(200);
  });
});

// Not engine-specific: one app on PGlite.
describe('console chat through the real completion pipeline', () => {
  it('an upstream that refuses the connection answers 502, keeps nothing and charges nothing', async () => {
    const bare = await buildTestApp();
    try {
      const tenant = await bare.container.tenants.resolve('localhost');
      const m = await addModel(bare, { tenantId: tenant.id, upstreamId: await addUpstream(bare, { tenantId: tenant.id }) });
      const { token, user } = await createUser(bare);
      await recharge(bare, user, 10_000);
      const c = (await bare.request({ method: 'POST', url: '/api/v1/llm/conversation/create', token, payload: { model: m.modelId } })).json<{ data: ConversationItem }>().data;
      // The factory's upstream is http://127.0.0.1:9/v1: nothing listens there.
      const res = await bare.request({ method: 'POST', url: '/api/v1/llm/chat', token, payload: { conversationId: c.id, content: 'hi' } });
      expect(res.statusCode).toBe(502);
      expect(res.json()).toMatchObject({ code: 502, msg: '模型服务暂时不可用' });
      const kept = await bare.request({ method: 'GET', url: `/api/v1/llm/conversation/messages?id=${c.id}`, token });
      expect(kept.json().data.list).toEqual([]);
      expect(await balanceOf(bare.container.db, user.id)).toBe(10_000);
      expect(await bare.container.ledger.check()).toEqual([]);
    } finally {
      await bare.close();
    }
  });
});
