import { useState } from 'react';
import { Alert, Flex, Form, Input, Modal, Progress, Tag, Typography } from 'antd';
import type { UserImage } from '@suanli/contract/instance-ops';
import { useDeleteImage, useUpdateImage } from '../../../api/queries/images.ts';
import { ApiError, getErrorMessage } from '../../../api/errors.ts';
import { useFeedback } from '../../../modules/feedback.ts';
import { useT } from '../../../locales/i18n.ts';
import { pathOf } from '../../../route-table.ts';
import { ServerText } from '../../market/ServerText.tsx';

/** Issue #10 (images): what the image list and the image detail page share. */

const MARKET_PATH = pathOf('market');
export const NAME_MAX = 40;
export const DESCRIPTION_MAX = 500;

/** Where "create an instance from this image" goes: the market, which carries the image to the create page. */
export const createFromImagePath = (id: number) => `${MARKET_PATH}?imageId=${id}`;

/** An image's status: saving with its progress, ready, or failed with the reason. */
export function ImageStatus({ image, wide }: { image: UserImage; wide?: boolean }) {
  const { t } = useT();
  if (image.status === 'building')
    return (
      <Flex vertical gap={2} style={{ minWidth: 0 }} data-testid="image-status" data-status="building">
        <span>{t('images.buildingProgress', { progress: image.progress })}</span>
        <Progress percent={image.progress} size="small" showInfo={false} style={{ width: wide ? 240 : 110, margin: 0 }} aria-label={t('images.buildingProgress', { progress: image.progress })} data-testid="image-progress" />
      </Flex>
    );
  if (image.status === 'failed')
    return (
      <Flex vertical gap={2} style={{ minWidth: 0 }} data-testid="image-status" data-status="failed">
        <Tag color="error" style={{ width: 'fit-content' }}>
          {t('images.statuses.failed')}
        </Tag>
        {image.error && (
          <Typography.Text type="danger" style={{ fontSize: 12 }} data-testid="image-error">
            <ServerText>{image.error}</ServerText>
          </Typography.Text>
        )}
      </Flex>
    );
  return (
    <Tag color="success" data-testid="image-status" data-status="ready">
      {t('images.statuses.ready')}
    </Tag>
  );
}

/** "i-abcdefghij (train-1)", or the released mark when the instance is gone. */
export function SourceInstance({ image }: { image: UserImage }) {
  const { t } = useT();
  if (!image.sourceInstanceId) return <span>{t('images.none')}</span>;
  return (
    <Flex vertical gap={0} style={{ minWidth: 0 }}>
      <span>{image.sourceInstanceName ? <ServerText>{image.sourceInstanceName}</ServerText> : t('images.released')}</span>
      <Typography.Text type="secondary" style={{ fontSize: 12, fontFamily: 'monospace' }}>
        {image.sourceInstanceId}
      </Typography.Text>
    </Flex>
  );
}

/** Rename and describe an image (PUT /api/v1/image/private/{id}). */
export function EditImageModal({ image, onClose }: { image: UserImage; onClose: () => void }) {
  const { t } = useT();
  const { message } = useFeedback();
  const update = useUpdateImage();
  const [name, setName] = useState(image.name);
  const [description, setDescription] = useState(image.description);
  const trimmed = name.trim();
  const nameProblem = !trimmed ? t('images.mine.nameRequired') : trimmed.length > NAME_MAX ? t('images.mine.nameTooLong') : null;
  const descProblem = description.trim().length > DESCRIPTION_MAX ? t('images.mine.descriptionTooLong') : null;
  const save = () => {
    if (nameProblem || descProblem) return;
    update.mutate(
      { id: image.id, body: { name: trimmed, description: description.trim() } },
      {
        onSuccess: () => {
          void message.success(t('images.mine.saved'));
          onClose();
        },
      },
    );
  };
  return (
    <Modal open title={t('images.mine.editTitle')} okText={t('common.save')} cancelText={t('common.cancel')} okButtonProps={{ disabled: Boolean(nameProblem || descProblem), 'data-testid': 'image-edit-ok' }} confirmLoading={update.isPending} onOk={save} onCancel={onClose} destroyOnHidden>
      <Form layout="vertical" onFinish={save}>
        <Form.Item label={t('images.fields.name')} htmlFor="image-edit-name" validateStatus={nameProblem ? 'error' : undefined} help={nameProblem ?? undefined}>
          <Input id="image-edit-name" value={name} onChange={(e) => setName(e.target.value)} maxLength={NAME_MAX + 8} autoComplete="off" data-testid="image-edit-name" />
        </Form.Item>
        <Form.Item label={t('images.fields.description')} htmlFor="image-edit-description" validateStatus={descProblem ? 'error' : undefined} help={descProblem ?? undefined}>
          <Input.TextArea id="image-edit-description" value={description} onChange={(e) => setDescription(e.target.value)} rows={4} showCount maxLength={DESCRIPTION_MAX} data-testid="image-edit-description" />
        </Form.Item>
      </Form>
      {update.isError && <Alert type="error" showIcon title={t('images.mine.actionFailed')} description={<ServerText>{getErrorMessage(update.error)}</ServerText>} data-testid="image-edit-error" />}
    </Modal>
  );
}

/** Share/withdraw and delete, each after a confirmation; the server's reason shown when refused. */
export function useImageActions(onDeleted?: () => void) {
  const { t } = useT();
  const { message, modal } = useFeedback();
  const update = useUpdateImage();
  const remove = useDeleteImage();
  const fail = (err: unknown) => void message.error({ content: <ServerText>{getErrorMessage(err)}</ServerText>, duration: 6 });

  const toggleShare = (image: UserImage) => {
    const share = !image.shared;
    modal.confirm({
      title: t(share ? 'images.mine.shareTitle' : 'images.mine.withdrawTitle', { name: image.name }),
      content: t(share ? 'images.mine.shareConfirm' : 'images.mine.withdrawConfirm'),
      okText: t(share ? 'images.mine.share' : 'images.mine.withdraw'),
      cancelText: t('common.cancel'),
      okButtonProps: { 'data-testid': 'image-share-ok' },
      onOk: () =>
        update.mutateAsync({ id: image.id, body: { shared: share } }).then(
          () => void message.success(t(share ? 'images.mine.shared' : 'images.mine.withdrawn')),
          fail,
        ),
    });
  };

  const confirmDelete = (image: UserImage) =>
    modal.confirm({
      title: t('images.mine.deleteTitle', { name: image.name }),
      content: t('images.mine.deleteConfirm'),
      okText: t('images.mine.delete'),
      okButtonProps: { danger: true, 'data-testid': 'image-delete-ok' },
      cancelText: t('common.cancel'),
      onOk: () =>
        remove.mutateAsync(image.id).then(
          () => {
            void message.success(t('images.mine.deleted'));
            onDeleted?.();
          },
          (err: unknown) => (err instanceof ApiError && err.status === 409 && !err.message ? fail(new Error(t('images.mine.deleteInUse'))) : fail(err)),
        ),
    });

  return { toggleShare, confirmDelete, pending: update.isPending || remove.isPending };
}
