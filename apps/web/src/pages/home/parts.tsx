import { useSyncExternalStore, type ReactNode } from 'react';
import { Button, Flex } from 'antd';
import {
  ApiOutlined,
  ArrowRightOutlined,
  CloudServerOutlined,
  CloudSyncOutlined,
  CodeOutlined,
  CustomerServiceOutlined,
  DatabaseOutlined,
  ExperimentOutlined,
  FieldTimeOutlined,
  FolderOpenOutlined,
  PoweroffOutlined,
  RocketOutlined,
  SafetyCertificateOutlined,
  UserAddOutlined,
  WalletOutlined,
} from '@ant-design/icons';
import { useNavigate } from 'react-router';
import { getToken, onTokenChange } from '../../api/session.ts';
import { useT, type MessageKey } from '../../locales/i18n.ts';
import { isRouteAvailable } from '../../route-table.ts';
import './home.css';

/** True while a session token exists; re-renders on sign-in and sign-out in any tab of the app. */
export function useSignedIn(): boolean {
  return useSyncExternalStore(onTokenChange, () => Boolean(getToken()));
}

/** The feature's page when the route table has it, else the help article that explains it. */
function targetOr(path: string | undefined, article: string): string {
  return path && isRouteAvailable(path) ? path : `/help?article=${article}`;
}

type Action = { label: MessageKey; to: string };

/** Hero calls to action: sign up / sign in when signed out; the console and renting when signed in. */
export function useHeroActions(): { primary: Action; secondary: Action } {
  const signedIn = useSignedIn();
  if (!signedIn) return { primary: { label: 'home.cta.register', to: '/register' }, secondary: { label: 'home.cta.login', to: '/login' } };
  const market = isRouteAvailable('/market/index');
  return {
    primary: { label: 'home.cta.console', to: '/center/home' },
    secondary: market ? { label: 'home.cta.rent', to: '/market/index' } : { label: 'home.cta.reservation', to: '/reservationForm' },
  };
}

export function HeroActions({ dark = false, extra }: { dark?: boolean; extra?: ReactNode }) {
  const { t } = useT();
  const navigate = useNavigate();
  const { primary, secondary } = useHeroActions();
  return (
    <Flex gap={16} wrap justify="inherit">
      <Button type="primary" size="large" style={{ height: 48, padding: '0 32px', fontSize: 16 }} onClick={() => navigate(primary.to)} data-testid="home-cta-primary">
        {t(primary.label)}
        <ArrowRightOutlined />
      </Button>
      <Button size="large" className={dark ? 'hc-ghost' : undefined} style={{ height: 48, padding: '0 28px', fontSize: 16 }} onClick={() => navigate(secondary.to)} data-testid="home-cta-secondary">
        {t(secondary.label)}
      </Button>
      {extra}
    </Flex>
  );
}

export function SectionHead({ title, subtitle }: { title: string; subtitle?: string }) {
  return (
    <div className="sl-section-head">
      <h2>{title}</h2>
      {subtitle && <p>{subtitle}</p>}
    </div>
  );
}

export type OfferingKey = 'instance' | 'llmApi' | 'finetune' | 'storage' | 'datahub';
/** The five offerings of the portal, in the order every home variant shows them. */
export const OFFERINGS: { key: OfferingKey; icon: ReactNode; path?: string; article: string }[] = [
  { key: 'instance', icon: <CloudServerOutlined />, path: '/market/index', article: 'rent' },
  { key: 'llmApi', icon: <ApiOutlined />, path: '/largeModel/modelSquare', article: 'faq' },
  { key: 'finetune', icon: <ExperimentOutlined />, path: '/center/train/index', article: 'faq' },
  { key: 'storage', icon: <FolderOpenOutlined />, path: '/center/netdisk', article: 'storage' },
  // The datahub is a dialog of the navigation bar's tools menu, not a page: its article explains it.
  { key: 'datahub', icon: <CloudSyncOutlined />, article: 'datahub' },
];

