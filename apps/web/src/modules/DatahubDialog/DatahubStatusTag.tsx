import { Tag } from 'antd';
import { CheckCircleOutlined, ClockCircleOutlined, SyncOutlined } from '@ant-design/icons';
import type { Datahub } from '@suanli/contract/datahub';
import { datahubStatus } from '@suanli/domain/datahub';
import { useT } from '../../locales/i18n.ts';

/** SPEC §4: 待激活 (no datahub), 激活中 (status 0, spinning), 已激活 (status 1). */
export function DatahubStatusTag({ hub }: { hub: Datahub | null }) {
  const { t } = useT();
  if (!hub) {
    return (
      <Tag icon={<ClockCircleOutlined />} color="default" data-testid="datahub-status" data-status="inactive">
        {t('datahub.statusInactive')}
      </Tag>
    );
  }
  if (hub.status === datahubStatus.activating) {
    return (
      <Tag icon={<SyncOutlined spin />} color="processing" data-testid="datahub-status" data-status="activating">
        {t('datahub.statusActivating')}
      </Tag>
    );
  }
  return (
    <Tag icon={<CheckCircleOutlined />} color="success" data-testid="datahub-status" data-status="activated">
      {t('datahub.statusActive')}
    </Tag>
  );
}
