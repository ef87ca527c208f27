import { Button, Typography } from 'antd';
import { BankOutlined, ClockCircleOutlined, CustomerServiceOutlined, FormOutlined, MailOutlined, PhoneOutlined, ReadOutlined } from '@ant-design/icons';
import type { ReactNode } from 'react';
import { useNavigate } from 'react-router';
import { useT } from '../../locales/i18n.ts';
import { useTenant } from '../../modules/tenant.tsx';
import '../home/home.css';

function InfoCard({ icon, label, children, testId }: { icon: ReactNode; label: string; children: ReactNode; testId: string }) {
  return (
    <div className="sl-card" style={{ display: 'flex', gap: 16, alignItems: 'flex-start' }} data-testid={testId}>
      <span className="sl-icon-box">{icon}</span>
      <div style={{ minWidth: 0 }}>
        <div style={{ color: '#5f6b7d', fontSize: 13, marginBottom: 6 }}>{label}</div>
        <div style={{ fontSize: 16, color: '#0f172a', fontWeight: 500, wordBreak: 'break-all' }}>{children}</div>
      </div>
    </div>
  );
}

/** SPEC §2 /contact: the tenant's company and contact details, and the way to the reservation form. */
export function ContactPage() {
  const { t } = useT();
  const { config } = useTenant();
  const navigate = useNavigate();

  return (
    <div data-testid="contact-page" style={{ background: '#f6f8fb' }}>
      <section
        style={{
          padding: '72px 0 56px',
          textAlign: 'center',
          background: 'radial-gradient(ellipse 60% 100% at 50% 0%, color-mix(in srgb, var(--brand) 18%, transparent), transparent 70%), linear-gradient(180deg, #fff, #f6f8fb)',
        }}
      >
        <h1 style={{ fontSize: 36, margin: '0 0 12px', color: '#0f172a' }}>{t('site.contact.heading')}</h1>
        <p style={{ margin: 0, color: '#526072', fontSize: 16 }}>{t('site.contact.desc')}</p>
      </section>

      <div className="sl-container" style={{ paddingBottom: 80 }}>
        <div className="sl-grid sl-grid--2">
          <InfoCard icon={<BankOutlined />} label={t('site.contact.company')} testId="contact-company">
            {config.companyName}
          </InfoCard>
          <InfoCard icon={<PhoneOutlined />} label={t('site.contact.phone')} testId="contact-phone">
            <Typography.Text copyable={{ text: config.contactPhone }} style={{ fontSize: 16 }}>
              <a href={`tel:${config.contactPhone}`}>{config.contactPhone}</a>
            </Typography.Text>
          </InfoCard>
          <InfoCard icon={<MailOutlined />} label={t('site.contact.email')} testId="contact-email">
            <Typography.Text copyable={{ text: config.contactEmail }} style={{ fontSize: 16 }}>
              <a href={`mailto:${config.contactEmail}`}>{config.contactEmail}</a>
            </Typography.Text>
          </InfoCard>
          <InfoCard icon={<ClockCircleOutlined />} label={t('site.contact.hours')} testId="contact-hours">
            {t('site.contact.hoursValue')}
          </InfoCard>
        </div>

        <div className={`sl-grid ${config.restricted ? '' : 'sl-grid--2'}`} style={{ marginTop: 24 }}>
          <div
            className="sl-card"
            style={{ background: 'linear-gradient(120deg, var(--brand), color-mix(in srgb, var(--brand) 60%, #0f172a))', border: 'none', color: '#fff', padding: 36 }}
          >
            <CustomerServiceOutlined style={{ fontSize: 32 }} />
            <h3 style={{ color: '#fff', fontSize: 22 }}>{t('site.contact.salesTitle')}</h3>
            <p style={{ color: 'rgba(255,255,255,.85)', marginBottom: 24 }}>{t('site.contact.salesDesc')}</p>
            <Button size="large" icon={<FormOutlined />} onClick={() => navigate('/reservationForm')} style={{ color: 'var(--brand)', border: 'none' }} data-testid="contact-reservation">
              {t('site.contact.salesAction')}
            </Button>
          </div>
          {/* A restricted tenant has no help centre (PRODUCT.md): don't point at it. */}
          {!config.restricted && (
            <div className="sl-card" style={{ padding: 36 }}>
              <ReadOutlined style={{ fontSize: 32, color: 'var(--brand)' }} />
              <h3 style={{ fontSize: 22 }}>{t('site.contact.helpTitle')}</h3>
              <p style={{ marginBottom: 24 }}>{t('site.contact.helpDesc')}</p>
              <Button size="large" onClick={() => navigate('/help')}>
                {t('site.contact.helpAction')}
              </Button>
            </div>
          )}
        </div>
      </div>
    </div>
  );
}
