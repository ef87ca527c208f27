import { Button, Flex, Tag } from 'antd';
import { CheckCircleFilled, ThunderboltOutlined } from '@ant-design/icons';
import { useNavigate } from 'react-router';
import { useT } from '../../locales/i18n.ts';
import { useTenant } from '../../modules/tenant.tsx';
import { isRouteAvailable } from '../../route-table.ts';
import { GPUS, HeroActions, OfferingCards, SectionHead, StepsRow, WhyGrid, useSignedIn } from './parts.tsx';

/** A console session as a picture of the product: what a rented GPU looks like once connected. */
function TerminalMock() {
  return (
    <div className="hc-terminal" aria-hidden="true">
      <div className="hc-terminal-bar">
        <i style={{ background: '#ff5f57' }} />
        <i style={{ background: '#febc2e' }} />
        <i style={{ background: '#28c840' }} />
        <span style={{ marginLeft: 8 }}>root@a800: ~ — ssh</span>
      </div>
      <pre>
        <span className="c-prompt">root@a800:~#</span> nvidia-smi --query-gpu=name,memory.total{'\n'}
        <span className="c-dim">name, memory.total [MiB]</span>{'\n'}
        NVIDIA A800-SXM4-80GB, <span className="c-hi">81920 MiB</span>{'\n'}
        NVIDIA A800-SXM4-80GB, <span className="c-hi">81920 MiB</span>{'\n'}
        <span className="c-dim">… × 8</span>{'\n'}
        <span className="c-prompt">root@a800:~#</span> torchrun --nproc_per_node=8 train.py{'\n'}
        <span className="c-dim">[rank0]</span> step 1200/5000  loss <span className="c-hi">0.4137</span>  <span className="c-ok">1.9 it/s</span>{'\n'}
        <span className="c-dim">[rank0]</span> step 1250/5000  loss <span className="c-hi">0.3981</span>  <span className="c-ok">1.9 it/s</span>{'\n'}
        <span className="c-prompt">root@a800:~#</span> <span className="c-hi">▍</span>
      </pre>
    </div>
  );
}

/** SPEC §2 home variant 0 (/page): the classic console landing, dark hero. The promo banner comes from RootLayout. */
export function HomeClassic() {
  const { t } = useT();
  const tenant = useTenant();
  const navigate = useNavigate();
  const signedIn = useSignedIn();
  // Until the market exists, a signed-in 立即租用 asks sales for that GPU (the form comes pre-filled).
  const rentTarget = (gpu: string) =>
    !signedIn ? '/register' : isRouteAvailable('/market/index') ? '/market/index' : `/reservationForm?gpu=${encodeURIComponent(gpu)}`;

  return (
    <div data-testid="home-classic">
      <section className="hc-hero">
        <div className="sl-container hc-hero-grid">
          <div>
            <span className="sl-eyebrow">
              <ThunderboltOutlined /> {tenant.title} · {t('home.heroTag')}
            </span>
            <h1>
              <span>{tenant.hash_rate_slogan_title}</span>
            </h1>
            <p className="hc-hero-slogan">{tenant.hash_rate_slogan}</p>
            <HeroActions dark />
            <div className="hc-points">
              {(['billing', 'images', 'connect'] as const).map((k) => (
                <span key={k}>
                  <CheckCircleFilled /> {t(`home.heroPoints.${k}`)}
                </span>
              ))}
            </div>
          </div>
          <TerminalMock />
        </div>
      </section>

      <section className="hc-gpus">
        <div className="sl-container">
          <div className="sl-grid sl-grid--4">
            {GPUS.map((g) => (
              <div key={g.key} className="hc-gpu sl-card--hover" data-testid={`gpu-${g.key}`}>
                <div className="hc-gpu-top">
                  <span className="hc-gpu-name">{g.name}</span>
                  <Tag color={g.key === 'rtx4090' ? 'green' : g.key === 'l40s' ? 'blue' : 'purple'} style={{ marginInlineEnd: 0 }}>
                    {t(g.tag)}
                  </Tag>
                </div>
                <div className="hc-gpu-vram">
                  {t('home.gpu.vram')} {g.vram}
                </div>
                <div className="hc-gpu-use">{t(`home.gpu.uses.${g.key}`)}</div>
                <div className="hc-gpu-price">
                  {t('home.gpu.priceBefore') && <small>{t('home.gpu.priceBefore')}</small>}
                  <span>¥</span>
                  <strong>{g.price}</strong>
                  <small>{t('home.gpu.priceAfter')}</small>
                </div>
                <Button type="primary" ghost block onClick={() => navigate(rentTarget(g.name))} style={{ marginTop: 16 }}>
                  {t('home.cta.rent')}
                </Button>
              </div>
            ))}
          </div>
          <div className="hc-gpu-note">* {t('home.gpu.subtitle')}</div>
        </div>
      </section>

      <section className="sl-section">
        <div className="sl-container">
          <SectionHead title={t('home.offerings.title')} subtitle={t('home.offerings.subtitle')} />
          <OfferingCards />
        </div>
      </section>

      <section className="sl-section sl-section--tint">
        <div className="sl-container">
          <SectionHead title={t('home.steps.title')} subtitle={t('home.steps.subtitle')} />
          <StepsRow />
        </div>
      </section>

      <section className="sl-section">
        <div className="sl-container">
          <SectionHead title={t('home.why.title', { title: tenant.title })} subtitle={t('home.why.subtitle')} />
          <WhyGrid />
        </div>
      </section>

      <section className="hc-cta">
        <div className="sl-container">
          <h2>{t('home.classic.ctaTitle')}</h2>
          <p>{t('home.classic.ctaDesc')}</p>
          <Flex justify="center">
            <HeroActions dark />
          </Flex>
        </div>
      </section>
    </div>
  );
}
