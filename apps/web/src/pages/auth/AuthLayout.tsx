import type { ReactNode } from 'react';
import { Button } from 'antd';
import { CheckOutlined, HomeOutlined } from '@ant-design/icons';
import { LanguageSwitch } from '../../modules/LanguageSwitch.tsx';
import { Link, useNavigate } from 'react-router';
import { useT } from '../../locales/i18n.ts';
import { useTenant } from '../../modules/tenant.tsx';
import styles from './AuthLayout.module.css';

type Props = { heading: string; subheading: string; footer?: ReactNode; children: ReactNode };

/**
 * The split sign-in / sign-up screen: the tenant's brand panel on the left (gradient in its
 * primary colour, slogan, selling points), the form card on the right.
 */
export function AuthLayout({ heading, subheading, footer, children }: Props) {
  const { t } = useT();
  const tenant = useTenant();
  const navigate = useNavigate();
  const company = tenant.config.companyName || tenant.title;

  return (
    <div className={styles.page}>
      <aside className={styles.brand}>
        <Link to="/" className={styles.brandHead}>
          {tenant.hash_rate_logo && <img src={tenant.hash_rate_logo} alt="" />}
          <span>{tenant.title}</span>
        </Link>
        <div className={styles.brandBody}>
          <h1>{tenant.hash_rate_slogan_title || tenant.title}</h1>
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
            <h2 className={styles.heading}>{heading}</h2>
            <p className={styles.subheading}>{subheading}</p>
            {children}
            {footer && <div className={styles.footer}>{footer}</div>}
          </section>
        </div>
      </main>
    </div>
  );
}
