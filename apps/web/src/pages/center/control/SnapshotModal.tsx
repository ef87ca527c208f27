import { useState } from 'react';
import { Alert, Button, Flex, Form, Input, Modal, Progress, Result, Typography } from 'antd';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import type { InstanceItem } from '@suanli/contract/instance';
import type { UserImage } from '@suanli/contract/instance-ops';
import { snapshotsQuery, useCreateSnapshot } from '../../../api/queries/images.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { useT } from '../../../locales/i18n.ts';
import { pathOf } from '../../../route-table.ts';
import { ServerText } from '../../market/ServerText.tsx';
import { DESCRIPTION_MAX, ImageStatus, NAME_MAX } from '../image/image-parts.tsx';

const IMAGES_PATH = pathOf('centerImages');

/** The image being saved: the one the POST answered, else the newest of the instance's snapshots. */
function pick(list: UserImage[] | undefined, started: UserImage | null, startedAt: string): UserImage | undefined {
  if (!list) return started ?? undefined;
  if (started) return list.find((i) => i.id === started.id) ?? started;
  return [...list].filter((i) => i.createdAt >= startedAt).sort((a, b) => b.createdAt.localeCompare(a.createdAt))[0];
}

function SnapshotProgress({ instanceId, started, startedAt, onClose }: { instanceId: string; started: UserImage | null; startedAt: string; onClose: () => void }) {
  const { t } = useT();
  const snapshots = useQuery(snapshotsQuery(instanceId));
  const image = pick(snapshots.data, started, startedAt);
  const link = (
    <Link to={IMAGES_PATH} onClick={onClose} data-testid="snapshot-images-link">
      {t('images.snapshot.toImages')}
    </Link>
  );
  if (image?.status === 'ready')
    return <Result status="success" title={t('images.snapshot.done')} subTitle={<ServerText>{image.name}</ServerText>} extra={link} data-testid="snapshot-done" />;
  if (image?.status === 'failed')
    return <Result status="error" title={t('images.snapshot.failed')} subTitle={<ServerText>{image.error}</ServerText>} extra={link} data-testid="snapshot-failed" />;
  const percent = image?.progress ?? 0;
  return (
    <div aria-live="polite" data-testid="snapshot-progress" data-percent={percent}>
      <Typography.Paragraph strong>{t('images.snapshot.progress')}</Typography.Paragraph>
      <Progress percent={percent} status="active" aria-label={t('images.snapshot.progress')} />
      {snapshots.isError && <Alert type="warning" showIcon style={{ marginTop: 12 }} title={<ServerText>{getErrorMessage(snapshots.error)}</ServerText>} />}
      <Typography.Paragraph type="secondary" style={{ marginTop: 12, marginBottom: 0 }}>
        {link}
      </Typography.Paragraph>
    </div>
  );
}

/**
 * Issue #10 (images): 保存镜像 — saves a stopped instance's system disk as a private image
 * (POST /api/v1/instance/snapshot), then follows its progress.
 */
export function SnapshotModal({ instance, onClose }: { instance: InstanceItem; onClose: () => void }) {
  const { t } = useT();
  const create = useCreateSnapshot();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [touched, setTouched] = useState(false);
  const [started, setStarted] = useState<{ image: UserImage | null; at: string } | null>(null);
  const earlier = useQuery({ ...snapshotsQuery(instance.id), enabled: !started });
  const stopped = instance.status === 'stopped';
  const trimmed = name.trim();
  const nameProblem = !trimmed ? t('images.mine.nameRequired') : trimmed.length > NAME_MAX ? t('images.mine.nameTooLong') : null;
  const descProblem = description.trim().length > DESCRIPTION_MAX ? t('images.mine.descriptionTooLong') : null;

  const submit = () => {
    setTouched(true);
    if (!stopped || nameProblem || descProblem) return;
    // A second earlier than now: the server's createdAt of the new image is not before it.
    const at = new Date(Date.now() - 1_000).toISOString();
    create.mutate({ instanceId: instance.id, name: trimmed, ...(description.trim() ? { description: description.trim() } : {}) }, { onSuccess: (image) => setStarted({ image: image && typeof image === 'object' && 'id' in image ? image : null, at }) });
  };

  const footer = started
    ? [
        <Button key="close" type="primary" onClick={onClose} data-testid="snapshot-close">
          {t('images.snapshot.close')}
        </Button>,
      ]
    : [
        <Button key="cancel" onClick={onClose}>
          {t('common.cancel')}
        </Button>,
        <Button key="ok" type="primary" loading={create.isPending} disabled={!stopped} onClick={submit} data-testid="snapshot-submit">
          {t('images.snapshot.submit')}
        </Button>,
      ];

  return (
    <Modal open title={t('images.snapshot.title', { name: instance.name })} onCancel={onClose} footer={footer} destroyOnHidden data-testid="snapshot-modal">
      {started ? (
        <SnapshotProgress instanceId={instance.id} started={started.image} startedAt={started.at} onClose={onClose} />
      ) : (
        <>
          <Alert type={stopped ? 'info' : 'warning'} showIcon title={stopped ? t('images.snapshot.stopped') : t('images.snapshot.notStopped')} style={{ marginBottom: 12 }} data-testid="snapshot-stopped-hint" />
          <Typography.Paragraph type="secondary">{t('images.snapshot.what')}</Typography.Paragraph>
          <Form layout="vertical" onFinish={submit} requiredMark={false}>
            <Form.Item label={t('images.snapshot.name')} htmlFor="snapshot-name" validateStatus={touched && nameProblem ? 'error' : undefined} help={touched ? (nameProblem ?? undefined) : undefined}>
              <Input id="snapshot-name" value={name} onChange={(e) => setName(e.target.value)} maxLength={NAME_MAX + 8} placeholder={t('images.snapshot.namePlaceholder')} autoComplete="off" data-testid="snapshot-name" />
            </Form.Item>
            <Form.Item label={t('images.snapshot.description')} htmlFor="snapshot-description" validateStatus={descProblem ? 'error' : undefined} help={descProblem ?? undefined}>
              <Input.TextArea id="snapshot-description" value={description} onChange={(e) => setDescription(e.target.value)} rows={3} showCount maxLength={DESCRIPTION_MAX} placeholder={t('images.snapshot.descriptionPlaceholder')} data-testid="snapshot-description" />
            </Form.Item>
          </Form>
          {(earlier.data?.length ?? 0) > 0 && (
            <div data-testid="snapshot-history">
              <Typography.Text type="secondary">{t('images.snapshot.history')}</Typography.Text>
              <Flex vertical gap={6} style={{ marginTop: 6, marginBottom: 12 }}>
                {earlier.data?.map((i) => (
                  <Flex key={i.id} justify="space-between" align="center" gap={8}>
                    <ServerText>{i.name}</ServerText>
                    <ImageStatus image={i} />
                  </Flex>
                ))}
              </Flex>
            </div>
          )}
          {create.isError && <Alert type="error" showIcon title={t('images.snapshot.startFailed')} description={<ServerText>{getErrorMessage(create.error)}</ServerText>} data-testid="snapshot-error" />}
        </>
      )}
    </Modal>
  );
}
