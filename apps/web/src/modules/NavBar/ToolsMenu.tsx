import { useState } from 'react';
import { Button, Dropdown, Spin, Tag } from 'antd';
import type { MenuProps } from 'antd';
import { CloudServerOutlined, DownOutlined, ReloadOutlined, ToolOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import type { Datacenter } from '@suanli/contract/datahub';
import { datacentersQuery } from '../../api/queries/datahub.ts';
import { useT } from '../../locales/i18n.ts';
import { DatahubDialog } from '../DatahubDialog/DatahubDialog.tsx';

/**
 * SPEC §2: the 工具 menu of the nav bar, one 数据中转站 entry per datacenter; an entry opens the
 * DatahubDialog of its datacenter. Datacenters are asked the first time the menu opens.
 */
export function ToolsMenu() {
  const { t } = useT();
  const [asked, setAsked] = useState(false);
  const [target, setTarget] = useState<Datacenter | null>(null);
  const [open, setOpen] = useState(false);
  /** Datahubs whose activation finished while this page was open: marked in the menu. */
  const [activated, setActivated] = useState<ReadonlySet<number>>(new Set());
  const datacenters = useQuery({ ...datacentersQuery(), enabled: asked });

  let items: MenuProps['items'];
  if (!asked || datacenters.isPending) {
    items = [{ key: 'loading', disabled: true, label: <span data-testid="nav-tools-loading"><Spin size="small" style={{ marginRight: 8 }} />{t('datahub.menu.loading')}</span> }];
  } else if (datacenters.isError) {
    items = [{ key: 'retry', icon: <ReloadOutlined />, danger: true, label: <span data-testid="nav-tools-error">{t('datahub.menu.error')}</span> }];
  } else if (datacenters.data.length === 0) {
    items = [{ key: 'empty', disabled: true, label: <span data-testid="nav-tools-empty">{t('datahub.menu.empty')}</span> }];
  } else {
    items = [
      {
        key: 'datahub',
        type: 'group',
        label: t('nav.datahub'),
        children: datacenters.data.map((dc) => ({
          key: `dc-${dc.dataCenterId}`,
          icon: <CloudServerOutlined />,
          label: (
            <span data-testid={`nav-datahub-${dc.dataCenterId}`}>
              {dc.dataCenterName}
              {activated.has(dc.dataCenterId) && (
                <Tag color="success" style={{ marginInlineStart: 8 }}>
                  {t('datahub.statusActive')}
                </Tag>
              )}
            </span>
          ),
        })),
      },
    ];
  }

  const onClick: MenuProps['onClick'] = ({ key }) => {
    if (key === 'retry') {
      void datacenters.refetch();
      return;
    }
    const dc = datacenters.data?.find((d) => `dc-${d.dataCenterId}` === key);
    if (!dc) return;
    setTarget(dc);
    setOpen(true);
  };

  return (
    <>
      <Dropdown
        menu={{ items, onClick }}
        trigger={['hover', 'click']}
        placement="bottomRight"
        onOpenChange={(next) => {
          if (next) setAsked(true);
        }}
      >
        <Button type="text" icon={<ToolOutlined />} data-testid="nav-tools">
          {t('nav.tools')}
          <DownOutlined style={{ fontSize: 10 }} />
        </Button>
      </Dropdown>
      {target && (
        <DatahubDialog
          key={target.dataCenterId}
          datacenter={target}
          open={open}
          onClose={() => setOpen(false)}
          onActivated={(hub) => setActivated((prev) => new Set(prev).add(hub.dataCenterId))}
        />
      )}
    </>
  );
}
