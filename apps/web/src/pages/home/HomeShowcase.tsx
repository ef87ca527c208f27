import { Button, Flex } from 'antd';
import { BankOutlined, PhoneOutlined, PictureOutlined, RocketOutlined, TeamOutlined } from '@ant-design/icons';
import type { ReactNode } from 'react';
import { useNavigate } from 'react-router';
import { useT } from '../../locales/i18n.ts';
import { useTenant } from '../../modules/tenant.tsx';
import { HeroActions, OFFERINGS, SectionHead, StepsRow, WhyGrid, useOfferingLink } from './parts.tsx';

type ScenarioKey = 'research' | 'startup' | 'enterprise' | 'creative';
const SCENARIOS: { key: ScenarioKey; icon: ReactNode; background: string }[] = [
  { key: 'research', icon: <BankOutlined />, background: 'linear-gradient(135deg, var(--brand), color-mix(in srgb, var(--brand) 55%, #0f172a))' },
  { key: 'startup', icon: <RocketOutlined />, background: 'linear-gradient(135deg, #2f54eb, #1d39c4 60%, #10239e)' },
  { key: 'enterprise', icon: <TeamOutlined />, background: 'linear-gradient(135deg, #334155, #0f172a)' },
  { key: 'creative', icon: <PictureOutlined />, background: 'linear-gradient(135deg, #9254de, #531dab)' },
];

const STAT_KEYS = ['billing', 'disk', 'storage', 'support'] as const;

/** A falling loss curve: the fine-tuning job the hero panel pretends to watch. */
function LossCurve() {
  const points = Array.from({ length: 40 }, (_, i) => {
    const x = (i / 39) * 100;
    // SVG y grows downwards: a high loss sits near the top and falls towards the bottom.
    const y = 82 - 70 * Math.exp(-i / 9) - (i % 3 === 0 ? 3 : i % 3 === 1 ? -2 : 1);
    return `${x.toFixed(1)},${y.toFixed(1)}`;
  });
  return (
    <svg viewBox="0 0 100 90" preserveAspectRatio="none" style={{ width: '100%', height: 150, display: 'block' }} aria-hidden="true">
      <defs>
        <linearGradient id="hs-area" x1="0" x2="0" y1="0" y2="1">
          <stop offset="0%" stopColor="var(--brand)" stopOpacity="0.28" />
          <stop offset="100%" stopColor="var(--brand)" stopOpacity="0" />
        </linearGradient>
      </defs>
      {[20, 40, 60, 80].map((y) => (
        <line key={y} x1="0" x2="100" y1={y} y2={y} stroke="#eef2f6" strokeWidth="0.4" />
      ))}
      <polygon points={`0,90 ${points.join(' ')} 100,90`} fill="url(#hs-area)" />
      <polyline points={points.join(' ')} fill="none" stroke="var(--brand)" strokeWidth="1.2" vectorEffect="non-scaling-stroke" style={{ strokeWidth: 2.5 }} />
    </svg>
  );
}

function HeroPanel() {
  const { t } = useT();
  const bars = [62, 88, 94, 71, 97, 90, 85, 99];
  return (
    <div className="hs-panel" aria-hidden="true">
      <div className="hs-panel-head">
        <span>llama-3-8b · LoRA · 8 × A800</span>
        <span className="hs-panel-badge">● {t('home.mock.running')}</span>
      </div>
      <LossCurve />
      <div className="hs-panel-metrics">
        <div className="hs-metric">
          <b>0.398</b>
          <span>{t('home.mock.loss')}</span>
        </div>
        <div className="hs-metric">
          <b>1,250 / 5,000</b>
          <span>{t('home.mock.steps')}</span>
        </div>
        <div className="hs-metric">
          <span>{t('home.mock.gpuUtil')}</span>
          <div className="hs-bars">
            {bars.map((h, i) => (
              <i key={i} style={{ height: `${h}%` }} />
            ))}
          </div>
        </div>
      </div>
    </div>
  );
}

