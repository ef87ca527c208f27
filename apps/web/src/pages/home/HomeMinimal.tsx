import { Button, Flex } from 'antd';
import { ArrowRightOutlined, MailOutlined, PhoneOutlined } from '@ant-design/icons';
import { useNavigate } from 'react-router';
import { useT } from '../../locales/i18n.ts';
import { useTenant } from '../../modules/tenant.tsx';
import { HeroActions, OFFERINGS, STEPS, WhyGrid, useOfferingLink } from './parts.tsx';

/** SPEC §2 home variant 2 (/pagehtml): a minimal partner portal, centred hero and a direct contact. */
export function HomeMinimal() {
  const { t } = useT();
  const tenant = useTenant();
  const navigate = useNavigate();
  const open = useOfferingLink();
  const { config } = tenant;

  return (
    <div data-testid="home-minimal">
      <section className="hm-hero">
        <div className="sl-container">
          {tenant.hash_rate_logo && <img className="hm-logo" src={tenant.hash_rate_logo} alt="" />}
          <h1>{tenant.title}</h1>
          <h2>{tenant.hash_rate_slogan_title}</h2>
          <p>{tenant.hash_rate_slogan}</p>
          <Flex justify="center">
            <HeroActions />
          </Flex>
        </div>
      </section>

      <section className="sl-section" style={{ paddingTop: 24 }}>
        <div className="sl-container">
          <h3 className="hm-title">{t('home.minimal.servicesTitle')}</h3>
          <div className="hm-list">
            {OFFERINGS.map((o) => (
              <div key={o.key} className="hm-item" data-testid={`offering-${o.key}`}>
                <span className="sl-icon-box">{o.icon}</span>
                <h4>{t(`home.offerings.${o.key}.title`)}</h4>
                <p>{t(`home.offerings.${o.key}.desc`)}</p>
                <button type="button" className="sl-card-link" onClick={() => open(o)}>
                  {t('home.cta.learnMore')} <ArrowRightOutlined />
                </button>
              </div>
            ))}
          </div>
        </div>
      </section>

      <section className="sl-section sl-section--tint" style={{ padding: '64px 0' }}>
        <div className="sl-container">
          <h3 className="hm-title">{t('home.minimal.stepsTitle')}</h3>
          <div className="hm-steps">
            {STEPS.map((s, i) => (
              <div key={s.key} className="hm-step">
                <b>{i + 1}</b>
                <span>{t(`home.steps.${s.key}.title`)}</span>
                <small>{t(`home.steps.${s.key}.desc`)}</small>
              </div>
            ))}
          </div>
        </div>
      </section>

      <section className="sl-section" style={{ padding: '72px 0 40px' }}>
        <div className="sl-container">
          <h3 className="hm-title">{t('home.minimal.whyTitle')}</h3>
          <WhyGrid keys={['billing', 'data', 'support']} />
        </div>
      </section>

      <section className="sl-section" style={{ paddingTop: 40 }}>
        <div className="sl-container">
          <div className="hm-contact" data-testid="home-contact">
            <h3>{t('home.minimal.contactTitle')}</h3>
            <p>{t('home.minimal.contactDesc')}</p>
            <div className="hm-contact-rows">
              <div className="hm-contact-row">
                <span>{t('home.minimal.company')}</span>
                <b>{config.companyName}</b>
              </div>
              <div className="hm-contact-row">
                <span>
                  <PhoneOutlined /> {t('home.minimal.phone')}
                </span>
                <b>
                  <a href={`tel:${config.contactPhone}`}>{config.contactPhone}</a>
                </b>
              </div>
              <div className="hm-contact-row">
                <span>
                  <MailOutlined /> {t('home.minimal.email')}
                </span>
                <b>
                  <a href={`mailto:${config.contactEmail}`}>{config.contactEmail}</a>
                </b>
              </div>
            </div>
            <Flex gap={12} justify="center">
              <Button type="primary" size="large" onClick={() => navigate('/reservationForm')}>
                {t('home.cta.reservation')}
              </Button>
              <Button size="large" onClick={() => navigate('/contact')}>
                {t('home.cta.contact')}
              </Button>
            </Flex>
          </div>
        </div>
      </section>
    </div>
  );
}
