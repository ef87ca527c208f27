import { useMemo, useState } from 'react';
import { Alert, Button, Card, DatePicker, type ButtonProps, Empty, Flex, Form, Input, InputNumber, Modal, Popconfirm, Result, Select, Space, Table, Tabs, Tag, Typography, type TableColumnsType } from 'antd';
import { DeleteOutlined, MinusCircleOutlined, PlusOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import { useLocation, useSearchParams } from 'react-router';
import dayjs, { type Dayjs } from 'dayjs';
import type { ApiKeyItem, CreatedApiKey, LimitRule, LimitUnit, LimitWindow } from '@suanli/contract/llm';
import { formatDateTime, formatMoney } from '@suanli/domain/format';
import { apiKeysQuery, modelsQuery, useCreateApiKey, useDeleteApiKey, useUpdateApiKey } from '../../api/queries/llm.ts';
import { getErrorMessage } from '../../api/errors.ts';
import { useFeedback } from '../../modules/feedback.ts';
import { useScrollRegion } from '../../modules/useScrollRegion.ts';
import { useT } from '../../locales/i18n.ts';
import { ServerText } from '../market/ServerText.tsx';
import { LlmShell } from './LlmShell.tsx';
import { CopyButton } from './CopyButton.tsx';
import { curlExample, gatewayBaseUrl, ipLines, LIMIT_UNITS, LIMIT_WINDOWS, limitRuleOf, limitText, pythonExample, quotaUnits } from './helpers.ts';
import styles from './llm.module.css';

function CodeSample({ code, label, testId }: { code: string; label: string; testId?: string }) {
  return (
    <div className={styles.code}>
      {/* Focusable: it scrolls sideways on a phone (keyboard users must be able to scroll it). */}
      <pre data-testid={testId} tabIndex={0} aria-label={label}>
        <code>{code}</code>
      </pre>
      <span className={styles.codeCopy}>
        <CopyButton text={code} label={label} type="default" />
      </span>
    </div>
  );
}

/** How to call the gateway: its base URL and a curl and a Python example for one model. */
function QuickStart() {
  const { t } = useT();
  const [params] = useSearchParams();
  const models = useQuery(modelsQuery());
  const list = models.data?.list ?? [];
  const asked = params.get('model');
  const [picked, setPicked] = useState<string | null>(null);
  const model = picked ?? (asked && list.some((m) => m.id === asked) ? asked : (list[0]?.id ?? asked ?? 'model-id'));
  const origin = window.location.origin;
  const base = gatewayBaseUrl(origin);
  return (
    <Card size="small" title={<h2 style={{ margin: 0, fontSize: 16 }}>{t('llm.keys.quickStart')}</h2>} style={{ marginBottom: 16 }} data-testid="api-quickstart">
      <Flex gap={8} align="center" wrap style={{ marginBottom: 8 }}>
        <Typography.Text type="secondary">{t('llm.keys.baseUrl')}</Typography.Text>
        <Typography.Text code data-testid="api-base-url">
          {base}
        </Typography.Text>
        <CopyButton text={base} label={t('llm.keys.baseUrl')} />
      </Flex>
      <Flex gap={8} align="center" wrap style={{ marginBottom: 8 }}>
        <span id="quickstart-model-label">
          <Typography.Text type="secondary">{t('llm.keys.exampleModel')}</Typography.Text>
        </span>
        <Select<string>
          aria-labelledby="quickstart-model-label"
          style={{ minWidth: 220 }}
          value={model}
          loading={models.isPending}
          options={list.map((m) => ({ value: m.id, label: m.id }))}
          onChange={setPicked}
          data-testid="api-example-model"
        />
      </Flex>
      <Typography.Paragraph type="secondary" style={{ marginBottom: 8 }}>
        {t('llm.keys.quickStartHint')}
      </Typography.Paragraph>
      <Tabs
        size="small"
        items={[
          { key: 'curl', label: 'curl', children: <CodeSample code={curlExample(origin, model)} label="curl" testId="api-curl" /> },
          { key: 'python', label: 'Python (openai)', children: <CodeSample code={pythonExample(origin, model)} label="Python" testId="api-python" /> },
        ]}
      />
    </Card>
  );
}

type LimitRow = { window?: LimitWindow; unit?: LimitUnit; amount?: string | null };
type FormValues = { name: string; expiresAt?: Dayjs | null; models?: string[]; quota?: string | null; ipAllow?: string; limits?: LimitRow[] };

function CreateKeyDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (k: CreatedApiKey) => void }) {
  const { t } = useT();
  const [form] = Form.useForm<FormValues>();
  const models = useQuery(modelsQuery());
  const create = useCreateApiKey();
  const windowLabel = (w: LimitWindow) => t(`llm.keys.windows.${w}`);

  const submit = (v: FormValues) => {
    const quota = quotaUnits(v.quota);
    const limits = (v.limits ?? []).map(limitRuleOf).filter((r): r is LimitRule => r !== null);
    create.mutate(
      {
        name: v.name.trim(),
        expiresAt: v.expiresAt ? v.expiresAt.endOf('day').toISOString() : null,
        models: v.models && v.models.length > 0 ? v.models : null,
        quota: typeof quota === 'number' ? quota : null,
        ipAllow: ipLines(v.ipAllow ?? ''),
        limits,
      },
      {
        onSuccess: (created) => {
          form.resetFields();
          onCreated(created);
        },
      },
    );
  };

  return (
    <Modal
      open={open}
      title={t('llm.keys.create')}
      onCancel={onClose}
      okText={t('llm.keys.createOk')}
      cancelText={t('common.cancel')}
      okButtonProps={{ htmlType: 'submit', form: 'api-key-form', autoInsertSpace: false, loading: create.isPending, 'data-testid': 'key-create-ok' } as ButtonProps}
      width={640}
      destroyOnHidden
    >
      <Form<FormValues> id="api-key-form" form={form} layout="vertical" onFinish={submit} requiredMark="optional" initialValues={{ limits: [] }}>
        <Form.Item name="name" label={t('llm.keys.name')} rules={[{ required: true, whitespace: true, message: t('llm.keys.nameRequired') }, { max: 32, message: t('llm.keys.nameTooLong') }]}>
          <Input maxLength={32} placeholder={t('llm.keys.namePlaceholder')} data-testid="key-name" />
        </Form.Item>
        <Form.Item name="expiresAt" label={t('llm.keys.expiresAt')} extra={t('llm.keys.expiresHint')}>
          <DatePicker style={{ width: '100%' }} disabledDate={(d) => d.isBefore(dayjs(), 'day')} placeholder={t('llm.keys.never')} data-testid="key-expires" />
        </Form.Item>
        <Form.Item name="models" label={t('llm.keys.models')} extra={t('llm.keys.modelsHint')}>
          <Select<string[]>
            mode="multiple"
            allowClear
            placeholder={t('llm.keys.allModels')}
            loading={models.isPending}
            options={(models.data?.list ?? []).map((m) => ({ value: m.id, label: m.id }))}
            data-testid="key-models"
          />
        </Form.Item>
        <Form.Item
          name="quota"
          label={t('llm.keys.quota')}
          extra={t('llm.keys.quotaHint')}
          rules={[{ validator: (_r, v: string | null | undefined) => (quotaUnits(v) === 'invalid' ? Promise.reject(new Error(t('llm.keys.quotaInvalid'))) : Promise.resolve()) }]}
        >
          <InputNumber<string> stringMode min="0" step="1" precision={undefined} prefix="¥" style={{ width: '100%' }} placeholder={t('llm.keys.unlimited')} data-testid="key-quota" />
        </Form.Item>
        <Form.Item name="ipAllow" label={t('llm.keys.ipAllow')} extra={t('llm.keys.ipAllowHint')} rules={[{ validator: (_r, v: string | undefined) => (ipLines(v ?? '').length > 32 ? Promise.reject(new Error(t('llm.keys.ipTooMany'))) : Promise.resolve()) }]}>
          <Input.TextArea autoSize={{ minRows: 2, maxRows: 6 }} placeholder={'203.0.113.7\n10.0.0.0/8'} spellCheck={false} style={{ fontFamily: 'monospace' }} data-testid="key-ip" />
        </Form.Item>
        <Typography.Text strong id="key-limits-label">
          {t('llm.keys.limits')}
        </Typography.Text>
        <Typography.Paragraph type="secondary" style={{ fontSize: 12, marginBottom: 8 }}>
          {t('llm.keys.limitsHint')}
        </Typography.Paragraph>
        <Form.List name="limits">
          {(fields, { add, remove }) => (
            <div role="group" aria-labelledby="key-limits-label">
              {fields.map((field, i) => (
                <Space key={field.key} align="start" wrap style={{ display: 'flex', marginBottom: 4 }} data-testid="key-limit-row">
                  <Form.Item name={[field.name, 'window']} rules={[{ required: true, message: t('llm.keys.limitWindowRequired') }]} style={{ marginBottom: 8 }}>
                    <Select<LimitWindow> style={{ width: 120 }} aria-label={`${t('llm.keys.limitWindow')} ${i + 1}`} placeholder={t('llm.keys.limitWindow')} options={LIMIT_WINDOWS.map((w) => ({ value: w, label: windowLabel(w) }))} />
                  </Form.Item>
                  <Form.Item name={[field.name, 'unit']} rules={[{ required: true, message: t('llm.keys.limitUnitRequired') }]} style={{ marginBottom: 8 }}>
                    <Select<LimitUnit> style={{ width: 120 }} aria-label={`${t('llm.keys.limitUnit')} ${i + 1}`} placeholder={t('llm.keys.limitUnit')} options={LIMIT_UNITS.map((u) => ({ value: u, label: t(`llm.keys.units.${u}`) }))} />
                  </Form.Item>
                  <Form.Item
                    name={[field.name, 'amount']}
                    dependencies={[['limits', field.name, 'unit']]}
                    rules={[
                      ({ getFieldValue }) => ({
                        validator: (_r, v: string | null | undefined) => {
                          const row = { window: 'day' as const, unit: getFieldValue(['limits', field.name, 'unit']) as LimitUnit | undefined, amount: v };
                          if (v === null || v === undefined || String(v).trim() === '') return Promise.reject(new Error(t('llm.keys.limitAmountRequired')));
                          if (row.unit && !limitRuleOf(row)) return Promise.reject(new Error(row.unit === 'money' ? t('llm.keys.quotaInvalid') : t('llm.keys.tokensInvalid')));
                          return Promise.resolve();
                        },
                      }),
                    ]}
                    style={{ marginBottom: 8 }}
                  >
                    <InputNumber<string> stringMode min="0" style={{ width: 160 }} aria-label={`${t('llm.keys.limitAmount')} ${i + 1}`} placeholder={t('llm.keys.limitAmount')} />
                  </Form.Item>
                  <Button type="text" icon={<MinusCircleOutlined />} aria-label={`${t('llm.keys.removeLimit')} ${i + 1}`} onClick={() => remove(field.name)} />
                </Space>
              ))}
              <Button type="dashed" icon={<PlusOutlined />} onClick={() => add({ window: 'day', unit: 'tokens' })} disabled={fields.length >= 8} data-testid="key-limit-add">
                {t('llm.keys.addLimit')}
              </Button>
            </div>
          )}
        </Form.List>
        {create.isError && <Alert type="error" showIcon style={{ marginTop: 16 }} title={t('llm.keys.createFailed')} description={<ServerText>{getErrorMessage(create.error)}</ServerText>} data-testid="key-create-error" />}
      </Form>
    </Modal>
  );
}

