import { useEffect, useRef, useState } from 'react';
import { Alert, Button, Flex, Result, Space, Tag, Tooltip } from 'antd';
import { CopyOutlined, ReloadOutlined, SnippetsOutlined } from '@ant-design/icons';
import { Link, useSearchParams } from 'react-router';
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
// Bundled into the app's own stylesheet (served from 'self'), not injected at run time.
import '@xterm/xterm/css/xterm.css';
import { fetchShellTicket } from '../../api/queries/compute.ts';
import { useFeedback } from '../../modules/feedback.ts';
import { useT, type MessageKey } from '../../locales/i18n.ts';
import { pathOf } from '../../route-table.ts';
import { ServerText } from '../market/ServerText.tsx';
import { ShellConnection, type EndReason, type ShellState, type SocketLike } from './shell-connection.ts';
import styles from './shell.module.css';

const CONSOLE_PATH = pathOf('centerControl');
const INSTANCE_ID = /^i-[a-z0-9]{10}$/;

const END_KEYS: Record<EndReason, MessageKey> = {
  notRunning: 'compute.shell.notRunning',
  notFound: 'compute.shell.notFound',
  unauthorized: 'compute.shell.unauthorized',
  tooMany: 'compute.shell.tooMany',
  exited: 'compute.shell.exited',
  closed: 'compute.shell.closed',
  gaveUp: 'compute.shell.closed',
};

function StatusTag({ state }: { state: ShellState }) {
  const { t } = useT();
  switch (state.kind) {
    case 'connecting':
      return <Tag color="processing">{t('compute.shell.connecting')}</Tag>;
    case 'open':
      return <Tag color="success">{t('compute.shell.connected')}</Tag>;
    case 'waiting':
      return <Tag color="warning">{t('compute.shell.reconnecting', { seconds: Math.round(state.delayMs / 1000), attempt: state.attempt })}</Tag>;
    case 'ended':
      return <Tag color="error">{t('compute.shell.closed')}</Tag>;
  }
}

