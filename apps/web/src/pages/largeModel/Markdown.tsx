import { memo, type ReactNode } from 'react';
import ReactMarkdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import rehypeHighlight from 'rehype-highlight';
import 'highlight.js/styles/github.css';
import { CopyButton } from './CopyButton.tsx';
import styles from './llm.module.css';

type HastNode = { type: string; value?: string; tagName?: string; properties?: { className?: unknown }; children?: HastNode[] };

/** The plain text of a hast subtree (a code block's source, before highlighting split it up). */
export function hastText(node: HastNode | undefined): string {
  if (!node) return '';
  if (node.type === 'text') return node.value ?? '';
  return (node.children ?? []).map(hastText).join('');
}

function languageOf(node: HastNode | undefined): string {
  const code = node?.children?.find((c) => c.tagName === 'code');
  const classes = code?.properties?.className;
  const list = Array.isArray(classes) ? (classes as string[]) : [];
  return list.find((c) => c.startsWith('language-'))?.slice('language-'.length) ?? '';
}

const components: Components = {
  // Links from a model's answer: never in this tab, never with the opener or a referrer.
  a: ({ href, children }) => (
    <a href={href} target="_blank" rel="noopener noreferrer nofollow ugc">
      {children}
    </a>
  ),
  // Images would fetch from anywhere the model names: shown as their text instead.
  img: ({ alt }) => <span>{alt ? `[${alt}]` : ''}</span>,
  pre: ({ node, children }) => {
    const text = hastText(node as HastNode).replace(/\n$/, '');
    const lang = languageOf(node as HastNode);
    return (
      <div className={styles.codeBlock} data-testid="code-block">
        <div className={styles.codeHead}>
          <span>{lang || 'text'}</span>
          <CopyButton text={text} label={lang || 'code'} testId="code-copy" />
        </div>
        <pre>{children as ReactNode}</pre>
      </div>
    );
  },
};

/**
 * A model's answer as markdown (GFM tables and lists, highlighted code with a copy button). No raw
 * HTML is rendered (react-markdown escapes it) and link targets pass react-markdown's URL filter,
 * which drops javascript: and other unsafe schemes.
 */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  return (
    <div className={styles.markdown}>
      <ReactMarkdown remarkPlugins={[remarkGfm]} rehypePlugins={[[rehypeHighlight, { detect: false }]]} components={components}>
        {text}
      </ReactMarkdown>
    </div>
  );
});
