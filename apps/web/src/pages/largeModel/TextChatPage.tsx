import { useCallback, useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { Alert, Button, Drawer, Empty, Flex, Grid, Input, InputNumber, Modal, Popconfirm, Popover, Result, Select, Skeleton, Slider, Tag, Tooltip, Typography } from 'antd';
import { DeleteOutlined, EditOutlined, MenuOutlined, PlusOutlined, RedoOutlined, SendOutlined, SettingOutlined, StopOutlined } from '@ant-design/icons';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import type { ChatMessageItem, ConversationItem } from '@suanli/contract/llm';
import { formatMoney } from '@suanli/domain/format';
import {
  conversationsQuery,
  isInsufficientBalance,
  llmKeys,
  messagesQuery,
  modelsQuery,
  streamChat,
  useCreateConversation,
  useDeleteConversation,
  useRefreshBalance,
  useUpdateConversation,
} from '../../api/queries/llm.ts';
import { userDetailQuery } from '../../api/queries/user.ts';
import { ApiError, getErrorMessage } from '../../api/errors.ts';
import { useFeedback } from '../../modules/feedback.ts';
import { useT } from '../../locales/i18n.ts';
import { pathOf } from '../../route-table.ts';
import { ServerText } from '../market/ServerText.tsx';
import { LlmShell } from './LlmShell.tsx';
import { Markdown } from './Markdown.tsx';
import { formatCount, titleFrom } from './helpers.ts';
import styles from './llm.module.css';

const DEFAULT_TEMPERATURE = 0.7;
/** How long the page waits for a stopped reply to be saved before it lets go of what it showed. */
const SAVE_WAIT_MS = 10_000;

/** The answer being streamed, until the saved reply is in the conversation's messages. */
type Live = {
  conversationId: string;
  /** The question as typed (replaced by the saved one when the stream starts); null when regenerating. */
  userMessage: ChatMessageItem | null;
  assistantId: string | null;
  text: string;
  state: 'streaming' | 'ended';
  regenerate: boolean;
  /** The saved reply from the done event (its tokens and cost). */
  final: ChatMessageItem | null;
  endedAt: number;
};

type ChatError = { msg: string; short: boolean };

const localUserMessage = (content: string): ChatMessageItem => ({
  id: 'pending-user',
  role: 'user',
  content,
  model: null,
  promptTokens: 0,
  completionTokens: 0,
  cost: 0,
  status: 'done',
  error: null,
  createdAt: new Date().toISOString(),
});

function ReplyMeta({ m }: { m: ChatMessageItem }) {
  const { t } = useT();
  return (
    <div className={styles.meta} data-testid="msg-meta">
      {m.model && <span className={styles.modelId}>{m.model}</span>}
      <span data-testid="msg-tokens">{t('llm.chat.tokens', { in: formatCount(m.promptTokens), out: formatCount(m.completionTokens) })}</span>
      <span>
        {t('llm.chat.cost')} <span data-testid="msg-cost">{formatMoney(m.cost)}</span>
      </span>
      {m.status === 'stopped' && <Tag style={{ margin: 0 }}>{t('llm.chat.statuses.stopped')}</Tag>}
      {m.status === 'length' && <Tag color="gold" style={{ margin: 0 }}>{t('llm.chat.statuses.length')}</Tag>}
      {m.status === 'error' && (
        <Tag color="red" style={{ margin: 0 }}>
          {t('llm.chat.statuses.error')}
        </Tag>
      )}
    </div>
  );
}

function Message({ m, live, saving, last, onRegenerate, busy }: { m: ChatMessageItem; live?: boolean; saving?: boolean; last?: boolean; onRegenerate?: () => void; busy?: boolean }) {
  const { t } = useT();
  if (m.role === 'user')
    return (
      <div className={`${styles.msg} ${styles.msgUser}`} data-testid="msg-user">
        <div className={styles.bubble}>
          <span className="sr-only">{t('llm.chat.you')}: </span>
          {m.content}
        </div>
      </div>
    );
  return (
    <div className={styles.msg} data-testid={live || saving ? 'msg-live' : 'msg-assistant'} data-status={live ? 'streaming' : saving ? 'saving' : m.status} data-message-id={m.id}>
      <div className={`${styles.bubble} ${styles.assistant}`}>
        <span className="sr-only">{t('llm.chat.assistant')}: </span>
        <div data-testid="msg-text" className={live ? styles.cursor : undefined}>
          {m.content ? <Markdown text={m.content} /> : live ? <Typography.Text type="secondary">{t('llm.chat.thinking')}</Typography.Text> : null}
        </div>
        {m.status === 'error' && m.error && (
          <Alert type="error" showIcon style={{ marginTop: 8 }} title={<ServerText>{m.error}</ServerText>} data-testid="msg-error" />
        )}
        {saving ? (
          <div className={styles.meta}>{t('llm.chat.saving')}</div>
        ) : (
          !live && <ReplyMeta m={m} />
        )}
        {last && !live && onRegenerate && (
          <Button size="small" type="link" icon={<RedoOutlined />} onClick={onRegenerate} disabled={busy} style={{ paddingInline: 0, marginTop: 4 }} data-testid="chat-regenerate">
            {t('llm.chat.regenerate')}
          </Button>
        )}
      </div>
    </div>
  );
}

function ConversationList({
  list,
  activeId,
  onOpen,
  onNew,
  onRename,
  onDelete,
  loading,
  error,
  onRetry,
  busy,
}: {
  list: ConversationItem[];
  activeId: string | null;
  onOpen: (id: string) => void;
  onNew: () => void;
  onRename: (c: ConversationItem) => void;
  onDelete: (c: ConversationItem) => Promise<unknown>;
  loading: boolean;
  error: boolean;
  onRetry: () => void;
  busy: boolean;
}) {
  const { t } = useT();
  return (
    <>
      <div style={{ padding: 10 }}>
        <Button block icon={<PlusOutlined />} onClick={onNew} disabled={busy} data-testid="conv-new">
          {t('llm.chat.newConversation')}
        </Button>
      </div>
      {error ? (
        <Result status="warning" title={t('llm.chat.listFailed')} extra={<Button onClick={onRetry}>{t('common.retry')}</Button>} style={{ padding: 16 }} />
      ) : loading ? (
        <div style={{ padding: 12 }}>
          <Skeleton active paragraph={{ rows: 3 }} title={false} />
        </div>
      ) : list.length === 0 ? (
        <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('llm.chat.noConversations')} />
      ) : (
        <ul className={styles.convList} aria-label={t('llm.chat.conversations')} data-testid="conv-list">
          {list.map((c) => (
            <li key={c.id} className={`${styles.conv} ${c.id === activeId ? styles.convActive : ''}`} data-testid="conv-item" data-conversation-id={c.id}>
              <button type="button" className={styles.convOpen} onClick={() => onOpen(c.id)} aria-current={c.id === activeId ? 'true' : undefined} title={c.title} disabled={busy && c.id !== activeId}>
                {c.title ? <ServerText>{c.title}</ServerText> : t('llm.chat.untitled')}
              </button>
              <Tooltip title={t('llm.chat.rename')}>
                <Button type="text" size="small" icon={<EditOutlined />} aria-label={`${t('llm.chat.rename')} ${c.title}`} onClick={() => onRename(c)} data-testid="conv-rename" />
              </Tooltip>
              <Popconfirm
                title={t('llm.chat.deleteConfirm', { title: c.title || t('llm.chat.untitled') })}
                okText={t('llm.chat.delete')}
                okButtonProps={{ danger: true, autoInsertSpace: false }}
                cancelText={t('common.cancel')}
                onConfirm={() => onDelete(c)}
              >
                <Button type="text" size="small" danger icon={<DeleteOutlined />} aria-label={`${t('llm.chat.delete')} ${c.title}`} disabled={busy && c.id === activeId} data-testid="conv-delete" />
              </Popconfirm>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** /largeModel/textChat: conversations with the tenant's models, answers streamed token by token. */
export function TextChatPage() {
  const { t } = useT();
  const { message } = useFeedback();
  const qc = useQueryClient();
  const screens = Grid.useBreakpoint();
  const narrow = screens.md === false;
  const [params] = useSearchParams();
  const models = useQuery(modelsQuery());
  const conversations = useQuery(conversationsQuery());
  const user = useQuery(userDetailQuery());
  const refreshBalance = useRefreshBalance();
  const create = useCreateConversation();
  const update = useUpdateConversation();
  const remove = useDeleteConversation();

  const [activeId, setActiveId] = useState<string | null>(null);
  const [model, setModel] = useState<string | undefined>(params.get('model') ?? undefined);
  const [systemPrompt, setSystemPrompt] = useState('');
  const [temperature, setTemperature] = useState(DEFAULT_TEMPERATURE);
  const [draft, setDraft] = useState('');
  const [live, setLive] = useState<Live | null>(null);
  const [chatError, setChatError] = useState<ChatError | null>(null);
  const [drawer, setDrawer] = useState(false);
  const [renaming, setRenaming] = useState<ConversationItem | null>(null);
  const [renameText, setRenameText] = useState('');
  const [announce, setAnnounce] = useState('');
  const abort = useRef<AbortController | null>(null);
  const thread = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  const modelList = useMemo(() => models.data?.list ?? [], [models.data]);
  const convList = useMemo(() => conversations.data?.list ?? [], [conversations.data]);
  const active = convList.find((c) => c.id === activeId) ?? null;
  const streaming = live?.state === 'streaming';

  // The model: the one asked for in the address, else the first published one.
  useEffect(() => {
    if (modelList.length === 0) return;
    setModel((m) => (m && modelList.some((x) => x.id === m) ? m : (modelList[0]?.id ?? m)));
  }, [modelList]);

  // Opening a conversation brings its settings.
  useEffect(() => {
    if (!active) return;
    setModel(active.model);
    setSystemPrompt(active.systemPrompt);
    setTemperature(active.temperature);
  }, [active]);

  const waitingForSave = Boolean(live && live.state === 'ended' && live.assistantId);
  const messages = useQuery({ ...messagesQuery(activeId), refetchInterval: waitingForSave ? 600 : false });
  const saved = useMemo(() => messages.data?.list ?? [], [messages.data]);

  // The streamed answer gives way to the saved reply once the conversation's messages hold it.
  useEffect(() => {
    if (!live || live.state !== 'ended') return;
    const found = live.assistantId !== null && saved.some((m) => m.id === live.assistantId);
    if (found || !live.assistantId || Date.now() - live.endedAt > SAVE_WAIT_MS) {
      setLive(null);
      void refreshBalance();
    }
  }, [live, saved, refreshBalance]);

  const shown = useMemo(() => {
    let list = saved;
    if (live && live.conversationId === activeId) {
      const inList = live.assistantId !== null && saved.some((m) => m.id === live.assistantId);
      if (!inList) {
        if (live.regenerate) {
          // The reply being replaced stays out of sight while its successor streams.
          const last = list[list.length - 1];
          if (last?.role === 'assistant') list = list.slice(0, -1);
        }
        if (live.userMessage && !saved.some((m) => m.id === live.userMessage?.id)) list = [...list, live.userMessage];
      }
    }
    return list;
  }, [saved, live, activeId]);
  const liveReply: ChatMessageItem | null =
    live && live.conversationId === activeId && !(live.assistantId !== null && saved.some((m) => m.id === live.assistantId))
      ? (live.final ?? { ...localUserMessage(live.text), id: live.assistantId ?? 'pending-reply', role: 'assistant', model: model ?? null, status: live.state === 'ended' ? 'stopped' : 'done' })
      : null;

  // Follow the answer as it grows, unless the reader scrolled up.
  useEffect(() => {
    const el = thread.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [shown, liveReply?.content]);

  const run = useCallback(
    async (conversationId: string, body: { content?: string; regenerate?: boolean }) => {
      const controller = new AbortController();
      abort.current = controller;
      stick.current = true;
      setChatError(null);
      setLive({
        conversationId,
        userMessage: body.content !== undefined ? localUserMessage(body.content) : null,
        assistantId: null,
        text: '',
        state: 'streaming',
        regenerate: Boolean(body.regenerate),
        final: null,
        endedAt: 0,
      });
      let failedEarly = false;
      try {
        await streamChat(
          { conversationId, ...body },
          {
            onStart: (e) => setLive((l) => (l ? { ...l, userMessage: e.userMessage ?? l.userMessage, assistantId: e.assistantMessageId } : l)),
            onDelta: (text) => setLive((l) => (l ? { ...l, text: l.text + text } : l)),
            onDone: (m) => setLive((l) => (l ? { ...l, final: m, assistantId: m.id } : l)),
            onError: (msg, reason) => setChatError({ msg, short: isInsufficientBalance(undefined, reason) }),
          },
          controller.signal,
        );
      } catch (err) {
        failedEarly = true;
        const e = err instanceof ApiError ? err : new ApiError(0, getErrorMessage(err));
        setChatError({ msg: e.message, short: isInsufficientBalance(e.status, e.reason) });
        if (body.content !== undefined) setDraft((d) => d || body.content || '');
      } finally {
        abort.current = null;
        if (failedEarly) setLive(null);
        else setLive((l) => (l ? { ...l, state: 'ended', endedAt: Date.now() } : l));
        setAnnounce(controller.signal.aborted ? t('llm.chat.stoppedAnnounce') : t('llm.chat.doneAnnounce'));
        void qc.invalidateQueries({ queryKey: llmKeys.messages(conversationId) });
        void qc.invalidateQueries({ queryKey: llmKeys.conversations() });
        void refreshBalance();
      }
    },
    [qc, refreshBalance, t],
  );

  const send = async () => {
    const content = draft.trim();
    if (!content || streaming || create.isPending) return;
    if (!model) {
      setChatError({ msg: t('llm.chat.pickModel'), short: false });
      return;
    }
    let id = activeId;
    if (!id) {
      try {
        const c = await create.mutateAsync({ model, title: titleFrom(content), systemPrompt: systemPrompt || undefined, temperature });
        id = c.id;
        qc.setQueryData(llmKeys.messages(c.id), { conversation: c, list: [] });
        setActiveId(c.id);
      } catch {
        return;
      }
    }
    setDraft('');
    await run(id, { content });
  };

  const regenerate = () => {
    if (!activeId || streaming) return;
    void run(activeId, { regenerate: true });
  };

  const stop = () => abort.current?.abort();

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      void send();
    }
  };

  const open = (id: string) => {
    if (streaming) return;
    setActiveId(id);
    setChatError(null);
    setDrawer(false);
  };
  const startNew = () => {
    if (streaming) return;
    setActiveId(null);
    setChatError(null);
    setSystemPrompt('');
    setTemperature(DEFAULT_TEMPERATURE);
    setDrawer(false);
  };

  const saveSettings = (patch: { model?: string; systemPrompt?: string; temperature?: number }) => {
    if (!active) return;
    update.mutate({ id: active.id, ...patch });
  };

  const deleteConversation = (c: ConversationItem) =>
    remove.mutateAsync(c.id).then(() => {
      void message.success(t('llm.chat.deleted'));
      if (c.id === activeId) setActiveId(null);
      qc.removeQueries({ queryKey: llmKeys.messages(c.id) });
    });

  const list = (
    <ConversationList
      list={convList}
      activeId={activeId}
      onOpen={open}
      onNew={startNew}
      onRename={(c) => {
        setRenaming(c);
        setRenameText(c.title);
      }}
      onDelete={deleteConversation}
      loading={conversations.isPending}
      error={conversations.isError}
      onRetry={() => void conversations.refetch()}
      busy={streaming}
    />
  );

  const settings = (
    <div style={{ width: 300, maxWidth: '80vw' }} data-testid="chat-settings">
      <label htmlFor="chat-system-prompt" style={{ display: 'block', marginBottom: 4, fontWeight: 500 }}>
        {t('llm.chat.systemPrompt')}
      </label>
      <Input.TextArea
        id="chat-system-prompt"
        value={systemPrompt}
        onChange={(e) => setSystemPrompt(e.target.value)}
        onBlur={() => active && systemPrompt !== active.systemPrompt && saveSettings({ systemPrompt })}
        autoSize={{ minRows: 3, maxRows: 8 }}
        maxLength={8000}
        placeholder={t('llm.chat.systemPromptPlaceholder')}
        data-testid="chat-system-prompt"
      />
      <div id="chat-temperature-label" style={{ marginTop: 12, fontWeight: 500 }}>
        {t('llm.chat.temperature')}
      </div>
      <Flex gap={8} align="center">
        <Slider
          style={{ flex: 1 }}
          min={0}
          max={2}
          step={0.1}
          value={temperature}
          onChange={(v) => setTemperature(v)}
          onChangeComplete={(v) => saveSettings({ temperature: v })}
          aria-labelledby="chat-temperature-label"
        />
        <InputNumber
          min={0}
          max={2}
          step={0.1}
          value={temperature}
          style={{ width: 72 }}
          aria-labelledby="chat-temperature-label"
          onChange={(v) => {
            if (typeof v === 'number') {
              setTemperature(v);
              saveSettings({ temperature: v });
            }
          }}
          data-testid="chat-temperature"
        />
      </Flex>
      <Typography.Paragraph type="secondary" style={{ fontSize: 12, margin: '8px 0 0' }}>
        {t('llm.chat.temperatureHint')}
      </Typography.Paragraph>
    </div>
  );

  const balance = user.data?.balance;
  const lastIndex = shown.length - 1;

  return (
    <LlmShell title={t('llm.chat.title')} testId="text-chat">
      <div className={styles.chat}>
        {!narrow && (
          <aside className={styles.convs} aria-label={t('llm.chat.conversations')}>
            {list}
          </aside>
        )}
        {narrow && (
          <Drawer open={drawer} onClose={() => setDrawer(false)} placement="left" size={280} title={t('llm.chat.conversations')} styles={{ body: { padding: 0 } }}>
            {list}
          </Drawer>
        )}
        <section className={styles.main} aria-label={t('llm.chat.conversation')}>
          <div className={styles.toolbar}>
            {narrow && <Button icon={<MenuOutlined />} onClick={() => setDrawer(true)} aria-label={t('llm.chat.conversations')} data-testid="conv-drawer" />}
            <span className="sr-only" id="chat-model-label">
              {t('llm.chat.model')}
            </span>
            <Select<string>
              aria-labelledby="chat-model-label"
              style={{ minWidth: 180, maxWidth: narrow ? 200 : 320, flex: narrow ? 1 : undefined }}
              value={model}
              loading={models.isPending}
              disabled={streaming}
              placeholder={t('llm.chat.pickModel')}
              options={modelList.map((m) => ({ value: m.id, label: <ServerText>{m.name}</ServerText>, title: m.name }))}
              onChange={(v) => {
                setModel(v);
                saveSettings({ model: v });
              }}
              notFoundContent={models.isError ? t('llm.square.loadFailed') : t('llm.square.none')}
              data-testid="chat-model"
            />
            <Popover content={settings} trigger="click" placement="bottomLeft" title={t('llm.chat.settings')}>
              <Button icon={<SettingOutlined />} aria-label={narrow ? t('llm.chat.settings') : undefined} data-testid="chat-settings-open">
                {narrow ? null : t('llm.chat.settings')}
              </Button>
            </Popover>
            <span style={{ marginInlineStart: 'auto', fontSize: 13, whiteSpace: 'nowrap' }}>
              <Typography.Text type="secondary">{t('llm.chat.balance')} </Typography.Text>
              <span data-testid="chat-balance" style={{ fontWeight: 600, fontVariantNumeric: 'tabular-nums' }}>
                {balance === undefined ? '—' : formatMoney(balance)}
              </span>{' '}
              <Link to={pathOf('recharge')} data-testid="chat-recharge-link">
                {t('llm.chat.recharge')}
              </Link>
            </span>
          </div>
          <div
            className={styles.thread}
            ref={thread}
            onScroll={(e) => {
              const el = e.currentTarget;
              stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
            }}
            tabIndex={0}
            aria-label={t('llm.chat.messages')}
            data-testid="chat-thread"
          >
            {activeId && messages.isError ? (
              <Result
                status="warning"
                title={t('llm.chat.loadFailed')}
                subTitle={<ServerText>{getErrorMessage(messages.error)}</ServerText>}
                extra={<Button onClick={() => void messages.refetch()}>{t('common.retry')}</Button>}
              />
            ) : activeId && messages.isPending ? (
              <Skeleton active />
            ) : shown.length === 0 && !liveReply ? (
              <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={modelList.length === 0 && !models.isPending ? t('llm.square.none') : t('llm.chat.emptyThread')} style={{ marginTop: 48 }} />
            ) : (
              <>
                {shown.map((m, i) => (
                  <Message key={m.id} m={m} last={i === lastIndex && !liveReply} busy={streaming} onRegenerate={i === lastIndex ? regenerate : undefined} />
                ))}
                {shown[lastIndex]?.role === 'user' && !liveReply && !streaming && (
                  <Button size="small" icon={<RedoOutlined />} onClick={regenerate} data-testid="chat-regenerate">
                    {t('llm.chat.answerAgain')}
                  </Button>
                )}
                {liveReply && <Message m={liveReply} live={streaming} saving={!streaming && !live?.final} />}
              </>
            )}
          </div>
          <p className="sr-only" aria-live="polite">
            {announce}
          </p>
          <div className={styles.composer}>
            {chatError &&
              (chatError.short ? (
                <Alert
                  type="warning"
                  showIcon
                  closable={{ onClose: () => setChatError(null), 'aria-label': t('llm.close') }}
                  style={{ marginBottom: 8 }}
                  title={
                    <>
                      {t('llm.chat.shortBalance')}{' '}
                      <Link to={pathOf('recharge')} data-testid="chat-short-recharge">
                        {t('llm.chat.goRecharge')}
                      </Link>
                    </>
                  }
                  data-testid="chat-short-balance"
                />
              ) : (
                <Alert
                  type="error"
                  showIcon
                  closable={{ onClose: () => setChatError(null), 'aria-label': t('llm.close') }}
                  style={{ marginBottom: 8 }}
                  title={<ServerText>{chatError.msg}</ServerText>}
                  data-testid="chat-error"
                />
              ))}
            <Flex gap={8} align="flex-end">
              <Input.TextArea
                value={draft}
                onChange={(e) => setDraft(e.target.value)}
                onKeyDown={onKeyDown}
                autoSize={{ minRows: 1, maxRows: 8 }}
                maxLength={32_000}
                placeholder={t('llm.chat.inputPlaceholder')}
                aria-label={t('llm.chat.input')}
                aria-describedby="chat-input-hint"
                data-testid="chat-input"
              />
              {streaming ? (
                <Button danger icon={<StopOutlined />} onClick={stop} autoInsertSpace={false} data-testid="chat-stop">
                  {t('llm.chat.stop')}
                </Button>
              ) : (
                <Button type="primary" icon={<SendOutlined />} onClick={() => void send()} disabled={!draft.trim() || !model} loading={create.isPending} autoInsertSpace={false} data-testid="chat-send">
                  {t('llm.chat.send')}
                </Button>
              )}
            </Flex>
            <Typography.Text type="secondary" style={{ fontSize: 12 }} id="chat-input-hint">
              {t('llm.chat.inputHint')}
            </Typography.Text>
          </div>
        </section>
      </div>
      <Modal
        open={renaming !== null}
        title={t('llm.chat.rename')}
        okText={t('common.confirm')}
        cancelText={t('common.cancel')}
        confirmLoading={update.isPending}
        onCancel={() => setRenaming(null)}
        onOk={() => {
          const title = renameText.trim();
          if (!renaming || !title) return;
          update.mutate({ id: renaming.id, title }, { onSuccess: () => setRenaming(null) });
        }}
        okButtonProps={{ disabled: !renameText.trim(), autoInsertSpace: false }}
        destroyOnHidden
      >
        <label htmlFor="conv-rename-input" className="sr-only">
          {t('llm.chat.titleLabel')}
        </label>
        <Input id="conv-rename-input" value={renameText} onChange={(e) => setRenameText(e.target.value)} maxLength={64} onPressEnter={() => undefined} data-testid="conv-rename-input" />
      </Modal>
    </LlmShell>
  );
}
