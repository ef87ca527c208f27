import { lazy, Suspense, useMemo, useState } from 'react';
import { Button, Card, DatePicker, Empty, Flex, Result, Select, Skeleton, Space, Table, Tabs, Typography, type TableColumnsType } from 'antd';
import { DownloadOutlined, ReloadOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import dayjs, { type Dayjs } from 'dayjs';
import type { UsageQuery, UsageRow } from '@suanli/contract/llm';
import { formatMoney } from '@suanli/domain/format';
import { apiKeysQuery, downloadUsageCsv, modelsQuery, usageQuery } from '../../api/queries/llm.ts';
import { getErrorMessage } from '../../api/errors.ts';
import { useFeedback } from '../../modules/feedback.ts';
import { useT } from '../../locales/i18n.ts';
import { ServerText } from '../market/ServerText.tsx';
import { LlmShell } from './LlmShell.tsx';
import { FocusableScroll } from './FocusableScroll.tsx';
import { daysBetween, formatCount, usageBy, usageByDay, type UsageGroup } from './helpers.ts';
import styles from './llm.module.css';

const UsageCharts = lazy(() => import('./UsageCharts.tsx'));

const localZone = () => {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || undefined;
  } catch {
    return undefined;
  }
};

function Figure({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <Card size="small">
      <Typography.Text type="secondary">{label}</Typography.Text>
      <div style={{ fontSize: 22, fontWeight: 600, fontVariantNumeric: 'tabular-nums' }} data-testid={testId}>
        {value}
      </div>
    </Card>
  );
}

