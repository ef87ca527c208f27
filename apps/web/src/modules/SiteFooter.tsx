import { Layout } from 'antd';
import { MailOutlined, PhoneOutlined } from '@ant-design/icons';
import { Link } from 'react-router';
import { useT, type MessageKey } from '../locales/i18n.ts';
import { useTenant } from './tenant.tsx';

const LINKS: { to: string; label: MessageKey; hiddenWhenRestricted?: boolean }[] = [
  { to: '/about', label: 'site.footer.about' },
  { to: '/contact', label: 'site.footer.contact' },
  // PRODUCT.md: a restricted tenant hides the help centre.
  { to: '/help', label: 'site.footer.help', hiddenWhenRestricted: true },
  { to: '/reservationForm', label: 'site.footer.reservation' },
];

const muted = 'rgba(255,255,255,0.55)';

/** The tenant's footer on every public page: company, contact, links, ICP filing and copyright. */
export function SiteFooter() {
  const { t } = useT();
  const tenant = useTenant();
  const { config } = tenant;
  const links = LINKS.filter((l) => !(l.hiddenWhenRestricted && config.restricted));

  return (
    <Layout.Footer style={{ background: '#0b1220', color: 'rgba(255,255,255,0.78)', padding: '56px 0 0' }} data-testid="site-footer">
      <div style={{ maxWidth: 1200, margin: '0 auto', padding: '0 clamp(16px, 4vw, 32px)', boxSizing: 'border-box' }}>
        <div style={{ display: 'grid', gridTemplateColumns: 'repeat(auto-fit, minmax(220px, 1fr))', gap: '32px 48px', paddingBottom: 40 }}>
          <div>
            <div style={{ display: 'flex', alignItems: 'center', gap: 12 }}>
              {tenant.hash_rate_logo && <img src={tenant.hash_rate_logo} alt="" style={{ width: 36, height: 36, borderRadius: 8 }} />}
              <span style={{ fontSize: 20, fontWeight: 600, color: '#fff' }}>{tenant.title}</span>
            </div>
            <p style={{ margin: '16px 0 4px', color: muted, lineHeight: 1.8 }}>{t('site.footer.tagline')}</p>
            <p style={{ margin: 0, color: muted }}>{config.companyName}</p>
          </div>
          <nav aria-label={t('site.footer.links')}>
            <h4 style={{ color: '#fff', fontSize: 15, margin: '0 0 16px' }}>{t('site.footer.links')}</h4>
            <ul style={{ listStyle: 'none', padding: 0, margin: 0, display: 'grid', gap: 10 }}>
              {links.map((l) => (
                <li key={l.to}>
                  <Link to={l.to} style={{ color: 'rgba(255,255,255,0.72)' }} data-testid={`footer-link-${l.to.slice(1)}`}>
                    {t(l.label)}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
          <div>
            <h4 style={{ color: '#fff', fontSize: 15, margin: '0 0 16px' }}>{t('site.footer.contactTitle')}</h4>
            <div style={{ display: 'grid', gap: 10 }}>
              <span>
                <PhoneOutlined style={{ marginRight: 8 }} />
                <a href={`tel:${config.contactPhone}`} style={{ color: 'rgba(255,255,255,0.78)' }}>
                  {t('site.footer.phone', { value: config.contactPhone })}
                </a>
              </span>
              <span>
                <MailOutlined style={{ marginRight: 8 }} />
                <a href={`mailto:${config.contactEmail}`} style={{ color: 'rgba(255,255,255,0.78)' }}>
                  {t('site.footer.email', { value: config.contactEmail })}
                </a>
              </span>
            </div>
          </div>
        </div>
        <div
          style={{ borderTop: '1px solid rgba(255,255,255,0.08)', padding: '20px 0 28px', display: 'flex', justifyContent: 'center', flexWrap: 'wrap', gap: '4px 24px', color: muted, fontSize: 13 }}
        >
          <span>{t('site.footer.copyright', { year: new Date().getFullYear(), company: config.companyName })}</span>
          {config.icp && (
            // The MIIT filing site is where an ICP number is looked up; Chinese law expects the link.
            <a href="https://beian.miit.gov.cn/" target="_blank" rel="noopener noreferrer" style={{ color: muted }} data-testid="footer-icp">
              {config.icp}
            </a>
          )}
        </div>
      </div>
    </Layout.Footer>
  );
}
