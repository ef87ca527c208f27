import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter } from 'react-router';
import type { ChatMessageItem, ConversationItem } from '@suanli/contract/llm';
import { FeedbackHost } from '../../modules/FeedbackHost.tsx';
import { TOKEN_KEY } from '../../api/session.ts';
import { TextChatPage } from './TextChatPage.tsx';

const http = vi.hoisted(() => ({ get: vi.fn(), post: vi.fn(), put: vi.fn(), delete: vi.fn() }));
vi.mock('../../api/client.ts', () => ({ http }));

const NOW = '2026-11-23T00:00:00.000Z';
const model = { id: 'm1', name: 'Model One', provider: 'P', description: '', tags: [], contextLength: 2048, inputPrice: 10_000, outputPrice: 20_000 };
const conversation: ConversationItem = { id: 'c0000000-0000-4000-8000-000000000001', title: 'hello', model: 'm1', systemPrompt: '', temperature: 0.7, createdAt: NOW, updatedAt: NOW };
const msg = (id: string, role: 'user' | 'assistant', content: string, extra: Partial<ChatMessageItem> = {}): ChatMessageItem => ({
  id,
  role,
  content,
  model: role === 'assistant' ? 'm1' : null,
  promptTokens: 0,
  completionTokens: 0,
  cost: 0,
  status: 'done',
  error: null,
  createdAt: NOW,
  ...extra,
});

/** A chat stream the test writes to, event by event. */
function openStream() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  const send = (event: string, data: unknown) => controller.enqueue(new TextEncoder().encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
  return { response: new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } }), send, close: () => controller.close(), error: (e: unknown) => controller.error(e) };
}

let saved: ChatMessageItem[] = [];
let balance = 1_000_000;

