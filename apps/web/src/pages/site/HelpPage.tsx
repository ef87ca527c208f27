import { useEffect, useMemo, type ReactNode } from 'react';
import { Alert, Breadcrumb, Button, Empty, Flex, Input, Menu, Typography } from 'antd';
import { ArrowLeftOutlined, ArrowRightOutlined, CustomerServiceOutlined, FileTextOutlined, SearchOutlined } from '@ant-design/icons';
import { useNavigate, useSearchParams } from 'react-router';
import zhArticles from '../../locales/zh-CN/help-articles.ts';
import enArticles from '../../locales/en-US/help-articles.ts';
import { useT } from '../../locales/i18n.ts';
import { useTenant } from '../../modules/tenant.tsx';
import '../home/home.css';
import styles from './HelpPage.module.css';

type Article = { id: string; category: string; title: string; summary: string; body: string };
type Category = { key: string; title: string };

/** Body text without the markup of the help format, for searching and snippets. */
function plainText(body: string): string {
  return body.replace(/^(#{2,3} |- |\d+\. |\$ |> )/gm, '').replace(/`/g, '');
}

function termsOf(query: string): string[] {
  return query.trim().toLowerCase().split(/\s+/).filter(Boolean);
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Wraps every occurrence of the search terms in <mark>; text stays text (React escapes it). */
function highlight(text: string, terms: string[]): ReactNode {
  if (!terms.length) return text;
  const re = new RegExp(`(${terms.map(escapeRe).join('|')})`, 'gi');
  return text.split(re).map((part, i) =>
    i % 2 === 1 ? (
      <mark key={i} style={{ background: '#ffe58f', padding: '0 1px', borderRadius: 2 }}>
        {part}
      </mark>
    ) : (
      part
    ),
  );
}

/** `inline code` spans, with search highlights inside and outside them. */
function inline(text: string, terms: string[]): ReactNode[] {
  return text.split('`').map((part, i) =>
    i % 2 === 1 ? (
      <code key={i} style={{ background: '#f1f5f9', padding: '1px 6px', borderRadius: 4, fontSize: '0.92em' }}>
        {highlight(part, terms)}
      </code>
    ) : (
      <span key={i}>{highlight(part, terms)}</span>
    ),
  );
}

/** Renders the small markdown subset the help locale uses (see locales/zh-CN/help.ts). */
function ArticleBody({ body, terms }: { body: string; terms: string[] }) {
  const blocks = body.split(/\n{2,}/);
  return (
    <div style={{ fontSize: 15, lineHeight: 1.9, color: '#334155' }}>
      {blocks.map((block, i) => {
        const lines = block.split('\n');
        if (block.startsWith('## ')) return <h3 key={i} style={{ fontSize: 20, margin: '32px 0 12px', color: '#0f172a' }}>{inline(block.slice(3), terms)}</h3>;
        if (block.startsWith('### ')) return <h4 key={i} style={{ fontSize: 16, margin: '28px 0 6px', color: '#0f172a' }}>{inline(block.slice(4), terms)}</h4>;
        if (lines.every((l) => l.startsWith('- '))) {
          return (
            <ul key={i} style={{ paddingLeft: 22, margin: '8px 0 16px' }}>
              {lines.map((l, j) => (
                <li key={j}>{inline(l.slice(2), terms)}</li>
              ))}
            </ul>
          );
        }
        if (lines.every((l) => /^\d+\. /.test(l))) {
          return (
            <ol key={i} style={{ paddingLeft: 22, margin: '8px 0 16px' }}>
              {lines.map((l, j) => (
                <li key={j}>{inline(l.replace(/^\d+\. /, ''), terms)}</li>
              ))}
            </ol>
          );
        }
        if (lines.every((l) => l.startsWith('$ '))) {
          return (
            <pre key={i} style={{ background: '#0f172a', color: '#e2e8f0', padding: '14px 18px', borderRadius: 8, fontSize: 13, overflowX: 'auto', margin: '12px 0 18px' }}>
              {lines.map((l, j) => (
                <div key={j}>
                  <span style={{ color: '#4ade80', userSelect: 'none' }}>$ </span>
                  {highlight(l.slice(2), terms)}
                </div>
              ))}
            </pre>
          );
        }
        if (block.startsWith('> ')) return <Alert key={i} type="info" showIcon style={{ margin: '12px 0 18px' }} title={inline(block.slice(2), terms)} />;
        return (
          <p key={i} style={{ margin: '8px 0 14px' }}>
            {inline(block, terms)}
          </p>
        );
      })}
    </div>
  );
}

/** A window of the body around the first hit, so a result shows why it matched. */
function snippet(article: Article, terms: string[]): string {
  const text = plainText(article.body).replace(/\s+/g, ' ');
  const lower = text.toLowerCase();
  const at = terms.map((term) => lower.indexOf(term)).filter((n) => n >= 0).sort((a, b) => a - b)[0];
  if (at === undefined) return article.summary;
  const start = Math.max(0, at - 30);
  return `${start > 0 ? '…' : ''}${text.slice(start, at + 70)}${at + 70 < text.length ? '…' : ''}`;
}

/** SPEC §2 /help: categories on the left, one article or the search results on the right. */
export function HelpPage() {
  const { t, lang } = useT();
  const tenant = useTenant();
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const query = params.get('q') ?? '';
  const terms = useMemo(() => termsOf(query), [query]);

  // The same array object per language, so memos below recompute only on a language switch.
  // The articles ship with this page, not with the dictionary every page loads.
  const { articles, categories } = (lang === 'en-US' ? enArticles : zhArticles) as { articles: readonly Article[]; categories: readonly Category[] };

  const requested = params.get('article');
  const searching = terms.length > 0 && !requested;
  const current = articles.find((a) => a.id === requested) ?? articles[0];
  const matches = useMemo(
    () => articles.filter((a) => terms.every((term) => `${a.title}\n${a.summary}\n${plainText(a.body)}`.toLowerCase().includes(term))),
    [articles, terms],
  );

  useEffect(() => {
    window.scrollTo({ top: 0 });
  }, [requested]);

  const openArticle = (id: string) => {
    const next = new URLSearchParams(params);
    next.set('article', id);
    setParams(next);
  };
  const setQuery = (value: string) => {
    const next = new URLSearchParams();
    if (value) next.set('q', value);
    setParams(next, { replace: true });
  };

  const index = current ? articles.indexOf(current) : -1;
  const prev = index > 0 ? articles[index - 1] : undefined;
  const next = index >= 0 && index < articles.length - 1 ? articles[index + 1] : undefined;
  const categoryTitle = (key: string) => categories.find((c) => c.key === key)?.title ?? '';

  return (
    <div style={{ background: '#f6f8fb', minHeight: '100%' }} data-testid="help-page">
      <section
        style={{
          padding: '56px 0 64px',
          textAlign: 'center',
          background: 'radial-gradient(ellipse 60% 100% at 50% 0%, color-mix(in srgb, var(--brand) 18%, transparent), transparent 70%), linear-gradient(180deg, #fff, #f6f8fb)',
        }}
      >
        <h1 style={{ fontSize: 34, margin: '0 0 10px', color: '#0f172a' }}>{t('help.title')}</h1>
        <p style={{ margin: '0 0 28px', color: '#526072', fontSize: 16 }}>{t('help.subtitle')}</p>
        <Input
          size="large"
          allowClear
          prefix={<SearchOutlined style={{ color: '#5f6b7d' }} />}
          placeholder={t('help.searchPlaceholder')}
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          style={{ maxWidth: 640, height: 52, borderRadius: 26, paddingInline: 20, boxShadow: '0 8px 24px rgba(15,23,42,.08)' }}
          aria-label={t('help.searchPlaceholder')}
          data-testid="help-search"
        />
      </section>

      <div className={styles.layout}>
        <aside style={{ background: '#fff', borderRadius: 12, border: '1px solid #e8edf3', padding: '12px 4px', alignSelf: 'start', position: 'sticky', top: 76 }}>
          <div style={{ padding: '4px 20px 8px', fontWeight: 600, color: '#0f172a' }}>{t('help.categoriesTitle')}</div>
          <Menu
            mode="inline"
            selectedKeys={searching || !current ? [] : [current.id]}
            style={{ borderInlineEnd: 'none' }}
            onClick={({ key }) => openArticle(key)}
            items={categories.map((c) => ({
              type: 'group' as const,
              key: c.key,
              label: c.title,
              children: articles.filter((a) => a.category === c.key).map((a) => ({ key: a.id, label: a.title, icon: <FileTextOutlined /> })),
            }))}
            data-testid="help-menu"
          />
        </aside>

        <section className={styles.article}>
          {searching ? (
            matches.length === 0 ? (
              <Empty
                style={{ padding: '64px 0' }}
                description={
                  <>
                    <div style={{ fontSize: 16, color: '#0f172a' }}>{t('help.noResults', { q: query.trim() })}</div>
                    <div style={{ color: '#5f6b7d', marginTop: 6 }}>{t('help.noResultsHint')}</div>
                  </>
                }
                data-testid="help-empty"
              >
                <Flex gap={12} justify="center">
                  <Button onClick={() => setQuery('')}>{t('help.clearSearch')}</Button>
                  <Button type="primary" onClick={() => navigate('/contact')}>
                    {t('help.contactUs')}
                  </Button>
                </Flex>
              </Empty>
            ) : (
              <div data-testid="help-results">
                <Typography.Text type="secondary">{t('help.resultCount', { count: matches.length, q: query.trim() })}</Typography.Text>
                <div style={{ marginTop: 12 }}>
                  {matches.map((a) => (
                    <button
                      key={a.id}
                      type="button"
                      onClick={() => openArticle(a.id)}
                      className="help-result"
                      style={{ display: 'block', width: '100%', textAlign: 'left', background: 'none', border: 0, borderBottom: '1px solid #f0f2f5', padding: '18px 4px', cursor: 'pointer', font: 'inherit' }}
                    >
                      <div style={{ fontSize: 17, fontWeight: 600, color: '#0f172a', marginBottom: 6 }}>
                        {highlight(a.title, terms)}
                        <span style={{ fontSize: 12, fontWeight: 400, color: '#5f6b7d', marginLeft: 10 }}>{categoryTitle(a.category)}</span>
                      </div>
                      <div style={{ color: '#526072', fontSize: 14, lineHeight: 1.7 }}>{highlight(snippet(a, terms), terms)}</div>
                    </button>
                  ))}
                </div>
              </div>
            )
          ) : (
            current && (
              <article data-testid="help-article" data-article={current.id}>
                <Breadcrumb
                  items={[
                    { title: <a onClick={() => setQuery('')}>{t('help.title')}</a> },
                    { title: categoryTitle(current.category) },
                    { title: current.title },
                  ]}
                />
                {terms.length > 0 && (
                  <Button type="link" icon={<ArrowLeftOutlined />} style={{ padding: 0, marginTop: 12 }} onClick={() => setQuery(query)}>
                    {t('help.backToResults')}
                  </Button>
                )}
                <h2 style={{ fontSize: 28, margin: '16px 0 8px', color: '#0f172a' }}>{highlight(current.title, terms)}</h2>
                <p style={{ color: '#526072', margin: '0 0 8px', fontSize: 15 }}>{current.summary}</p>
                <div style={{ height: 1, background: '#f0f2f5', margin: '20px 0 4px' }} />
                <ArticleBody body={current.body} terms={terms} />
                <Flex justify="space-between" style={{ marginTop: 40, paddingTop: 20, borderTop: '1px solid #f0f2f5' }}>
                  {prev ? (
                    <Button type="link" icon={<ArrowLeftOutlined />} style={{ padding: 0 }} onClick={() => openArticle(prev.id)}>
                      {t('help.prev', { title: prev.title })}
                    </Button>
                  ) : (
                    <span />
                  )}
                  {next && (
                    <Button type="link" style={{ padding: 0 }} onClick={() => openArticle(next.id)}>
                      {t('help.next', { title: next.title })} <ArrowRightOutlined />
                    </Button>
                  )}
                </Flex>
              </article>
            )
          )}

          {/* The empty state already offers the contact; don't say it twice. */}
          {!(searching && matches.length === 0) && (
            <div style={{ marginTop: 40, padding: '20px 24px', borderRadius: 12, background: 'color-mix(in srgb, var(--brand) 6%, #fff)', display: 'flex', alignItems: 'center', gap: 16 }}>
              <CustomerServiceOutlined style={{ fontSize: 28, color: 'var(--brand)' }} />
              <div style={{ flex: 1 }}>
                <div style={{ fontWeight: 600, color: '#0f172a' }}>{t('help.stillNeedHelp')}</div>
                <div style={{ color: '#526072', fontSize: 14 }}>{t('help.stillNeedHelpDesc', { phone: tenant.config.contactPhone })}</div>
              </div>
              <Button onClick={() => navigate('/contact')}>{t('help.contactUs')}</Button>
              <Button type="primary" onClick={() => navigate('/reservationForm')}>
                {t('site.reservationTitle')}
              </Button>
            </div>
          )}
        </section>
      </div>
    </div>
  );
}