/** SPEC §2 home variant 1 (/pagehome): a showcase for research groups and enterprises. */
export function HomeShowcase() {
  const { t } = useT();
  const tenant = useTenant();
  const navigate = useNavigate();
  const open = useOfferingLink();

  return (
    <div data-testid="home-showcase">
      <section className="hs-hero">
        <div className="sl-container hs-hero-grid">
          <div>
            <span className="sl-eyebrow">{t('home.showcase.eyebrow')}</span>
            <h1>{tenant.hash_rate_slogan_title}</h1>
            <p className="hs-hero-slogan">{tenant.hash_rate_slogan}</p>
            <HeroActions
              extra={
                <Button type="link" size="large" style={{ height: 48 }} onClick={() => navigate('/reservationForm')}>
                  {t('home.cta.reservation')}
                </Button>
              }
            />
          </div>
          <HeroPanel />
        </div>
      </section>

      <section className="hs-stats">
        <div className="sl-container">
          <div className="hs-stats-inner">
            {STAT_KEYS.map((k) => (
              <div key={k} className="hs-stat">
                <b>{t(`home.stats.${k}.value`)}</b>
                <span>{t(`home.stats.${k}.label`)}</span>
              </div>
            ))}
          </div>
        </div>
      </section>

      <section className="sl-section">
        <div className="sl-container">
          <SectionHead title={t('home.scenarios.title')} subtitle={t('home.scenarios.subtitle')} />
          <div className="sl-grid sl-grid--2">
            {SCENARIOS.map((s) => (
              <div key={s.key} className="hs-scenario" style={{ background: s.background }} data-testid={`scenario-${s.key}`}>
                <span className="hs-scenario-icon">{s.icon}</span>
                <h3>{t(`home.scenarios.${s.key}.title`)}</h3>
                <p>{t(`home.scenarios.${s.key}.desc`)}</p>
                <div className="hs-scenario-tags">{t(`home.scenarios.${s.key}.tags`)}</div>
              </div>
            ))}
          </div>
        </div>
      </section>

      <section className="sl-section sl-section--tint">
        <div className="sl-container">
          <SectionHead title={t('home.showcase.productsTitle')} subtitle={t('home.offerings.subtitle')} />
          <div className="sl-grid sl-grid--3">
            {OFFERINGS.map((o) => (
              <div key={o.key} className="sl-card sl-card--hover hs-product" role="button" tabIndex={0} style={{ cursor: 'pointer' }} onClick={() => open(o)} onKeyDown={(e) => e.key === 'Enter' && open(o)} data-testid={`offering-${o.key}`}>
                <span className="sl-icon-box">{o.icon}</span>
                <div>
                  <h3>{t(`home.offerings.${o.key}.title`)}</h3>
                  <p>{t(`home.offerings.${o.key}.desc`)}</p>
                </div>
              </div>
            ))}
            <div className="sl-card hs-product" style={{ background: 'color-mix(in srgb, var(--brand) 6%, #fff)', borderStyle: 'dashed' }}>
              <span className="sl-icon-box">
                <PhoneOutlined />
              </span>
              <div>
                <h3>{t('home.showcase.customTitle')}</h3>
                <p>{t('home.showcase.customDesc')}</p>
                <button type="button" className="sl-card-link" onClick={() => navigate('/reservationForm')}>
                  {t('home.cta.reservation')} →
                </button>
              </div>
            </div>
          </div>
        </div>
      </section>

      <section className="sl-section">
        <div className="sl-container">
          <SectionHead title={t('home.steps.title')} subtitle={t('home.steps.subtitle')} />
          <StepsRow />
        </div>
      </section>

      <section className="sl-section sl-section--tint">
        <div className="sl-container">
          <SectionHead title={t('home.why.title', { title: tenant.title })} subtitle={t('home.why.subtitle')} />
          <WhyGrid />
        </div>
      </section>

      <section className="sl-section">
        <div className="sl-container">
          <div className="hs-cta">
            <div>
              <h2>{t('home.showcase.ctaTitle')}</h2>
              <p>{t('home.showcase.ctaDesc')}</p>
            </div>
            <Flex gap={12} vertical align="stretch" style={{ flex: 'none' }}>
              <Button size="large" style={{ height: 48, padding: '0 32px', fontWeight: 600 }} onClick={() => navigate('/reservationForm')} data-testid="home-reservation">
                {t('home.cta.reservation')}
              </Button>
              <span style={{ color: 'rgba(255,255,255,.85)', textAlign: 'center' }}>
                <PhoneOutlined /> {tenant.config.contactPhone}
              </span>
            </Flex>
          </div>
        </div>
      </section>
    </div>
  );
}