export function useOfferingLink() {
  const navigate = useNavigate();
  return (o: (typeof OFFERINGS)[number]) => navigate(targetOr(o.path, o.article));
}

export function OfferingCards() {
  const { t } = useT();
  const open = useOfferingLink();
  return (
    <div className="sl-grid sl-grid--5">
      {OFFERINGS.map((o) => (
        <div key={o.key} className="sl-card sl-card--hover sl-card--stack" data-testid={`offering-${o.key}`}>
          <span className="sl-icon-box">{o.icon}</span>
          <h3>{t(`home.offerings.${o.key}.title`)}</h3>
          <p>{t(`home.offerings.${o.key}.desc`)}</p>
          <button type="button" className="sl-card-link" onClick={() => open(o)}>
            {t('home.cta.learnMore')} <ArrowRightOutlined />
          </button>
        </div>
      ))}
    </div>
  );
}

export type GpuKey = 'rtx4090' | 'l40s' | 'a800' | 'h800';
/** Marketing copy: indicative per-GPU hourly prices in yuan; the market shows the live ones. */
export const GPUS: { key: GpuKey; name: string; vram: string; price: string; tag: MessageKey }[] = [
  { key: 'rtx4090', name: 'RTX 4090', vram: '24 GB', price: '1.98', tag: 'home.gpu.tagValue' },
  { key: 'l40s', name: 'L40S', vram: '48 GB', price: '4.28', tag: 'home.gpu.tagPopular' },
  { key: 'a800', name: 'A800', vram: '80 GB', price: '6.88', tag: 'home.gpu.tagTraining' },
  { key: 'h800', name: 'H800', vram: '80 GB', price: '15.80', tag: 'home.gpu.tagTraining' },
];

export type StepKey = 'signup' | 'recharge' | 'rent' | 'connect';
export const STEPS: { key: StepKey; icon: ReactNode }[] = [
  { key: 'signup', icon: <UserAddOutlined /> },
  { key: 'recharge', icon: <WalletOutlined /> },
  { key: 'rent', icon: <RocketOutlined /> },
  { key: 'connect', icon: <CodeOutlined /> },
];

export function StepsRow() {
  const { t } = useT();
  return (
    <div className="sl-steps">
      {STEPS.map((s, i) => (
        <div key={s.key} className="sl-step">
          <div className="sl-step-num">{s.icon}</div>
          <div className="sl-step-index">{t('home.steps.index', { n: i + 1 })}</div>
          <h4>{t(`home.steps.${s.key}.title`)}</h4>
          <p>{t(`home.steps.${s.key}.desc`)}</p>
        </div>
      ))}
    </div>
  );
}

export type WhyKey = 'billing' | 'images' | 'data' | 'noGpu' | 'support' | 'secure';
export const WHY: { key: WhyKey; icon: ReactNode }[] = [
  { key: 'billing', icon: <FieldTimeOutlined /> },
  { key: 'images', icon: <RocketOutlined /> },
  { key: 'data', icon: <DatabaseOutlined /> },
  { key: 'noGpu', icon: <PoweroffOutlined /> },
  { key: 'support', icon: <CustomerServiceOutlined /> },
  { key: 'secure', icon: <SafetyCertificateOutlined /> },
];

export function WhyGrid({ keys = WHY.map((w) => w.key), columns = 3 }: { keys?: WhyKey[]; columns?: 2 | 3 }) {
  const { t } = useT();
  return (
    <div className={`sl-grid sl-grid--${columns}`} style={{ gap: '40px 48px' }}>
      {WHY.filter((w) => keys.includes(w.key)).map((w) => (
        <div key={w.key} className="sl-why">
          <span className="sl-icon-box">{w.icon}</span>
          <div>
            <h4>{t(`home.why.${w.key}.title`)}</h4>
            <p>{t(`home.why.${w.key}.desc`)}</p>
          </div>
        </div>
      ))}
    </div>
  );
}
