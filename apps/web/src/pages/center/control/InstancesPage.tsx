import { useState } from 'react';
import { Badge, Button, Card, Dropdown, Empty, Flex, Input, Result, Space, Table, Tabs, Tag, Tooltip, Typography, type ButtonProps, type TableColumnsType } from 'antd';
import { CodeOutlined, EyeInvisibleOutlined, EyeOutlined, MoreOutlined, PlusOutlined, PoweroffOutlined, ReloadOutlined, ExperimentOutlined, CaretRightOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router';
import type { InstanceItem, InstanceStatus } from '@suanli/contract/instance';
import type { ChargeType } from '@suanli/contract/order';
import { formatDateTime, formatMoney } from '@suanli/domain/format';
import { TRANSITIONAL, instancesPageQuery, statusTagsQuery, useInstanceAction, type InstanceAction } from '../../../api/queries/compute.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { useFeedback } from '../../../modules/feedback.ts';
import { useScrollRegion } from '../../../modules/useScrollRegion.ts';
import { useT } from '../../../locales/i18n.ts';
import { pathOf } from '../../../route-table.ts';
import { ServerText } from '../../market/ServerText.tsx';
import { ChargeTypeFilter } from '../../market/ChargeTypeFilter.tsx';
import { chargeLabel } from '../../market/labels.ts';
import { InstanceModal, type ModalKind } from './InstanceModals.tsx';
// Issue #10 (web): billing changes, disks and the no-GPU mode.
import { NO_GPU_CPU_CORES, NO_GPU_HOURLY, NO_GPU_MEMORY_GB } from '@suanli/contract/instance-ops';
import { useNoGpuPowerOn } from '../../../api/queries/instance-ops.ts';
import { NoGpuTag } from './ops-shared.tsx';
import { SnapshotModal } from './SnapshotModal.tsx';
import { CopyDataModal } from './CopyDataModal.tsx';

const MARKET_PATH = pathOf('market');
const SHELL_PATH = pathOf('webshell');
const CLONE_PATH = pathOf('controlClone');
// Issue #10 (web)
const OPS_PATHS = {
  change_contract: pathOf('changeContract'),
  to_payg: pathOf('changeContractPreview'),
  renewal: pathOf('renewal'),
  expand: pathOf('expandControl'),
  expand_disk: pathOf('expandControl'),
} as const;
type OpsKey = keyof typeof OPS_PATHS;
/** The page of a change for an instance. */
export const opsHref = (key: OpsKey, instanceId: string) => `${OPS_PATHS[key]}?instanceId=${encodeURIComponent(instanceId)}${key === 'expand_disk' ? '&tab=disk' : ''}`;

const STATUS_COLOR: Record<InstanceStatus, string> = {
  creating: 'processing',
  starting: 'processing',
  running: 'success',
  stopping: 'processing',
  stopped: 'default',
  releasing: 'warning',
  released: 'default',
  failed: 'error',
};

/** Which actions an instance in a status offers. */
export function allowed(status: InstanceStatus) {
  const settled = status === 'running' || status === 'stopped' || status === 'failed';
  return {
    powerOn: status === 'stopped' || status === 'failed',
    powerOff: status === 'running',
    shell: status === 'running',
    release: settled,
    rename: status !== 'released' && status !== 'releasing',
    password: settled,
    init: status === 'stopped' || status === 'running',
    changeImage: status === 'stopped',
  };
}

/** Issue #10: which changes an instance offers (the pages re-check and the server decides). */
export function allowedOps(inst: Pick<InstanceItem, 'status' | 'chargeType'>) {
  const settled = inst.status === 'running' || inst.status === 'stopped';
  const payg = inst.chargeType === 'payg';
  return {
    change_contract: payg && settled,
    to_payg: !payg && settled,
    // An expired prepaid instance is stopped (or failed) until released: it can still be renewed.
    renewal: !payg && inst.status !== 'released' && inst.status !== 'releasing',
    expand: settled,
    expand_disk: settled,
    no_gpu: payg && inst.status === 'stopped',
  };
}

/** A menu item's label with the test id e2e tests click. */
const menuLabel = (key: string, text: string) => <span data-testid={`instance-menu-${key}`}>{text}</span>;

function SshCell({ inst }: { inst: InstanceItem }) {
  const { t } = useT();
  const [shown, setShown] = useState(false);
  const tips: [string, string] = [t('compute.instances.copy'), t('compute.instances.copied')];
  return (
    <Flex vertical gap={2} style={{ minWidth: 0, fontSize: 12 }}>
      <Typography.Text copyable={{ text: inst.ssh.command, tooltips: tips }} style={{ fontSize: 12, fontFamily: 'monospace', wordBreak: 'break-all' }} data-testid="instance-ssh-command">
        {inst.ssh.command}
      </Typography.Text>
      <Flex align="center" gap={4}>
        <Typography.Text type="secondary" style={{ fontSize: 12 }}>
          {t('compute.instances.password')}
        </Typography.Text>
        <Typography.Text copyable={{ text: inst.password, tooltips: tips }} style={{ fontSize: 12, fontFamily: 'monospace' }} data-testid="instance-password">
          {shown ? inst.password : '••••••••'}
        </Typography.Text>
        <Button
          type="text"
          size="small"
          icon={shown ? <EyeInvisibleOutlined /> : <EyeOutlined />}
          aria-label={shown ? t('compute.instances.hide') : t('compute.instances.reveal')}
          aria-pressed={shown}
          onClick={() => setShown((v) => !v)}
          data-testid="instance-password-toggle"
        />
      </Flex>
    </Flex>
  );
}

function ChargeCell({ inst }: { inst: InstanceItem }) {
  const { t } = useT();
  return (
    <Flex vertical gap={2} style={{ fontSize: 12 }}>
      <span>{chargeLabel(inst.chargeType, inst.period)}</span>
      {inst.chargeType === 'payg' ? (
        <Typography.Text type="secondary" style={{ fontSize: 12 }}>
          {/* Issue #10 (web): a no-GPU run is metered at its fixed price. */}
          {t('compute.instances.hourly', { amount: formatMoney(inst.noGpu ? NO_GPU_HOURLY : inst.hourly) })}
        </Typography.Text>
      ) : (
        inst.expiresAt && (
          <Space size={6} wrap>
            <Typography.Text type="secondary" style={{ fontSize: 12 }} data-testid="instance-expires-at">
              {t('compute.instances.expiresAt', { time: formatDateTime(inst.expiresAt) })}
            </Typography.Text>
            {/* Issue #10 (web): renewal of a prepaid instance. */}
            {allowedOps(inst).renewal && (
              <Link to={opsHref('renewal', inst.id)} style={{ fontSize: 12 }} data-testid="instance-renew">
                {t('ops.common.renew')}
              </Link>
            )}
          </Space>
        )
      )}
      {inst.releaseAt ? (
        <Typography.Text type="danger" style={{ fontSize: 12 }} data-testid="instance-release-warning">
          {inst.status === 'stopped' ? t('compute.instances.releaseWarning', { time: formatDateTime(inst.releaseAt) }) : t('compute.instances.releaseAt', { time: formatDateTime(inst.releaseAt) })}
        </Typography.Text>
      ) : (
        inst.chargeType === 'prepaid' &&
        inst.expiresAt &&
        Date.parse(inst.expiresAt) - Date.now() < 3 * 86_400_000 && (
          <Typography.Text type="warning" style={{ fontSize: 12 }} data-testid="instance-expiry-warning">
            {t('compute.instances.expiryWarning', { time: formatDateTime(inst.expiresAt) })}
          </Typography.Text>
        )
      )}
    </Flex>
  );
}

/** /center/control/index: the user's container instances, live, with their actions. */
export function InstancesPage() {
  const { t } = useT();
  const navigate = useNavigate();
  const { message, modal } = useFeedback();
  const [status, setStatus] = useState<InstanceStatus | 'all'>('all');
  const [chargeType, setChargeType] = useState<ChargeType | undefined>();
  const [keyword, setKeyword] = useState('');
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(20);
  const [dialog, setDialog] = useState<{ kind: ModalKind; instance: InstanceItem } | null>(null);
  const [opsDialog, setOpsDialog] = useState<{ kind: 'snapshot' | 'copy_data'; instance: InstanceItem } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const list = useQuery(instancesPageQuery({ page, pageSize, status: status === 'all' ? undefined : status, chargeType, keyword: keyword || undefined }));
  const tags = useQuery(statusTagsQuery());
  const action = useInstanceAction();
  const noGpu = useNoGpuPowerOn();
  const tableBox = useScrollRegion<HTMLDivElement>(t('compute.instances.title'));

  const run = (a: InstanceAction) => {
    setBusy(`${a.instanceId}:${a.kind}`);
    action.mutate(a, {
      onSuccess: () => void message.success(t('compute.instances.done')),
      // The driver may be unavailable (409/503): the server's Chinese explains why.
      onError: (err) => void message.error({ content: <ServerText>{getErrorMessage(err)}</ServerText>, duration: 5 }),
      onSettled: () => setBusy(null),
    });
  };

  const confirmPowerOff = (inst: InstanceItem) =>
    modal.confirm({
      title: t('compute.instances.powerOffConfirmTitle', { name: inst.name }),
      content: t('compute.instances.powerOffConfirm'),
      okText: t('compute.instances.powerOff'),
      okButtonProps: { danger: true },
      cancelText: t('common.cancel'),
      onOk: () => run({ kind: 'power_off', instanceId: inst.id }),
    });

  const confirmInit = (inst: InstanceItem) =>
    modal.confirm({
      title: t('compute.instances.initTitle', { name: inst.name }),
      content: t('compute.instances.initConfirm'),
      okText: t('compute.instances.resetSystem'),
      okButtonProps: { danger: true },
      cancelText: t('common.cancel'),
      onOk: () => run({ kind: 'init', instanceId: inst.id }),
    });

  // Issue #10 (web): 无卡模式 — a stopped pay-as-you-go instance started without its GPUs, at a fixed price.
  const confirmNoGpu = (inst: InstanceItem) =>
    modal.confirm({
      title: t('ops.noGpu.title', { name: inst.name }),
      content: (
        <Flex vertical gap={4} data-testid="nogpu-confirm">
          <span>{t('ops.noGpu.content')}</span>
          <span>{t('ops.noGpu.spec', { cpu: NO_GPU_CPU_CORES, mem: NO_GPU_MEMORY_GB })}</span>
          <strong>{t('ops.noGpu.price', { price: formatMoney(NO_GPU_HOURLY) })}</strong>
        </Flex>
      ),
      okText: t('ops.noGpu.ok'),
      okButtonProps: { 'data-testid': 'nogpu-confirm-ok' } as ButtonProps,
      cancelText: t('common.cancel'),
      onOk: () => {
        setBusy(`${inst.id}:no_gpu`);
        noGpu.mutate(inst.id, {
          onSuccess: () => void message.success(t('ops.noGpu.done')),
          onError: (err) => void message.error({ content: <ServerText>{getErrorMessage(err)}</ServerText>, duration: 5 }),
          onSettled: () => setBusy(null),
        });
      },
    });

  const totalCount = tags.data?.reduce((sum, x) => sum + (x.status === 'released' ? 0 : x.count), 0);
  const tabItems = [
    { key: 'all', label: totalCount !== undefined ? `${t('compute.instances.all')} (${totalCount})` : t('compute.instances.all') },
    // Every status comes with its count: the empty ones (but running, stopped and the open tab) stay out of the way.
    ...(tags.data ?? []).filter((x) => x.count > 0 || x.status === status || (x.status !== 'released' && (x.status === 'running' || x.status === 'stopped'))).map((x) => ({ key: x.status, label: `${t(`compute.instanceStatuses.${x.status}`)} (${x.count})` })),
  ];

  const columns: TableColumnsType<InstanceItem> = [
    {
      title: t('compute.instances.colName'),
      key: 'name',
      width: 250,
      render: (_v, inst) => (
        <Flex vertical gap={2} style={{ minWidth: 0 }}>
          <Space size={4} wrap>
            <strong data-testid="instance-name">{inst.name}</strong>
            {/* Issue #10 (web) */}
            {inst.noGpu && <NoGpuTag />}
            {inst.demo && (
              <Tooltip title={t('compute.demoHint')}>
                <Tag color="gold" icon={<ExperimentOutlined />} tabIndex={0} data-testid="instance-demo">
                  {t('compute.demo')}
                </Tag>
              </Tooltip>
            )}
          </Space>
          <Typography.Text type="secondary" style={{ fontSize: 12 }} copyable={{ text: inst.id, tooltips: [t('compute.instances.copy'), t('compute.instances.copied')] }} data-testid="instance-id">
            {inst.id}
          </Typography.Text>
          <span style={{ fontSize: 12 }}>{t('compute.instances.gpuSpec', { gpu: inst.gpuTypeName, count: inst.gpuCount })}</span>
          <Typography.Text type="secondary" style={{ fontSize: 12 }}>
            {t('compute.instances.spec', { cpu: inst.cpuCores, mem: inst.memoryGb, disk: inst.dataDiskGb })}
          </Typography.Text>
          <Typography.Text type="secondary" style={{ fontSize: 12 }}>
            <ServerText>{inst.datacenterName}</ServerText> · <ServerText>{inst.imageName}</ServerText>
          </Typography.Text>
        </Flex>
      ),
    },
    {
      title: t('compute.instances.colStatus'),
      key: 'status',
      width: 120,
      render: (_v, inst) => (
        <Flex vertical gap={2}>
          <Badge status={STATUS_COLOR[inst.status] as 'success'} text={<span data-testid="instance-status" data-status={inst.status}>{t(`compute.instanceStatuses.${inst.status}`)}</span>} />
          {inst.statusReason && (
            <Typography.Text type={inst.status === 'failed' ? 'danger' : 'secondary'} style={{ fontSize: 12 }} data-testid="instance-status-reason">
              <ServerText>{inst.statusReason}</ServerText>
            </Typography.Text>
          )}
        </Flex>
      ),
    },
    { title: t('compute.instances.colCharge'), key: 'charge', width: 180, render: (_v, inst) => <ChargeCell inst={inst} /> },
    { title: t('compute.instances.colSsh'), key: 'ssh', width: 240, render: (_v, inst) => <SshCell inst={inst} /> },
    {
      title: t('compute.instances.colActions'),
      key: 'actions',
      width: 200,
      fixed: 'right',
      render: (_v, inst) => {
        const can = allowed(inst.status);
        const pending = (kind: InstanceAction['kind'] | 'no_gpu') => busy === `${inst.id}:${kind}`;
        const ops = allowedOps(inst);
        return (
          <Flex gap={4} wrap>
            {can.powerOn && (
              <Button size="small" type="link" icon={<CaretRightOutlined />} loading={pending('power_on')} onClick={() => run({ kind: 'power_on', instanceId: inst.id })} data-testid="instance-power-on">
                {t('compute.instances.powerOn')}
              </Button>
            )}
            {can.powerOff && (
              <Button size="small" type="link" icon={<PoweroffOutlined />} loading={pending('power_off')} onClick={() => confirmPowerOff(inst)} data-testid="instance-power-off">
                {t('compute.instances.powerOff')}
              </Button>
            )}
            <Button
              size="small"
              type="link"
              icon={<CodeOutlined />}
              disabled={!can.shell}
              href={can.shell ? `${SHELL_PATH}?instanceId=${encodeURIComponent(inst.id)}` : undefined}
              target="_blank"
              rel="noopener"
              data-testid="instance-shell"
            >
              {t('compute.instances.openShell')}
            </Button>
            <Dropdown
              trigger={['click']}
              menu={{
                items: [
                  { key: 'rename', label: menuLabel('rename', t('compute.instances.rename')), disabled: !can.rename },
                  { key: 'password', label: menuLabel('password', t('compute.instances.resetPassword')), disabled: !can.password },
                  { key: 'init', label: menuLabel('init', t('compute.instances.resetSystem')), disabled: !can.init },
                  { key: 'change_image', label: menuLabel('change_image', t('compute.instances.changeImage')), disabled: !can.changeImage },
                  // Issue #10 (web): billing changes, disks and the no-GPU start.
                  { type: 'divider' },
                  ...(inst.chargeType === 'payg'
                    ? [{ key: 'change_contract', label: menuLabel('change_contract', t('ops.menu.changeContract')), disabled: !ops.change_contract }]
                    : [
                        { key: 'to_payg', label: menuLabel('to_payg', t('ops.menu.changeToPayg')), disabled: !ops.to_payg },
                        { key: 'renewal', label: menuLabel('renewal', t('ops.menu.renewal')), disabled: !ops.renewal },
                      ]),
                  { key: 'expand', label: menuLabel('expand', t('ops.menu.expand')), disabled: !ops.expand },
                  { key: 'expand_disk', label: menuLabel('expand_disk', t('ops.menu.expandDisk')), disabled: !ops.expand_disk },
                  ...(inst.chargeType === 'payg' ? [{ key: 'no_gpu', label: menuLabel('no_gpu', t('ops.menu.noGpu')), disabled: !ops.no_gpu }] : []),
                  // Issue #10 (images): save the system disk as an image, copy data, clone (stopped instances).
                  { key: 'snapshot', label: menuLabel('snapshot', t('images.menu.snapshot')), disabled: inst.status !== 'stopped' },
                  { key: 'copy_data', label: menuLabel('copy_data', t('images.menu.copy')), disabled: !can.release },
                  { key: 'clone', label: menuLabel('clone', t('images.menu.clone')), disabled: inst.status !== 'stopped' },
                  { type: 'divider' },
                  { key: 'release', label: menuLabel('release', t('compute.instances.release')), danger: true, disabled: !can.release },
                ],
                onClick: ({ key }) => {
                  if (key === 'init') confirmInit(inst);
                  else if (key === 'no_gpu') confirmNoGpu(inst);
                  else if (key in OPS_PATHS) void navigate(opsHref(key as OpsKey, inst.id));
                  else if (key === 'snapshot' || key === 'copy_data') setOpsDialog({ kind: key, instance: inst });
                  else if (key === 'clone') void navigate(`${CLONE_PATH}?instanceId=${encodeURIComponent(inst.id)}`);
                  else setDialog({ kind: key as ModalKind, instance: inst });
                },
              }}
            >
              <Button size="small" type="text" icon={<MoreOutlined />} aria-label={`${t('compute.instances.more')} ${inst.name}`} loading={pending('init') || pending('no_gpu')} data-testid="instance-more">
                {t('compute.instances.more')}
              </Button>
            </Dropdown>
          </Flex>
        );
      },
    },
  ];

  const transitional = list.data?.list.some((i) => TRANSITIONAL.includes(i.status));

  return (
    <div data-testid="instances-page">
      <Flex justify="space-between" align="center" wrap gap={8} style={{ margin: '4px 0 12px' }}>
        <Typography.Title level={2} style={{ margin: 0, fontSize: 20 }}>
          {t('compute.instances.title')}
        </Typography.Title>
        <Button type="primary" icon={<PlusOutlined />} onClick={() => navigate(MARKET_PATH)} data-testid="instances-create">
          {t('compute.instances.create')}
        </Button>
      </Flex>
      <Card size="small" style={{ marginBottom: 16 }}>
        <Tabs
          activeKey={status}
          items={tabItems}
          onChange={(k) => {
            setStatus(k as InstanceStatus | 'all');
            setPage(1);
          }}
          style={{ marginBottom: 8 }}
          data-testid="instances-tabs"
        />
        <Flex gap={16} wrap align="center">
          <Input.Search
            allowClear
            placeholder={t('compute.instances.keywordPlaceholder')}
            aria-label={t('compute.instances.keyword')}
            style={{ width: 240 }}
            onSearch={(v) => {
              setKeyword(v.trim());
              setPage(1);
            }}
            data-testid="instances-keyword"
          />
          <ChargeTypeFilter
            id="instances-charge-label"
            label="compute.instances.chargeFilter"
            allLabel="compute.instances.allCharges"
            width={150}
            value={chargeType}
            onChange={(v) => {
              setChargeType(v);
              setPage(1);
            }}
          />
          <Tooltip title={t('compute.instances.refresh')}>
            <Button
              icon={<ReloadOutlined spin={Boolean(transitional)} />}
              aria-label={t('compute.instances.refresh')}
              onClick={() => {
                void list.refetch();
                void tags.refetch();
              }}
              loading={list.isFetching && !list.isPending && !transitional}
              style={{ marginLeft: 'auto' }}
            />
          </Tooltip>
        </Flex>
      </Card>
      <Card ref={tableBox}>
        {list.isError ? (
          <Result
            status="warning"
            title={t('compute.instances.loadFailed')}
            subTitle={<ServerText>{getErrorMessage(list.error)}</ServerText>}
            extra={
              <Button type="primary" onClick={() => void list.refetch()} loading={list.isFetching}>
                {t('common.retry')}
              </Button>
            }
            data-testid="instances-error"
          />
        ) : (
          <Table<InstanceItem>
            rowKey="id"
            size="middle"
            columns={columns}
            dataSource={list.data?.list ?? []}
            loading={list.isPending}
            scroll={{ x: 990 }}
            locale={{
              emptyText: list.isPending ? (
                <div style={{ height: 96 }} />
              ) : (
                <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('compute.instances.empty')} data-testid="instances-empty">
                  <Button type="primary" onClick={() => navigate(MARKET_PATH)}>
                    {t('compute.instances.toMarket')}
                  </Button>
                </Empty>
              ),
            }}
            pagination={{
              current: page,
              pageSize,
              total: list.data?.total ?? 0,
              showSizeChanger: true,
              showTotal: (total) => t('compute.instances.total', { total }),
              onChange: (p, size) => {
                setPage(size !== pageSize ? 1 : p);
                setPageSize(size);
              },
            }}
            data-testid="instances-table"
          />
        )}
      </Card>
      {dialog && <InstanceModal kind={dialog.kind} instance={dialog.instance} onClose={() => setDialog(null)} />}
      {opsDialog?.kind === 'snapshot' && <SnapshotModal instance={opsDialog.instance} onClose={() => setOpsDialog(null)} />}
      {opsDialog?.kind === 'copy_data' && <CopyDataModal instance={opsDialog.instance} onClose={() => setOpsDialog(null)} />}
    </div>
  );
}
