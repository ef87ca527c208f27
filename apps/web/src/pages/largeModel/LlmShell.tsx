import type { ReactNode } from 'react';
import { Link, useLocation } from 'react-router';
import { useT } from '../../locales/i18n.ts';
import { pathOf } from '../../route-table.ts';
import styles from './llm.module.css';

const LINKS = [
  { name: 'modelSquare', title: 'llm.nav.modelSquare' },
  { name: 'textChat', title: 'llm.nav.textChat' },
  { name: 'apiKey', title: 'llm.nav.apiKey' },
  { name: 'usageChart', title: 'llm.nav.usageChart' },
] as const;

/**
 * The frame of the /largeModel pages in the public site: the page's one h1, its subtitle, and the
 * area's own navigation between its four pages. `bare` (the /center copy of a page) leaves all of
 * it to the center layout, which has its own h1 and menu.
 */
export function LlmShell({ title, subtitle, extra, bare, children, testId }: { title: string; subtitle?: ReactNode; extra?: ReactNode; bare?: boolean; children: ReactNode; testId?: string }) {
  const { t } = useT();
  const location = useLocation();
  if (bare)
    return (
      <div data-testid={testId}>
        <div className={styles.head} style={{ marginBottom: 12 }}>
          <div>
            <h2 style={{ margin: '4px 0 4px', fontSize: 20, fontWeight: 600 }}>{title}</h2>
            {subtitle && <p>{subtitle}</p>}
          </div>
          {extra}
        </div>
        {children}
      </div>
    );
  return (
    <div className={styles.page} data-testid={testId}>
      <div className={styles.container}>
        <nav aria-label={t('llm.nav.label')} className={styles.subnav}>
          {LINKS.map((l) => {
            const path = pathOf(l.name);
            return (
              <Link key={l.name} to={path} aria-current={location.pathname.toLowerCase() === path.toLowerCase() ? 'page' : undefined}>
                {t(l.title)}
              </Link>
            );
          })}
        </nav>
        <div className={styles.head}>
          <div>
            <h1>{title}</h1>
            {subtitle && <p>{subtitle}</p>}
          </div>
          {extra}
        </div>
        {children}
      </div>
    </div>
  );
}