function Shell({ instanceId }: { instanceId: string }) {
  const { t } = useT();
  const { message } = useFeedback();
  const box = useRef<HTMLDivElement>(null);
  const term = useRef<Terminal | null>(null);
  const conn = useRef<ShellConnection | null>(null);
  const [state, setState] = useState<ShellState>({ kind: 'connecting', attempt: 0 });
  const [name, setName] = useState<string | null>(null);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const terminal = new Terminal({
      cursorBlink: true,
      fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, "WenQuanYi Micro Hei Mono", monospace',
      fontSize: 14,
      scrollback: 5000,
      theme: { background: '#0b1020', foreground: '#e2e8f0' },
    });
    const fit = new FitAddon();
    terminal.loadAddon(fit);
    terminal.open(el);
    term.current = terminal;
    const connection = new ShellConnection(
      instanceId,
      {
        ticket: fetchShellTicket,
        createSocket: (url) => new WebSocket(url) as unknown as SocketLike,
        location: window.location,
        setTimeout: (fn, ms) => window.setTimeout(fn, ms),
        clearTimeout: (id) => window.clearTimeout(id as number),
        setInterval: (fn, ms) => window.setInterval(fn, ms),
        clearInterval: (id) => window.clearInterval(id as number),
      },
      {
        onState: (s) => {
          setState(s);
          if (s.kind === 'open' && s.instanceName) setName(s.instanceName);
          if (s.kind === 'ended') terminal.write(`\r\n\x1b[33m[${s.message ?? t(END_KEYS[s.reason])}]\x1b[0m\r\n`);
        },
        onOutput: (data) => terminal.write(data),
      },
    );
    conn.current = connection;
    const input = terminal.onData((d) => connection.input(d));
    const resized = terminal.onResize(({ cols, rows }) => connection.resize(cols, rows));
    const refit = () => {
      try {
        fit.fit();
      } catch {
        /* not laid out yet */
      }
    };
    refit();
    connection.resize(terminal.cols, terminal.rows);
    const observer = new ResizeObserver(refit);
    observer.observe(el);
    connection.connect();
    terminal.focus();
    return () => {
      observer.disconnect();
      input.dispose();
      resized.dispose();
      connection.dispose();
      terminal.dispose();
      term.current = null;
      conn.current = null;
    };
    // t is read when a state arrives; the terminal lives as long as the instance id.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [instanceId]);

  const copy = async () => {
    const text = term.current?.getSelection() ?? '';
    try {
      await navigator.clipboard.writeText(text);
      void message.success(t('compute.shell.copied'));
    } catch {
      void message.warning(t('compute.shell.clipboardFailed'));
    }
    term.current?.focus();
  };
  const paste = async () => {
    try {
      const text = await navigator.clipboard.readText();
      if (text) term.current?.paste(text);
    } catch {
      void message.warning(t('compute.shell.clipboardFailed'));
    }
    term.current?.focus();
  };

  const ended = state.kind === 'ended';
  return (
    <div className={styles.page}>
      <header className={styles.bar}>
        <Flex align="center" gap={12} style={{ minWidth: 0 }}>
          <h1 className={styles.title}>{t('compute.shell.heading', { name: name ?? instanceId })}</h1>
          <span data-testid="shell-state" data-state={state.kind} aria-live="polite">
            <StatusTag state={state} />
          </span>
        </Flex>
        <Space size={4} wrap>
          <Tooltip title={t('compute.shell.copy')}>
            <Button size="small" type="text" className={styles.tool} icon={<CopyOutlined />} aria-label={t('compute.shell.copy')} onClick={() => void copy()} />
          </Tooltip>
          <Tooltip title={t('compute.shell.paste')}>
            <Button size="small" type="text" className={styles.tool} icon={<SnippetsOutlined />} aria-label={t('compute.shell.paste')} onClick={() => void paste()} />
          </Tooltip>
          <Button size="small" icon={<ReloadOutlined />} onClick={() => conn.current?.reconnect()} disabled={state.kind === 'connecting'} data-testid="shell-reconnect">
            {t('compute.shell.reconnect')}
          </Button>
          <Link to={CONSOLE_PATH} className={styles.link}>
            {t('compute.shell.toConsole')}
          </Link>
        </Space>
      </header>
      {ended && (
        <Alert
          type={state.reason === 'exited' || state.reason === 'closed' ? 'info' : 'warning'}
          showIcon
          banner
          title={t(END_KEYS[state.reason])}
          description={state.message ? <ServerText>{state.message}</ServerText> : undefined}
          action={
            <Button size="small" type="primary" onClick={() => conn.current?.reconnect()}>
              {t('compute.shell.reconnect')}
            </Button>
          }
          data-testid="shell-ended"
          data-reason={state.reason}
        />
      )}
      <main className={styles.main}>
        <div ref={box} className={styles.terminal} data-testid="shell-terminal" />
      </main>
    </div>
  );
}

/** /shell?instanceId=… (webshell): a terminal in the instance, in its own tab. */
export function ShellPage() {
  const { t } = useT();
  const [params] = useSearchParams();
  const instanceId = params.get('instanceId') ?? '';
  if (!INSTANCE_ID.test(instanceId)) {
    return (
      <main className={styles.missing}>
        <Result
          status="warning"
          title={<h1 style={{ font: 'inherit', margin: 0, color: 'inherit' }}>{t('compute.shell.title')}</h1>}
          subTitle={t('compute.shell.missingId')}
          extra={
            <Link to={CONSOLE_PATH}>
              <Button type="primary">{t('compute.shell.toConsole')}</Button>
            </Link>
          }
          data-testid="shell-missing"
        />
      </main>
    );
  }
  return <Shell key={instanceId} instanceId={instanceId} />;
}