/** /largeModel/usageChart: the user's calls (gateway and chat) by day, model and key. */
export function UsageChartPage() {
  const { t } = useT();
  const { message } = useFeedback();
  const [range, setRange] = useState<[Dayjs, Dayjs]>(() => [dayjs().subtract(6, 'day').startOf('day'), dayjs().startOf('day')]);
  const [model, setModel] = useState<string | undefined>();
  const [keyId, setKeyId] = useState<string | undefined>();
  const [exporting, setExporting] = useState(false);
  const models = useQuery(modelsQuery());
  const keys = useQuery(apiKeysQuery());

  const q: UsageQuery = useMemo(
    () => ({ startTime: range[0].startOf('day').toISOString(), endTime: range[1].endOf('day').toISOString(), model, keyId, timeZone: localZone() }),
    [range, model, keyId],
  );
  const usage = useQuery(usageQuery(q));
  const chatLabel = t('llm.usage.webChat');
  const rows = useMemo(() => usage.data?.rows ?? [], [usage.data]);
  const days = useMemo(() => usageByDay(rows, daysBetween(range[0].format('YYYY-MM-DD'), range[1].format('YYYY-MM-DD'))), [rows, range]);
  const byModel = useMemo(() => usageBy(rows, 'model', chatLabel), [rows, chatLabel]);
  const byKey = useMemo(() => usageBy(rows, 'key', chatLabel), [rows, chatLabel]);
  const totals = usage.data?.totals;

  const figureColumns = (first: TableColumnsType<UsageGroup>[number]): TableColumnsType<UsageGroup> => [
    first,
    { title: t('llm.usage.requests'), dataIndex: 'requests', key: 'requests', align: 'right', render: (v: number) => formatCount(v) },
    { title: t('llm.usage.errors'), dataIndex: 'errors', key: 'errors', align: 'right', render: (v: number) => formatCount(v) },
    { title: t('llm.usage.promptTokens'), dataIndex: 'promptTokens', key: 'promptTokens', align: 'right', render: (v: number) => formatCount(v) },
    { title: t('llm.usage.completionTokens'), dataIndex: 'completionTokens', key: 'completionTokens', align: 'right', render: (v: number) => formatCount(v) },
    { title: t('llm.usage.cost'), dataIndex: 'cost', key: 'cost', align: 'right', render: (v: number) => formatMoney(v) },
  ];
  const rowColumns: TableColumnsType<UsageRow> = [
    { title: t('llm.usage.day'), dataIndex: 'day', key: 'day', width: 110 },
    { title: t('llm.usage.model'), dataIndex: 'model', key: 'model', render: (v: string) => <span data-testid="usage-row-model">{v}</span> },
    { title: t('llm.usage.key'), key: 'key', render: (_v, r) => (r.keyId === null ? chatLabel : <ServerText>{r.keyName ?? r.keyId}</ServerText>) },
    { title: t('llm.usage.requests'), dataIndex: 'requests', key: 'requests', align: 'right', render: (v: number) => <span data-testid="usage-row-requests">{formatCount(v)}</span> },
    { title: t('llm.usage.errors'), dataIndex: 'errors', key: 'errors', align: 'right', render: (v: number) => formatCount(v) },
    { title: t('llm.usage.promptTokens'), dataIndex: 'promptTokens', key: 'promptTokens', align: 'right', render: (v: number) => formatCount(v) },
    { title: t('llm.usage.completionTokens'), dataIndex: 'completionTokens', key: 'completionTokens', align: 'right', render: (v: number) => formatCount(v) },
    { title: t('llm.usage.cost'), dataIndex: 'cost', key: 'cost', align: 'right', render: (v: number) => <span data-testid="usage-row-cost">{formatMoney(v)}</span> },
  ];

  const exportCsv = () => {
    setExporting(true);
    downloadUsageCsv(q, `llm-usage-${range[0].format('YYYYMMDD')}-${range[1].format('YYYYMMDD')}.csv`)
      .catch((err: unknown) => void message.error(getErrorMessage(err)))
      .finally(() => setExporting(false));
  };

  const empty = <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('llm.usage.empty')} />;
  const groupTable = (data: UsageGroup[], first: TableColumnsType<UsageGroup>[number], testId: string) => (
    <FocusableScroll label={t('llm.usage.tableLabel')}>
      <Table<UsageGroup> rowKey="key" size="small" columns={figureColumns(first)} dataSource={data} pagination={false} scroll={{ x: 720 }} locale={{ emptyText: empty }} data-testid={testId} />
    </FocusableScroll>
  );

  return (
    <LlmShell
      title={t('llm.usage.title')}
      subtitle={t('llm.usage.subtitle')}
      extra={
        <Button icon={<DownloadOutlined />} onClick={exportCsv} loading={exporting} data-testid="usage-export">
          {t('llm.usage.export')}
        </Button>
      }
      testId="usage-page"
    >
      <Card size="small" style={{ marginBottom: 16 }}>
        <Flex gap={16} wrap align="center">
          <Space size={8} wrap>
            <span className={styles.filterLabel} id="usage-range-label">
              {t('llm.usage.range')}
            </span>
            <DatePicker.RangePicker
              value={range}
              allowClear={false}
              aria-labelledby="usage-range-label"
              placeholder={[t('llm.usage.rangeStart'), t('llm.usage.rangeEnd')]}
              disabledDate={(d, info) => d.isAfter(dayjs(), 'day') || (info.from ? Math.abs(d.diff(info.from, 'day')) > 365 : false)}
              onChange={(v) => v && v[0] && v[1] && setRange([v[0], v[1]])}
              data-testid="usage-range"
            />
          </Space>
          <Space size={8} wrap>
            <span className={styles.filterLabel} id="usage-model-label">
              {t('llm.usage.model')}
            </span>
            <Select<string>
              aria-labelledby="usage-model-label"
              allowClear
              style={{ width: 220 }}
              placeholder={t('llm.usage.allModels')}
              value={model}
              loading={models.isPending}
              options={(models.data?.list ?? []).map((m) => ({ value: m.id, label: m.id }))}
              onChange={setModel}
              data-testid="usage-model"
            />
          </Space>
          <Space size={8} wrap>
            <span className={styles.filterLabel} id="usage-key-label">
              {t('llm.usage.key')}
            </span>
            <Select<string>
              aria-labelledby="usage-key-label"
              allowClear
              style={{ width: 200 }}
              placeholder={t('llm.usage.allKeys')}
              value={keyId}
              loading={keys.isPending}
              options={(keys.data?.list ?? []).map((k) => ({ value: k.id, label: <ServerText>{k.name}</ServerText>, title: k.name }))}
              onChange={setKeyId}
              data-testid="usage-key"
            />
          </Space>
          <Button icon={<ReloadOutlined />} onClick={() => void usage.refetch()} loading={usage.isFetching} data-testid="usage-refresh">
            {t('llm.usage.refresh')}
          </Button>
        </Flex>
      </Card>
      {usage.isError ? (
        <Card>
          <Result
            status="warning"
            title={t('llm.usage.loadFailed')}
            subTitle={<ServerText>{getErrorMessage(usage.error)}</ServerText>}
            extra={
              <Button type="primary" onClick={() => void usage.refetch()} loading={usage.isFetching}>
                {t('common.retry')}
              </Button>
            }
            data-testid="usage-error"
          />
        </Card>
      ) : (
        <>
          <div className={styles.stats}>
            <Figure label={t('llm.usage.requests')} value={totals ? formatCount(totals.requests) : '—'} testId="usage-total-requests" />
            <Figure label={t('llm.usage.promptTokens')} value={totals ? formatCount(totals.promptTokens) : '—'} testId="usage-total-prompt" />
            <Figure label={t('llm.usage.completionTokens')} value={totals ? formatCount(totals.completionTokens) : '—'} testId="usage-total-completion" />
            <Figure label={t('llm.usage.cost')} value={totals ? formatMoney(totals.cost) : '—'} testId="usage-total-cost" />
            <Figure label={t('llm.usage.errors')} value={totals ? formatCount(totals.errors) : '—'} testId="usage-total-errors" />
          </div>
          {usage.isPending ? (
            <Card>
              <Skeleton active />
            </Card>
          ) : (
            <Suspense
              fallback={
                <Card style={{ marginBottom: 16 }}>
                  <Skeleton active />
                </Card>
              }
            >
              <UsageCharts days={days} byModel={byModel} byKey={byKey} />
            </Suspense>
          )}
          <Card size="small" title={<h2 style={{ margin: 0, fontSize: 15 }}>{t('llm.usage.tables')}</h2>}>
            <Typography.Paragraph type="secondary" style={{ fontSize: 12 }}>
              {t('llm.usage.tablesHint')}
            </Typography.Paragraph>
            <Tabs
              items={[
                {
                  key: 'rows',
                  label: t('llm.usage.byRow'),
                  children: (
                    <FocusableScroll label={t('llm.usage.tableLabel')}>
                    <Table<UsageRow>
                      rowKey={(r) => `${r.day}|${r.model}|${r.keyId ?? ''}`}
                      size="small"
                      columns={rowColumns}
                      dataSource={rows}
                      loading={usage.isPending}
                      pagination={rows.length > 50 ? { pageSize: 50, showSizeChanger: false } : false}
                      scroll={{ x: 900 }}
                      locale={{ emptyText: usage.isPending ? <div style={{ height: 64 }} /> : empty }}
                      data-testid="usage-table"
                    />
                    </FocusableScroll>
                  ),
                },
                { key: 'day', label: t('llm.usage.byDay'), children: groupTable(days, { title: t('llm.usage.day'), dataIndex: 'label', key: 'label', width: 110 }, 'usage-by-day') },
                { key: 'model', label: t('llm.usage.byModel'), children: groupTable(byModel, { title: t('llm.usage.model'), dataIndex: 'label', key: 'label' }, 'usage-by-model') },
                {
                  key: 'key',
                  label: t('llm.usage.byKey'),
                  children: groupTable(byKey, { title: t('llm.usage.key'), dataIndex: 'label', key: 'label', render: (v: string, g) => (g.key === '' ? v : <ServerText>{v}</ServerText>) }, 'usage-by-key'),
                },
              ]}
            />
          </Card>
        </>
      )}
    </LlmShell>
  );
}
