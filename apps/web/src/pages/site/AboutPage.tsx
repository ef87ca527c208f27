import { Button, Flex } from 'antd';
import { EyeOutlined, HeartOutlined, SafetyCertificateOutlined } from '@ant-design/icons';
import type { ReactNode } from 'react';
import { useNavigate } from 'react-router';
import { useT } from '../../locales/i18n.ts';
import { useTenant } from '../../modules/tenant.tsx';
import { OfferingCards, SectionHead } from '../home/parts.tsx';

type ValueKey = 'transparent' | 'reliable' | 'service';
const VALUES: { key: ValueKey; icon: ReactNode }[] = [
  { key: 'transparent', icon: <EyeOutlined /> },
  { key: 'reliable', icon: <SafetyCertificateOutlined /> },
  { key: 'service', icon: <HeartOutlined /> },
];

/** SPEC §2 /about: who runs this portal, from the tenant's branding. */
export function AboutPage() {
  const { t } = useT();
  const tenant = useTenant();
  const navigate = useNavigate();
  const vars = { title: tenant.title, company: tenant.config.companyName };

  return (
    <div data-testid="about-page">
      <section
        style={{
          padding: '80px 0 72px',
          background: 'radial-gradient(ellipse 50% 90% at 85% 0%, color-mix(in srgb, var(--brand) 20%, transparent), transparent 70%), linear-gradient(180deg, color-mix(in srgb, var(--brand) 5%, #fff), #fff)',
        }}
      >
        <div className="sl-container" style={{ display: 'grid', gridTemplateColumns: 'repeat(auto-fit, minmax(min(100%, 300px), 1fr))', gap: '32px 64px', alignItems: 'center' }}>
          <div>
            <span className="sl-eyebrow" style={{ background: 'color-mix(in srgb, var(--brand) 12%, #fff)', color: 'var(--brand)' }}>
              {t('site.about.eyebrow')}
            </span>
            <h1 className="sl-balance" style={{ fontSize: 40, lineHeight: 1.25, margin: '20px 0 20px', color: '#0f172a' }}>{t('site.about.heading')}</h1>
            <p style={{ fontSize: 16, lineHeight: 1.9, color: '#475569', margin: '0 0 12px' }}>{t('site.about.intro', vars)}</p>
            <p style={{ fontSize: 16, lineHeight: 1.9, color: '#475569', margin: 0 }}>{t('site.about.intro2')}</p>
          </div>
          <div style={{ display: 'flex', justifyContent: 'center' }}>
            {tenant.hash_rate_logo ? (
              <img
                src={tenant.hash_rate_logo}
                alt={tenant.title}
                style={{ width: 180, height: 180, borderRadius: 40, boxShadow: '0 30px 60px color-mix(in srgb, var(--brand) 30%, transparent)' }}
              />
            ) : null}
          </div>
        </div>
      </section>

      <section className="sl-section" style={{ paddingTop: 56 }}>
        <div className="sl-container">
          <SectionHead title={t('site.about.valuesTitle')} />
          <div className="sl-grid sl-grid--3">
            {VALUES.map((v) => (
              <div key={v.key} className="sl-card">
                <span className="sl-icon-box">{v.icon}</span>
                <h3>{t(`site.about.values.${v.key}.title`)}</h3>
                <p>{t(`site.about.values.${v.key}.desc`)}</p>
              </div>
            ))}
          </div>
        </div>
      </section>

      <section className="sl-section sl-section--tint">
        <div className="sl-container">
          <SectionHead title={t('home.offerings.title')} subtitle={t('home.offerings.subtitle')} />
          <OfferingCards />
        </div>
      </section>

      <section className="sl-section" style={{ textAlign: 'center' }}>
        <div className="sl-container">
          <h2 style={{ fontSize: 28, margin: '0 0 10px', color: '#0f172a' }}>{t('site.about.ctaTitle')}</h2>
          <p style={{ color: '#526072', margin: '0 0 28px' }}>{t('site.about.ctaDesc')}</p>
          <Flex gap={12} justify="center">
            <Button type="primary" size="large" onClick={() => navigate('/contact')}>
              {t('site.contactTitle')}
            </Button>
            <Button size="large" onClick={() => navigate('/reservationForm')}>
              {t('site.reservationTitle')}
            </Button>
          </Flex>
        </div>
      </section>
    </div>
  );
}
