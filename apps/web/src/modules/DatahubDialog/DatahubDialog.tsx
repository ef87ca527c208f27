import { useEffect, useRef } from 'react';
import { Alert, Button, Descriptions, Modal, Skeleton, Typography } from 'antd';
import { useFeedback } from '../feedback.ts';
import { useQuery } from '@tanstack/react-query';
import type { Datacenter, Datahub } from '@suanli/contract/datahub';
import { datahubStatus } from '@suanli/domain/datahub';
import { formatDateTime } from '@suanli/domain/format';
import { datahubQuery, useActivateDatahub } from '../../api/queries/datahub.ts';
import { getErrorMessage } from '../../api/errors.ts';
import { useT } from '../../locales/i18n.ts';
import { DatahubStatusTag } from './DatahubStatusTag.tsx';
import { ActivateDatahubForm } from './ActivateDatahubForm.tsx';

export type DatahubDialogProps = {
  datacenter: Datacenter;
  open: boolean;
  onClose: () => void;
  /** SPEC §4: called once when an activation this dialog watched leaves status 0. */
  onActivated?: (hub: Datahub) => void;
};

/**
 * The datahub of one datacenter (SPEC §2, §4). Keep it mounted after closing: an activation in
 * progress goes on polling, and the toast and onActivated still come when it finishes.
 */
export function DatahubDialog({ datacenter, open, onClose, onActivated }: DatahubDialogProps) {
  const { t } = useT();
  const { message } = useFeedback();
  const id = datacenter.dataCenterId;
  const activate = useActivateDatahub();

  // Asked while open; while activating also when closed, so the end of the activation is seen.
  const hub = useQuery({ ...datahubQuery(id), enabled: (query) => open || query.state.data?.status === datahubStatus.activating });

  // Notify once per activation seen going from 0 to 1.
  const watching = useRef(false);
  const onActivatedRef = useRef(onActivated);
  onActivatedRef.current = onActivated;
  useEffect(() => {
    const data = hub.data;
    if (data?.status === datahubStatus.activating) {
      watching.current = true;
    } else if (watching.current && data) {
      watching.current = false;
      void message.success(t('common.operationSuccess'));
      onActivatedRef.current?.(data);
    }
  }, [hub.data, message, t]);

  let body;
  if (hub.isPending) {
    body = <Skeleton active paragraph={{ rows: 3 }} style={{ marginTop: 16 }} />;
  } else if (hub.isError && hub.data === undefined) {
    body = (
      <Alert
        type="error"
        showIcon
        style={{ marginTop: 16 }}
        title={t('datahub.loadFailed')}
        description={getErrorMessage(hub.error)}
        action={
          <Button size="small" onClick={() => void hub.refetch()} loading={hub.isFetching}>
            {t('common.retry')}
          </Button>
        }
      />
    );
  } else {
    const data = hub.data ?? null;
    body = (
      <>
        <Descriptions
          column={1}
          size="small"
          bordered
          style={{ marginTop: 16 }}
          items={[
            { key: 'dc', label: t('datahub.datacenter'), children: datacenter.dataCenterName },
            { key: 'status', label: t('datahub.status'), children: <DatahubStatusTag hub={data} /> },
            ...(data ? [{ key: 'name', label: t('datahub.name'), children: <span data-testid="datahub-name-value">{data.name}</span> }] : []),
            ...(data?.status === datahubStatus.activated
              ? [{ key: 'at', label: t('datahub.activatedAt'), children: <span data-testid="datahub-activated-at">{formatDateTime(data.activatedAt)}</span> }]
              : []),
          ]}
        />
        {!data && <ActivateDatahubForm datacenter={datacenter} pending={activate.isPending} onActivate={(name) => activate.mutate({ center_id: id, name })} />}
        {data?.status === datahubStatus.activating && (
          <Typography.Paragraph type="secondary" style={{ marginTop: 16, marginBottom: 0 }}>
            {t('datahub.activatingHint')}
          </Typography.Paragraph>
        )}
        {data?.status === datahubStatus.activated && (
          <Typography.Paragraph type="secondary" style={{ marginTop: 16, marginBottom: 0 }}>
            {t('datahub.activeHint')}
          </Typography.Paragraph>
        )}
      </>
    );
  }

  return (
    <Modal
      open={open}
      onCancel={onClose}
      title={t('datahub.title', { name: datacenter.dataCenterName })}
      footer={<Button onClick={onClose}>{t('datahub.close')}</Button>}
      destroyOnHidden
      modalRender={(node) => <div data-testid="datahub-dialog">{node}</div>}
      width={520}
    >
      {body}
    </Modal>
  );
}
