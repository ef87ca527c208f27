import { useMemo, useState } from 'react';
import { Alert, Button, Descriptions, Flex, Form, Input, Modal, Progress, Segmented, Select, Space, Tag, Typography } from 'antd';
import { useQuery } from '@tanstack/react-query';
import type { InstanceItem, InstanceStatus } from '@suanli/contract/instance';
import type { CopyJob } from '@suanli/contract/instance-ops';
import { formatFileSize } from '@suanli/domain/format';
import { instancesPageQuery } from '../../../api/queries/compute.ts';
import { COPY_DONE, copyJobQuery, instanceCopiesQuery, migratableQuery, useStartCopy, useTerminateCopy } from '../../../api/queries/images.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { useFeedback } from '../../../modules/feedback.ts';
import { useT } from '../../../locales/i18n.ts';
import { ServerText } from '../../market/ServerText.tsx';

type Other = { id: string; name: string; status: InstanceStatus; note: string };
const STATUS_COLOR: Record<CopyJob['status'], string> = { queued: 'default', running: 'processing', succeeded: 'success', failed: 'error', terminated: 'warning' };

/** A path under /root/data without a `..` segment (the server says the same). */
export const pathProblem = (p: string) => p.trim().split('/').includes('..');

function CopyProgress({ jobId, first }: { jobId: string; first: CopyJob }) {
  const { t } = useT();
  const { message, modal } = useFeedback();
  const job = useQuery(copyJobQuery(jobId));
  const terminate = useTerminateCopy();
  const j = job.data ?? first;
  const done = COPY_DONE.includes(j.status);
  const confirmTerminate = () =>
    modal.confirm({
      title: t('images.copy.terminateTitle'),
      content: t('images.copy.terminateConfirm'),
      okText: t('images.copy.terminate'),
      okButtonProps: { danger: true, 'data-testid': 'copy-terminate-ok' },
      cancelText: t('common.cancel'),
      onOk: () => terminate.mutateAsync(j.id).catch((err: unknown) => void message.error({ content: <ServerText>{getErrorMessage(err)}</ServerText>, duration: 6 })),
    });
  return (
    <div aria-live="polite">
      <Descriptions column={1} size="small" style={{ marginBottom: 12 }}>
        <Descriptions.Item label={t('images.copy.source')}>
          <ServerText>{j.sourceInstanceName}</ServerText> ({j.sourceInstanceId}) · /root/data/{j.sourcePath.replace(/^\/+/, '')}
        </Descriptions.Item>
        <Descriptions.Item label={t('images.copy.target')}>
          <ServerText>{j.targetInstanceName}</ServerText> ({j.targetInstanceId}) · /root/data/{j.targetPath.replace(/^\/+/, '')}
        </Descriptions.Item>
      </Descriptions>
      <Space style={{ marginBottom: 8 }}>
        <Typography.Text strong>{t('images.copy.progress')}</Typography.Text>
        <Tag color={STATUS_COLOR[j.status]} data-testid="copy-status" data-status={j.status}>
          {t(`images.copy.statuses.${j.status}`)}
        </Tag>
      </Space>
      <Progress percent={j.percent} status={j.status === 'failed' ? 'exception' : j.status === 'succeeded' ? 'success' : done ? 'normal' : 'active'} aria-label={t('images.copy.progress')} data-testid="copy-progress" data-percent={j.percent} />
      <Typography.Text type="secondary" data-testid="copy-bytes">
        {t('images.copy.bytes', { copied: formatFileSize(j.copiedBytes), total: formatFileSize(j.totalBytes) })} · {t('images.copy.files', { files: j.files })}
      </Typography.Text>
      {j.status === 'failed' && j.error && <Alert type="error" showIcon style={{ marginTop: 12 }} title={t('images.copy.statuses.failed')} description={<ServerText>{j.error}</ServerText>} data-testid="copy-error" />}
      {job.isError && <Alert type="warning" showIcon style={{ marginTop: 12 }} title={<ServerText>{getErrorMessage(job.error)}</ServerText>} />}
      {!done && (
        <div style={{ marginTop: 16 }}>
          <Button danger loading={terminate.isPending} onClick={confirmTerminate} data-testid="copy-terminate">
            {t('images.copy.terminate')}
          </Button>
        </div>
      )}
    </div>
  );
}

/**
 * Issue #10 (data copy): copies files of the data disk between this instance and another of the
 * user's (POST /api/v1/instance/copy_data), then follows the job's progress.
 */