function SecretDialog({ created, onClose }: { created: CreatedApiKey | null; onClose: () => void }) {
  const { t } = useT();
  return (
    <Modal
      open={created !== null}
      title={t('llm.keys.secretTitle')}
      onCancel={onClose}
      closable={false}
      mask={{ closable: false }}
      footer={
        <Button type="primary" onClick={onClose} autoInsertSpace={false} data-testid="key-secret-done">
          {t('llm.keys.secretDone')}
        </Button>
      }
      destroyOnHidden
    >
      <Alert type="warning" showIcon title={t('llm.keys.secretWarning')} style={{ marginBottom: 12 }} />
      <label htmlFor="key-secret" style={{ display: 'block', marginBottom: 4 }}>
        {t('llm.keys.secretLabel', { name: created?.key.name ?? '' })}
      </label>
      <Flex gap={8}>
        <Input id="key-secret" readOnly value={created?.secret ?? ''} style={{ fontFamily: 'monospace' }} onFocus={(e) => e.currentTarget.select()} data-testid="key-secret" />
        <CopyButton text={created?.secret ?? ''} label={t('llm.keys.secret')} type="default" testId="key-secret-copy" />
      </Flex>
    </Modal>
  );
}

/** /largeModel/apiKey and /center/ai-apiKey: the user's API keys for the OpenAI-compatible gateway. */
export function ApiKeysPage() {
  const { t } = useT();
  const { message } = useFeedback();
  const location = useLocation();
  const inCenter = location.pathname.toLowerCase().startsWith('/center/');
  const keys = useQuery(apiKeysQuery());
  const update = useUpdateApiKey();
  const remove = useDeleteApiKey();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const tableBox = useScrollRegion<HTMLDivElement>(t('llm.keys.title'));
  const windowLabel = (w: LimitWindow) => t(`llm.keys.windows.${w}`);

  const columns: TableColumnsType<ApiKeyItem> = useMemo(
    () => [
      { title: t('llm.keys.colName'), dataIndex: 'name', key: 'name', width: 140, render: (v: string) => <ServerText>{v}</ServerText> },
      { title: t('llm.keys.colKey'), dataIndex: 'maskedKey', key: 'maskedKey', width: 170, render: (v: string) => <Typography.Text style={{ fontFamily: 'monospace', fontSize: 12 }} data-testid="key-masked">{v}</Typography.Text> },
      {
        title: t('llm.keys.colStatus'),
        dataIndex: 'status',
        key: 'status',
        width: 90,
        render: (v: ApiKeyItem['status']) => (
          <Tag color={v === 'active' ? 'green' : v === 'expired' ? 'orange' : 'default'} data-testid="key-status" data-status={v}>
            {t(`llm.keys.statuses.${v}`)}
          </Tag>
        ),
      },
      {
        title: t('llm.keys.colUsed'),
        key: 'used',
        width: 160,
        render: (_v, k) => (
          <span style={{ fontVariantNumeric: 'tabular-nums' }} data-testid="key-used">
            {formatMoney(k.used)} / {k.quota === null ? t('llm.keys.unlimited') : formatMoney(k.quota)}
          </span>
        ),
      },
      {
        title: t('llm.keys.colLimits'),
        key: 'limits',
        width: 190,
        render: (_v, k) =>
          k.limits.length === 0 && k.ipAllow.length === 0 ? (
            <Typography.Text type="secondary">{t('llm.keys.noLimits')}</Typography.Text>
          ) : (
            <div style={{ fontSize: 12 }}>
              {k.limits.map((r, i) => (
                <div key={i}>{limitText(r, windowLabel, t('llm.keys.units.tokens'))}</div>
              ))}
              {k.ipAllow.length > 0 && <div>{t('llm.keys.ipCount', { n: k.ipAllow.length })}</div>}
            </div>
          ),
      },
      {
        title: t('llm.keys.colModels'),
        key: 'models',
        width: 180,
        render: (_v, k) =>
          k.models === null ? (
            <Typography.Text type="secondary">{t('llm.keys.allModels')}</Typography.Text>
          ) : (
            <Flex wrap gap={4}>
              {k.models.map((m) => (
                <Tag key={m} style={{ margin: 0 }}>
                  {m}
                </Tag>
              ))}
            </Flex>
          ),
      },
      { title: t('llm.keys.colExpires'), dataIndex: 'expiresAt', key: 'expiresAt', width: 170, render: (v: string | null) => (v ? formatDateTime(v) : t('llm.keys.never')) },
      { title: t('llm.keys.colLastUsed'), dataIndex: 'lastUsedAt', key: 'lastUsedAt', width: 170, render: (v: string | null) => (v ? formatDateTime(v) : <Typography.Text type="secondary">{t('llm.keys.neverUsed')}</Typography.Text>) },
      {
        title: t('llm.keys.colActions'),
        key: 'actions',
        width: 150,
        fixed: 'right',
        render: (_v, k) => (
          <Space size={0}>
            {k.status === 'disabled' ? (
              <Button type="link" size="small" autoInsertSpace={false} onClick={() => update.mutate({ id: k.id, enabled: true }, { onSuccess: () => void message.success(t('llm.keys.enabled')) })} data-testid="key-enable">
                {t('llm.keys.enable')}
              </Button>
            ) : (
              <Popconfirm
                title={t('llm.keys.disableConfirm', { name: k.name })}
                okText={t('llm.keys.disable')}
                cancelText={t('common.cancel')}
                okButtonProps={{ autoInsertSpace: false }}
                onConfirm={() => update.mutateAsync({ id: k.id, enabled: false }).then(() => void message.success(t('llm.keys.disabled')))}
              >
                <Button type="link" size="small" autoInsertSpace={false} data-testid="key-disable">
                  {t('llm.keys.disable')}
                </Button>
              </Popconfirm>
            )}
            <Popconfirm
              title={t('llm.keys.deleteConfirm', { name: k.name })}
              description={t('llm.keys.deleteHint')}
              okText={t('llm.keys.delete')}
              okButtonProps={{ danger: true, autoInsertSpace: false }}
              cancelText={t('common.cancel')}
              onConfirm={() => remove.mutateAsync(k.id).then(() => void message.success(t('llm.keys.deleted')))}
            >
              <Button type="link" size="small" danger icon={<DeleteOutlined />} autoInsertSpace={false} data-testid="key-delete">
                {t('llm.keys.delete')}
              </Button>
            </Popconfirm>
          </Space>
        ),
      },
    ],
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [t, update, remove],
  );

  const createButton = (
    <Button type="primary" icon={<PlusOutlined />} onClick={() => setCreating(true)} data-testid="key-create">
      {t('llm.keys.create')}
    </Button>
  );

  return (
    <LlmShell title={t('llm.keys.title')} subtitle={t('llm.keys.subtitle')} extra={createButton} bare={inCenter} testId="api-keys-page">
      <QuickStart />
      <Card ref={tableBox}>
        {keys.isError ? (
          <Result
            status="warning"
            title={t('llm.keys.loadFailed')}
            subTitle={<ServerText>{getErrorMessage(keys.error)}</ServerText>}
            extra={
              <Button type="primary" onClick={() => void keys.refetch()} loading={keys.isFetching}>
                {t('common.retry')}
              </Button>
            }
            data-testid="api-keys-error"
          />
        ) : (
          <Table<ApiKeyItem>
            rowKey="id"
            size="middle"
            columns={columns}
            dataSource={keys.data?.list ?? []}
            loading={keys.isPending}
            pagination={false}
            scroll={{ x: 1300 }}
            locale={{ emptyText: keys.isPending ? <div style={{ height: 96 }} /> : <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('llm.keys.empty')} /> }}
            data-testid="api-keys-table"
          />
        )}
      </Card>
      <CreateKeyDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(k) => {
          setCreating(false);
          setCreated(k);
        }}
      />
      <SecretDialog created={created} onClose={() => setCreated(null)} />
    </LlmShell>
  );
}
