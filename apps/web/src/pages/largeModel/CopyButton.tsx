import { useEffect, useState } from 'react';
import { Button } from 'antd';
import { CheckOutlined, CopyOutlined } from '@ant-design/icons';
import { useT } from '../../locales/i18n.ts';

/** Copies text: the async clipboard where the page may use it, else a hidden textarea. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    /* fall back below */
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  let ok: boolean;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}

/** A small "copy" button that says "copied" for a moment; `label` names what it copies. */
export function CopyButton({ text, label, testId, type = 'text' }: { text: string; label?: string; testId?: string; type?: 'text' | 'default' | 'link' }) {
  const { t } = useT();
  const [done, setDone] = useState(false);
  useEffect(() => {
    if (!done) return;
    const timer = setTimeout(() => setDone(false), 1_500);
    return () => clearTimeout(timer);
  }, [done]);
  return (
    <Button
      size="small"
      type={type}
      icon={done ? <CheckOutlined /> : <CopyOutlined />}
      autoInsertSpace={false}
      aria-label={label ? `${done ? t('llm.copied') : t('llm.copy')} ${label}` : undefined}
      onClick={() => void copyText(text).then((ok) => setDone(ok))}
      data-testid={testId}
    >
      <span aria-live="polite">{done ? t('llm.copied') : t('llm.copy')}</span>
    </Button>
  );
}