export function CopyDataModal({ instance, onClose }: { instance: InstanceItem; onClose: () => void }) {
  const { t } = useT();
  const instances = useQuery(instancesPageQuery({ page: 1, pageSize: 100 }));
  const migratable = useQuery(migratableQuery());
  const start = useStartCopy();
  const [direction, setDirection] = useState<'from' | 'to'>('from');
  const [other, setOther] = useState<string | undefined>();
  const [sourcePath, setSourcePath] = useState('');
  const [targetPath, setTargetPath] = useState('');
  const [job, setJob] = useState<CopyJob | null>(null);
  // A copy still running from an earlier visit: its progress is one click away.
  const copies = useQuery(instanceCopiesQuery(instance.id));
  const active = (copies.data ?? []).filter((j) => !COPY_DONE.includes(j.status));

  const others = useMemo(() => {
    const seen = new Map<string, Other>();
    for (const i of instances.data?.list ?? []) if (i.id !== instance.id && i.status !== 'released' && i.status !== 'releasing') seen.set(i.id, { id: i.id, name: i.name, status: i.status, note: '' });
    for (const m of migratable.data ?? []) if (m.instanceId !== instance.id) seen.set(m.instanceId, { id: m.instanceId, name: m.name, status: m.status, note: m.reason });
    return [...seen.values()];
  }, [instances.data, migratable.data, instance.id]);
  const loading = instances.isPending && migratable.isPending;
  const loadError = instances.isError && migratable.isError;
  const badPath = pathProblem(sourcePath) || pathProblem(targetPath);
  const canSubmit = Boolean(other) && !badPath;

  const submit = () => {
    if (!other || badPath) return;
    const [sourceInstanceId, targetInstanceId] = direction === 'from' ? [instance.id, other] : [other, instance.id];
    start.mutate({ sourceInstanceId, targetInstanceId, sourcePath: sourcePath.trim(), targetPath: targetPath.trim() }, { onSuccess: setJob });
  };

  const footer = job
    ? [
        <Button key="close" type="primary" onClick={onClose} data-testid="copy-close">
          {t('images.copy.close')}
        </Button>,
      ]
    : [
        <Button key="cancel" onClick={onClose}>
          {t('common.cancel')}
        </Button>,
        <Button key="ok" type="primary" disabled={!canSubmit} loading={start.isPending} onClick={submit} data-testid="copy-submit">
          {t('images.copy.submit')}
        </Button>,
      ];

  const otherLabel = direction === 'from' ? t('images.copy.target') : t('images.copy.source');
  return (
    <Modal open title={t('images.copy.title', { name: instance.name })} onCancel={onClose} footer={footer} destroyOnHidden width={600} data-testid="copy-modal">
      {job ? (
        <CopyProgress jobId={job.id} first={job} />
      ) : (
        <>
          <Typography.Paragraph type="secondary">{t('images.copy.intro')}</Typography.Paragraph>
          {active.length > 0 && (
            <Alert
              type="info"
              showIcon
              style={{ marginBottom: 12 }}
              title={t('images.copy.running')}
              description={
                <Flex vertical gap={4}>
                  {active.map((j) => (
                    <Flex key={j.id} justify="space-between" align="center" gap={8} wrap>
                      <span>
                        <ServerText>{j.sourceInstanceName}</ServerText> → <ServerText>{j.targetInstanceName}</ServerText> · {j.percent}%
                      </span>
                      <Button size="small" onClick={() => setJob(j)} data-testid="copy-resume">
                        {t('images.copy.view')}
                      </Button>
                    </Flex>
                  ))}
                </Flex>
              }
              data-testid="copy-active"
            />
          )}
          <Form layout="vertical" onFinish={submit}>
            <Form.Item label={t('images.copy.direction')}>
              <Segmented<'from' | 'to'>
                value={direction}
                onChange={(v) => setDirection(v)}
                options={[
                  { value: 'from', label: t('images.copy.fromThis') },
                  { value: 'to', label: t('images.copy.toThis') },
                ]}
                aria-label={t('images.copy.direction')}
                data-testid="copy-direction"
              />
            </Form.Item>
            <Form.Item label={otherLabel} htmlFor="copy-target" help={!loading && !loadError && others.length === 0 ? t('images.copy.noOthers') : undefined}>
              <Select<string>
                id="copy-target"
                value={other}
                onChange={setOther}
                loading={loading}
                placeholder={t('images.copy.pick')}
                aria-label={otherLabel}
                options={others.map((o) => ({
                  value: o.id,
                  label: (
                    <span>
                      {t('images.copy.instanceOption', { name: o.name, id: o.id })} · {t(`compute.instanceStatuses.${o.status}`)}
                      {o.note && (
                        <Typography.Text type="secondary">
                          {' '}
                          · <ServerText>{o.note}</ServerText>
                        </Typography.Text>
                      )}
                    </span>
                  ),
                }))}
                data-testid="copy-target"
              />
            </Form.Item>
            {loadError && <Alert type="error" showIcon style={{ marginBottom: 12 }} title={t('images.copy.othersFailed')} description={<ServerText>{getErrorMessage(instances.error)}</ServerText>} />}
            <Form.Item label={t('images.copy.sourcePath')} htmlFor="copy-source-path" extra={t('images.copy.pathHint')} validateStatus={pathProblem(sourcePath) ? 'error' : undefined} help={pathProblem(sourcePath) ? t('images.copy.pathBad') : undefined}>
              <Input id="copy-source-path" prefix="/root/data/" value={sourcePath} onChange={(e) => setSourcePath(e.target.value)} maxLength={1024} autoComplete="off" data-testid="copy-source-path" />
            </Form.Item>
            <Form.Item label={t('images.copy.targetPath')} htmlFor="copy-target-path" extra={t('images.copy.pathHint')} validateStatus={pathProblem(targetPath) ? 'error' : undefined} help={pathProblem(targetPath) ? t('images.copy.pathBad') : undefined}>
              <Input id="copy-target-path" prefix="/root/data/" value={targetPath} onChange={(e) => setTargetPath(e.target.value)} maxLength={1024} autoComplete="off" data-testid="copy-target-path" />
            </Form.Item>
          </Form>
          {start.isError && <Alert type="error" showIcon title={t('images.copy.startFailed')} description={<ServerText>{getErrorMessage(start.error)}</ServerText>} data-testid="copy-error" />}
        </>
      )}
    </Modal>
  );
}
