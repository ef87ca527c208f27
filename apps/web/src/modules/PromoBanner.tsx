import { Alert, Button } from 'antd';
import { useNavigate } from 'react-router';
import { useT } from '../locales/i18n.ts';
import { useTenant } from './tenant.tsx';
import { isRouteAvailable } from '../route-table.ts';

/** SPEC §2: the image-series promo banner shows when the domain's html style is 0. */
export function PromoBanner() {
  const { t } = useT();
  const tenant = useTenant();
  const navigate = useNavigate();
  if (tenant.html_style !== 0) return null;
  const target = isRouteAvailable('/images/index') ? '/images/index' : '/help';
  return (
    <Alert
      banner
      type="info"
      showIcon={false}
      data-testid="promo-banner"
      style={{ textAlign: 'center', background: 'linear-gradient(90deg, #e6f4ff, #f0f5ff)', border: 'none' }}
      title={
        <span>
          {t('nav.promo')}
          <Button type="link" size="small" onClick={() => navigate(target)}>
            {t('nav.promoAction')}
          </Button>
        </span>
      }
    />
  );
}
