import type { ReactNode } from 'react';
import { Button } from 'antd';
import { CheckOutlined, HomeOutlined } from '@ant-design/icons';
import { LanguageSwitch } from '../../modules/LanguageSwitch.tsx';
import { Link, useLocation, useNavigate } from 'react-router';
import { useT } from '../../locales/i18n.ts';
import { useTenant } from '../../modules/tenant.tsx';
import styles from './AuthLayout.module.css';

type AuthPage = 'login' | 'register';
type Props = { page: AuthPage; children: ReactNode };

/** Each page's way to the other one, keeping ?redirect=… so the visitor still lands where they meant to. */
const switchTo = {
  login: { question: 'auth.login.noAccount', link: 'auth.login.toRegister', path: '/register', testId: 'login-to-register' },
  register: { question: 'auth.register.hasAccount', link: 'auth.register.toLogin', path: '/login', testId: 'register-to-login' },
} as const;

/**
 * The one layout of sign-in and sign-up: the tenant's brand panel on the left (gradient in its
 * primary colour, slogan, selling points), the form card on the right with the page's heading,
 * its form, and the link to the other page.
 */
export function AuthLayout({ page, children }: Props) {
  const { t } = useT();
  const tenant = useTenant();
  const navigate = useNavigate();
  const location = useLocation();
  const company = tenant.config.companyName || tenant.title;
  const other = switchTo[page];

  return (
    <div className={styles.page}>
      <aside className={styles.brand}>
        <Link to="/" className={styles.brandHead}>
          {tenant.hash_rate_logo && <img src={tenant.hash_rate_logo} alt="" />}
          <span>{tenant.title}</span>
        </Link>
        <div className={styles.brandBody}>
          {/* The page's one h1 is the card's heading: the brand panel is hidden on phones. */}
          <p className={styles.slogan}>{tenant.hash_rate_slogan_title || tenant.title}</p>
          <p>{tenant.hash_rate_slogan || t('auth.brand.defaultSlogan')}</p>
          <ul className={styles.features}>
            {(['gpu', 'fast', 'billing'] as const).map((k) => (
              <li key={k}>
                <CheckOutlined />
                {t(`auth.brand.features.${k}`)}
              </li>
            ))}
          </ul>
        </div>
        <div className={styles.brandFoot}>{t('auth.brand.copyright', { year: new Date().getFullYear(), company })}</div>
      </aside>

      <main className={styles.main}>
        <div className={styles.topbar}>
          <Button type="text" icon={<HomeOutlined />} onClick={() => navigate('/')}>
            {t('nav.home')}
          </Button>
          <LanguageSwitch />
        </div>
        <div className={styles.center}>
          <section className={styles.card}>
            {tenant.login_logo ? <img className={styles.cardLogo} src={tenant.login_logo} alt={tenant.title} /> : null}
            <h1 className={styles.heading}>{t(`auth.${page}.heading`)}</h1>
            <p className={styles.subheading}>{t(`auth.${page}.subheading`)}</p>
            {children}
            <div className={styles.footer}>
              {t(other.question)}{' '}
              <Link to={{ pathname: other.path, search: location.search }} style={{ color: 'var(--brand)' }} data-testid={other.testId}>
                {t(other.link)}
              </Link>
            </div>
          </section>
        </div>
      </main>
    </div>
  );
}