function renderPage() {
  localStorage.setItem(TOKEN_KEY, 'tok');
  http.get.mockImplementation(async (url: string) => {
    if (url === '/api/v1/llm/model/list') return { list: [model], tags: [] };
    if (url === '/api/v1/llm/conversation/list') return { list: saved.length ? [conversation] : [], total: saved.length ? 1 : 0 };
    if (url === '/api/v1/llm/conversation/messages') return { conversation, list: saved };
    if (url === '/api/v1/user/detail') return { balance, frozenBalance: 0 };
    throw new Error(`unexpected GET ${url}`);
  });
  http.post.mockImplementation(async (url: string) => {
    if (url === '/api/v1/llm/conversation/create') return conversation;
    throw new Error(`unexpected POST ${url}`);
  });
  return render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MemoryRouter initialEntries={['/largeModel/textChat?model=m1']}>
        <FeedbackHost />
        <TextChatPage />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const typeAndEnter = (text: string) => {
  const input = screen.getByTestId('chat-input');
  fireEvent.change(input, { target: { value: text } });
  fireEvent.keyDown(input, { key: 'Enter' });
};

describe('TextChatPage', { timeout: 30_000 }, () => {
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    http.get.mockReset();
    http.post.mockReset();
    saved = [];
    balance = 1_000_000;
    localStorage.clear();
  });

  it('creates a conversation on Enter, streams the answer in, then shows its tokens, cost and the new balance', async () => {
    const stream = openStream();
    const fetchMock = vi.fn(async () => stream.response);
    vi.stubGlobal('fetch', fetchMock);
    renderPage();
    await waitFor(() => expect(screen.getByTestId('chat-balance').textContent).toBe('¥100.00'));
    await waitFor(() => expect(screen.getByTestId('chat-send')).toHaveProperty('disabled', true));
    typeAndEnter('hello');
    await waitFor(() => expect(fetchMock).toHaveBeenCalled());
    expect(http.post).toHaveBeenCalledWith('/api/v1/llm/conversation/create', expect.objectContaining({ model: 'm1', title: 'hello' }));
    expect(JSON.parse((fetchMock.mock.calls[0] as unknown as [string, RequestInit])[1].body as string)).toEqual({ conversationId: conversation.id, content: 'hello' });

    const user = msg('u1', 'user', 'hello');
    stream.send('start', { userMessage: user, assistantMessageId: 'a1' });
    stream.send('delta', { text: 'Hi' });
    await waitFor(() => expect(within(screen.getByTestId('msg-live')).getByTestId('msg-text').textContent).toBe('Hi'));
    expect(screen.getByTestId('chat-stop')).toBeTruthy();
    stream.send('delta', { text: ' there' });
    await waitFor(() => expect(within(screen.getByTestId('msg-live')).getByTestId('msg-text').textContent).toBe('Hi there'));

    const reply = msg('a1', 'assistant', 'Hi there', { promptTokens: 12, completionTokens: 2, cost: 3 });
    saved = [user, reply];
    balance = 999_997;
    stream.send('done', reply);
    stream.close();
    const shown = await screen.findByTestId('msg-assistant');
    expect(within(shown).getByTestId('msg-cost').textContent).toBe('¥0.0003');
    expect(within(shown).getByTestId('msg-tokens').textContent).toContain('12');
    await waitFor(() => expect(screen.getByTestId('chat-balance').textContent).toBe('¥99.9997'));
    expect(screen.queryByTestId('chat-stop')).toBeNull();
  });

  it('stops an answer: the request is aborted and the saved stopped reply replaces the streamed text', async () => {
    const stream = openStream();
    let signal: AbortSignal | undefined;
    vi.stubGlobal('fetch', async (_u: string, init: RequestInit) => {
      signal = init.signal ?? undefined;
      signal?.addEventListener('abort', () => stream.error(new DOMException('aborted', 'AbortError')));
      return stream.response;
    });
    renderPage();
    await waitFor(() => expect(screen.getByTestId('chat-balance').textContent).toBe('¥100.00'));
    typeAndEnter('count');
    const user = msg('u1', 'user', 'count');
    await waitFor(() => expect(signal).toBeDefined());
    stream.send('start', { userMessage: user, assistantMessageId: 'a2' });
    stream.send('delta', { text: 'one two' });
    await waitFor(() => expect(within(screen.getByTestId('msg-live')).getByTestId('msg-text').textContent).toBe('one two'));
    saved = [user, msg('a2', 'assistant', 'one two', { status: 'stopped', promptTokens: 5, completionTokens: 2, cost: 1 })];
    fireEvent.click(screen.getByTestId('chat-stop'));
    expect(signal?.aborted).toBe(true);
    const stopped = await screen.findByTestId('msg-assistant', {}, { timeout: 5_000 });
    expect(stopped.getAttribute('data-status')).toBe('stopped');
    expect(within(stopped).getByTestId('msg-cost').textContent).toBe('¥0.0001');
    expect(screen.getByTestId('chat-send')).toBeTruthy();
  });

  it('says when the balance is short, links to recharge, and keeps the message', async () => {
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ code: 402, msg: '余额不足，请先充值', reason: 'INSUFFICIENT_BALANCE' }), { status: 402, headers: { 'Content-Type': 'application/json' } }));
    renderPage();
    await waitFor(() => expect(screen.getByTestId('chat-balance').textContent).toBe('¥100.00'));
    typeAndEnter('hello');
    const alert = await screen.findByTestId('chat-short-balance');
    expect(within(alert).getByTestId('chat-short-recharge').getAttribute('href')).toBe('/recharge/index');
    expect((screen.getByTestId('chat-input') as HTMLTextAreaElement).value).toBe('hello');
    expect(screen.queryByTestId('msg-live')).toBeNull();
  });

  it('Shift+Enter does not send', async () => {
    const fetchMock = vi.fn();
    vi.stubGlobal('fetch', fetchMock);
    renderPage();
    await waitFor(() => expect(screen.getByTestId('chat-balance').textContent).toBe('¥100.00'));
    const input = screen.getByTestId('chat-input');
    fireEvent.change(input, { target: { value: 'line' } });
    fireEvent.keyDown(input, { key: 'Enter', shiftKey: true });
    expect(http.post).not.toHaveBeenCalled();
    expect(fetchMock).not.toHaveBeenCalled();
  });
});
