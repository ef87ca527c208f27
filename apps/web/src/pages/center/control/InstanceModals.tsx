import { useState } from 'react';
import { Alert, Form, Input, Modal, Radio, Flex, Typography, type ButtonProps } from 'antd';
import { useQuery } from '@tanstack/react-query';
import type { InstanceItem } from '@suanli/contract/instance';
import { instancePassword } from '@suanli/contract/instance';
import { imagesQuery, useInstanceAction, type InstanceAction } from '../../../api/queries/compute.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { useFeedback } from '../../../modules/feedback.ts';
import { useT } from '../../../locales/i18n.ts';
import { ServerText } from '../../market/ServerText.tsx';

export type ModalKind = 'release' | 'rename' | 'password' | 'change_image';

type Props = { instance: InstanceItem; onClose: () => void };

/** Runs an action from a dialog: the dialog stays open with the server's message when it fails. */
function useDialogAction(onClose: () => void) {
  const { t } = useT();
  const { message } = useFeedback();
  const action = useInstanceAction();
  const run = (a: InstanceAction) =>
    action.mutate(a, {
      onSuccess: () => {
        void message.success(t('compute.instances.done'));
        onClose();
      },
    });
  return { action, run };
}

function ErrorLine({ error }: { error: unknown }) {
  const { t } = useT();
  return <Alert type="error" showIcon style={{ marginTop: 12 }} title={t('compute.instances.failed')} description={<ServerText>{getErrorMessage(error)}</ServerText>} data-testid="instance-modal-error" />;
}

/** 释放: destroys both disks, so the instance's name must be typed to confirm. */
export function ReleaseModal({ instance, onClose }: Props) {
  const { t } = useT();
  const [typed, setTyped] = useState('');
  const { action, run } = useDialogAction(onClose);
  const matches = typed.trim() === instance.name;
  const okProps: ButtonProps & { 'data-testid': string } = { danger: true, disabled: !matches, 'data-testid': 'release-ok' };
  return (
    <Modal
      open
      title={t('compute.instances.releaseTitle', { name: instance.name })}
      okText={t('compute.instances.releaseOk')}
      okButtonProps={okProps}
      cancelText={t('common.cancel')}
      confirmLoading={action.isPending}
      onOk={() => matches && run({ kind: 'release', instanceId: instance.id })}
      onCancel={onClose}
      destroyOnHidden
    >
      <Alert type="error" showIcon title={t('compute.instances.releaseWarn')} style={{ marginBottom: 16 }} />
      <Form layout="vertical">
        <Form.Item
          label={t('compute.instances.releaseType', { name: instance.name })}
          validateStatus={typed && !matches ? 'error' : undefined}
          help={typed && !matches ? t('compute.instances.releaseMismatch') : undefined}
        >
          <Input value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" placeholder={instance.name} data-testid="release-name" />
        </Form.Item>
      </Form>
      {action.isError && <ErrorLine error={action.error} />}
    </Modal>
  );
}

export function RenameModal({ instance, onClose }: Props) {
  const { t } = useT();
  const [name, setName] = useState(instance.name);
  const { action, run } = useDialogAction(onClose);
  const trimmed = name.trim();
  const problem = !trimmed ? t('compute.instances.nameRequired') : trimmed.length > 32 ? t('compute.create.nameTooLong') : null;
  return (
    <Modal
      open
      title={t('compute.instances.renameTitle')}
      okText={t('common.save')}
      cancelText={t('common.cancel')}
      okButtonProps={{ disabled: problem !== null }}
      confirmLoading={action.isPending}
      onOk={() => problem === null && run({ kind: 'rename', instanceId: instance.id, name: trimmed })}
      onCancel={onClose}
      destroyOnHidden
    >
      <Form layout="vertical">
        <Form.Item label={t('compute.instances.newName')} validateStatus={problem ? 'error' : undefined} help={problem ?? undefined}>
          <Input value={name} onChange={(e) => setName(e.target.value)} maxLength={40} data-testid="rename-input" />
        </Form.Item>
      </Form>
      {action.isError && <ErrorLine error={action.error} />}
    </Modal>
  );
}

export function PasswordModal({ instance, onClose }: Props) {
  const { t } = useT();
  const [password, setPassword] = useState('');
  const [touched, setTouched] = useState(false);
  const { action, run } = useDialogAction(onClose);
  const valid = instancePassword.safeParse(password).success;
  return (
    <Modal
      open
      title={t('compute.instances.passwordTitle')}
      okText={t('common.save')}
      cancelText={t('common.cancel')}
      confirmLoading={action.isPending}
      onOk={() => {
        setTouched(true);
        if (valid) run({ kind: 'password', instanceId: instance.id, password });
      }}
      onCancel={onClose}
      destroyOnHidden
    >
      <Form layout="vertical">
        <Form.Item
          label={t('compute.instances.newPassword')}
          extra={t('compute.instances.passwordHint')}
          validateStatus={touched && !valid ? 'error' : undefined}
          help={touched && !valid ? t('compute.instances.passwordInvalid') : undefined}
        >
          <Input.Password value={password} onChange={(e) => setPassword(e.target.value)} onBlur={() => setTouched(true)} autoComplete="new-password" data-testid="password-input" />
        </Form.Item>
      </Form>
      {action.isError && <ErrorLine error={action.error} />}
    </Modal>
  );
}

export function ChangeImageModal({ instance, onClose }: Props) {
  const { t } = useT();
  const images = useQuery(imagesQuery());
  const [imageId, setImageId] = useState<number | null>(null);
  const { action, run } = useDialogAction(onClose);
  return (
    <Modal
      open
      title={t('compute.instances.changeImageTitle')}
      okText={t('common.confirm')}
      cancelText={t('common.cancel')}
      okButtonProps={{ danger: true, disabled: imageId === null }}
      confirmLoading={action.isPending}
      onOk={() => imageId !== null && run({ kind: 'change_image', instanceId: instance.id, imageId })}
      onCancel={onClose}
      destroyOnHidden
    >
      <Alert type="warning" showIcon title={t('compute.instances.changeImageConfirm')} style={{ marginBottom: 16 }} />
      {images.isPending ? (
        <Typography.Text type="secondary">{t('compute.create.imagesLoading')}</Typography.Text>
      ) : images.isError ? (
        <ErrorLine error={images.error} />
      ) : (
        <Radio.Group value={imageId} onChange={(e) => setImageId(e.target.value as number)} aria-label={t('compute.create.image')}>
          <Flex vertical gap={8}>
            {images.data.map((img) => (
              <Radio key={img.id} value={img.id} disabled={img.status !== 'ready' || img.id === instance.imageId}>
                <ServerText>{img.name}</ServerText>
                {img.status === 'building' && <Typography.Text type="secondary"> · {t('compute.create.building', { progress: img.progress })}</Typography.Text>}
              </Radio>
            ))}
          </Flex>
        </Radio.Group>
      )}
      {action.isError && <ErrorLine error={action.error} />}
    </Modal>
  );
}

export function InstanceModal({ kind, instance, onClose }: Props & { kind: ModalKind }) {
  switch (kind) {
    case 'release':
      return <ReleaseModal instance={instance} onClose={onClose} />;
    case 'rename':
      return <RenameModal instance={instance} onClose={onClose} />;
    case 'password':
      return <PasswordModal instance={instance} onClose={onClose} />;
    case 'change_image':
      return <ChangeImageModal instance={instance} onClose={onClose} />;
  }
}
