import { useState } from 'react';
import { Alert, Button, Card, Empty, Form, Input, Popconfirm, Result, Table, Typography, type TableColumnsType } from 'antd';
import { DeleteOutlined, PlusOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import type { PubKeyItem } from '@suanli/contract/ssh-key';
import { formatDateTime } from '@suanli/domain/format';
import { pubKeysQuery, useAddPubKey, useDeletePubKey } from '../../../api/queries/compute.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { useFeedback } from '../../../modules/feedback.ts';
import { useScrollRegion } from '../../../modules/useScrollRegion.ts';
import { useT } from '../../../locales/i18n.ts';
import { ServerText } from '../../market/ServerText.tsx';

/** The add form: one OpenSSH key line and an optional name; the server's refusal is shown under it. */
export function AddKeyForm() {
  const { t } = useT();
  const { message } = useFeedback();
  const add = useAddPubKey();
  const [name, setName] = useState('');
  const [key, setKey] = useState('');
  const [submitted, setSubmitted] = useState(false);
  const keyMissing = key.trim() === '';

  const submit = () => {
    setSubmitted(true);
    if (keyMissing) return;
    add.mutate(
      { key: key.trim(), name: name.trim() || undefined },
      {
        onSuccess: () => {
          void message.success(t('compute.sshKeys.added'));
          setKey('');
          setName('');
          setSubmitted(false);
        },
      },
    );
  };

  return (
    <Card title={t('compute.sshKeys.add')} size="small" style={{ marginBottom: 16 }} data-testid="ssh-key-form">
      <Form layout="vertical" onFinish={submit} requiredMark={false}>
        <Form.Item label={t('compute.sshKeys.name')} htmlFor="ssh-key-name">
          <Input id="ssh-key-name" value={name} onChange={(e) => setName(e.target.value)} maxLength={32} placeholder={t('compute.sshKeys.namePlaceholder')} style={{ maxWidth: 360 }} data-testid="ssh-key-name" />
        </Form.Item>
        <Form.Item
          label={t('compute.sshKeys.key')}
          htmlFor="ssh-key-text"
          extra={t('compute.sshKeys.keyHint')}
          validateStatus={submitted && keyMissing ? 'error' : undefined}
          help={submitted && keyMissing ? t('compute.sshKeys.keyRequired') : undefined}
        >
          <Input.TextArea
            id="ssh-key-text"
            value={key}
            onChange={(e) => setKey(e.target.value)}
            autoSize={{ minRows: 3, maxRows: 8 }}
            placeholder={t('compute.sshKeys.keyPlaceholder')}
            spellCheck={false}
            style={{ fontFamily: 'monospace', fontSize: 12 }}
            data-testid="ssh-key-text"
          />
        </Form.Item>
        {add.isError && (
          <Alert type="error" showIcon style={{ marginBottom: 16 }} title={t('compute.sshKeys.addFailed')} description={<ServerText>{getErrorMessage(add.error)}</ServerText>} data-testid="ssh-key-error" />
        )}
        <Button type="primary" htmlType="submit" icon={<PlusOutlined />} loading={add.isPending} data-testid="ssh-key-submit">
          {t('compute.sshKeys.add')}
        </Button>
      </Form>
    </Card>
  );
}

/** /center/ssh/control and /center/control/control: the user's SSH public keys. */
export function SshKeysPage() {
  const { t } = useT();
  const { message } = useFeedback();
  const keys = useQuery(pubKeysQuery());
  const remove = useDeletePubKey();
  const tableBox = useScrollRegion<HTMLDivElement>(t('compute.sshKeys.title'));

  const columns: TableColumnsType<PubKeyItem> = [
    { title: t('compute.sshKeys.colName'), dataIndex: 'name', key: 'name', width: 180, render: (v: string) => (v ? <ServerText>{v}</ServerText> : <Typography.Text type="secondary">{t('compute.sshKeys.unnamed')}</Typography.Text>) },
    { title: t('compute.sshKeys.colType'), dataIndex: 'type', key: 'type', width: 180 },
    { title: t('compute.sshKeys.colFingerprint'), dataIndex: 'fingerprint', key: 'fingerprint', render: (v: string) => <Typography.Text style={{ fontFamily: 'monospace', fontSize: 12 }} data-testid="ssh-key-fingerprint">{v}</Typography.Text> },
    { title: t('compute.sshKeys.colCreated'), dataIndex: 'createdAt', key: 'createdAt', width: 180, render: (v: string) => formatDateTime(v) },
    {
      title: t('compute.sshKeys.colActions'),
      key: 'actions',
      width: 100,
      render: (_v, k) => (
        <Popconfirm
          title={t('compute.sshKeys.deleteConfirm', { name: k.name || k.fingerprint })}
          okText={t('compute.sshKeys.delete')}
          okButtonProps={{ danger: true }}
          cancelText={t('common.cancel')}
          onConfirm={() =>
            remove.mutateAsync(k.id).then(
              () => void message.success(t('compute.sshKeys.deleted')),
              (err: unknown) => void message.error(getErrorMessage(err)),
            )
          }
        >
          <Button type="link" danger size="small" icon={<DeleteOutlined />} loading={remove.isPending && remove.variables === k.id} data-testid="ssh-key-delete">
            {t('compute.sshKeys.delete')}
          </Button>
        </Popconfirm>
      ),
    },
  ];

  return (
    <div data-testid="ssh-keys-page">
      <Typography.Title level={2} style={{ margin: '4px 0 4px', fontSize: 20 }}>
        {t('compute.sshKeys.title')}
      </Typography.Title>
      <Typography.Paragraph type="secondary">{t('compute.sshKeys.subtitle')}</Typography.Paragraph>
      <AddKeyForm />
      <Card ref={tableBox}>
        {keys.isError ? (
          <Result
            status="warning"
            title={t('compute.sshKeys.loadFailed')}
            subTitle={<ServerText>{getErrorMessage(keys.error)}</ServerText>}
            extra={
              <Button type="primary" onClick={() => void keys.refetch()} loading={keys.isFetching}>
                {t('common.retry')}
              </Button>
            }
            data-testid="ssh-keys-error"
          />
        ) : (
          <Table<PubKeyItem>
            rowKey="id"
            size="middle"
            columns={columns}
            dataSource={keys.data ?? []}
            loading={keys.isPending}
            pagination={false}
            scroll={{ x: 820 }}
            locale={{ emptyText: keys.isPending ? <div style={{ height: 96 }} /> : <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('compute.sshKeys.empty')} /> }}
            data-testid="ssh-keys-table"
          />
        )}
      </Card>
    </div>
  );
}
