import { useEffect, useMemo, useRef, useState } from 'react';
import { Button, Card, Col, DatePicker, Empty, Flex, Result, Row, Segmented, Select, Space, Statistic, Table, Tag, Tooltip, Typography, type TableColumnsType } from 'antd';
import { useFeedback } from '../../../modules/feedback.ts';
import { memoText } from './memo.ts';
import { DownloadOutlined, ReloadOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import dayjs, { type Dayjs } from 'dayjs';
import { ledgerKinds, type LedgerKind, type TransactionItem } from '@suanli/contract/wallet';
import { formatDateTime, formatMoney } from '@suanli/domain/format';
import { EXPORT_CAP, fetchAllTransactions, transactionsPageQuery, type TransactionFilter } from '../../../api/queries/wallet.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { useT } from '../../../locales/i18n.ts';
import { csvFileName, downloadText, transactionsCsv } from './csv.ts';
import { rangeToTimes } from './filters.ts';
import { useScrollRegion } from '../../../modules/useScrollRegion.ts';

type Direction = 'all' | 'income' | 'expense';
type Range = [Dayjs, Dayjs] | null;

const KIND_COLOR: Record<LedgerKind, string> = {
  recharge: 'green',
  order_payment: 'blue',
  payg_charge: 'geekblue',
  llm_usage: 'purple',
  refund: 'cyan',
  coupon: 'gold',
  adjustment: 'purple',
};

const INCOME_COLOR = '#237804'; // #23: antd green-8, 6.3:1 on white
const EXPENSE_COLOR = '#cf1322';

/** Income shows as +¥…, expense as -¥… (formatMoney already puts the minus sign). */
export const signedMoney = (units: number) => (units > 0 ? `+${formatMoney(units)}` : formatMoney(units));

/** /center/expense/incomeExpend (收支明细): the ledger of the balance, filtered, totalled, paged and exportable. */
export function IncomeExpendPage() {
  const { t } = useT();
  const { message } = useFeedback();
  const [range, setRange] = useState<Range>(null);
  const [kind, setKind] = useState<LedgerKind | undefined>();
  const [direction, setDirection] = useState<Direction>('all');
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(20);
  const [exporting, setExporting] = useState<{ done: number; total: number } | null>(null);
  const exportAbort = useRef<AbortController | null>(null);
  useEffect(() => () => exportAbort.current?.abort(), []);

  const filter: TransactionFilter = useMemo(() => ({ ...rangeToTimes(range), kind, direction: direction === 'all' ? undefined : direction }), [range, kind, direction]);
  const list = useQuery(transactionsPageQuery({ ...filter, page, pageSize }));
  const data = list.data;

  const tableBox = useScrollRegion<HTMLDivElement>(t('wallet.incomeExpend.title'));
  const kindLabel = (k: LedgerKind) => t(`wallet.kinds.${k}`);
  const filtersChanged = () => setPage(1);

  const exportCsv = async () => {
    exportAbort.current?.abort();
    const controller = new AbortController();
    exportAbort.current = controller;
    setExporting({ done: 0, total: data?.total ?? 0 });
    try {
      const { rows, capped } = await fetchAllTransactions(filter, { cap: EXPORT_CAP, signal: controller.signal, onProgress: (done, total) => setExporting({ done, total }) });
      if (rows.length === 0) {
        void message.info(t('wallet.incomeExpend.exportEmpty'));
        return;
      }
      const csv = transactionsCsv(rows, {
        header: [
          t('wallet.incomeExpend.colTime'),
          t('wallet.incomeExpend.colKind'),
          t('wallet.incomeExpend.colDirection'),
          `${t('wallet.incomeExpend.colAmount')}(${t('wallet.recharge.yuan')})`,
          `${t('wallet.incomeExpend.colBalance')}(${t('wallet.recharge.yuan')})`,
          t('wallet.incomeExpend.colMemoOnly'),
          t('wallet.incomeExpend.colRef'),
          t('wallet.incomeExpend.colId'),
        ],
        kind: kindLabel,
        income: t('wallet.incomeExpend.income'),
        expense: t('wallet.incomeExpend.expense'),
      });
      downloadText(csvFileName(t('wallet.incomeExpend.exportFileName')), csv);
      if (capped) void message.warning(t('wallet.incomeExpend.exportCapped', { cap: EXPORT_CAP }));
      else void message.success(t('wallet.incomeExpend.exportDone', { count: rows.length }));
    } catch (err) {
      if (!controller.signal.aborted) void message.error(`${t('wallet.incomeExpend.exportFailed')}：${getErrorMessage(err)}`);
    } finally {
      if (exportAbort.current === controller) {
        exportAbort.current = null;
        setExporting(null);
      }
    }
  };

  const columns: TableColumnsType<TransactionItem> = [
    { title: t('wallet.incomeExpend.colTime'), dataIndex: 'createdAt', key: 'createdAt', width: 180, render: (v: string) => formatDateTime(v) },
    {
      title: t('wallet.incomeExpend.colKind'),
      dataIndex: 'kind',
      key: 'kind',
      width: 120,
      render: (k: LedgerKind) => <Tag color={KIND_COLOR[k]}>{kindLabel(k)}</Tag>,
    },
    {
      title: t('wallet.incomeExpend.colAmount'),
      dataIndex: 'amount',
      key: 'amount',
      align: 'right',
      width: 160,
      render: (v: number) => (
        <span style={{ color: v >= 0 ? INCOME_COLOR : EXPENSE_COLOR, fontWeight: 600, fontVariantNumeric: 'tabular-nums' }} data-testid="income-expend-amount">
          {signedMoney(v)}
        </span>
      ),
    },
    {
      title: t('wallet.incomeExpend.colBalance'),
      dataIndex: 'balanceAfter',
      key: 'balanceAfter',
      align: 'right',
      width: 160,
      render: (v: number) => <span style={{ fontVariantNumeric: 'tabular-nums' }}>{formatMoney(v)}</span>,
    },
    {
      title: t('wallet.incomeExpend.colMemo'),
      key: 'memo',
      render: (_v, r) => (
        <div style={{ minWidth: 0 }}>
          <div>{r.memo ? memoText(r.memo) : '—'}</div>
          {r.ref && (
            <Typography.Text type="secondary" style={{ fontSize: 12 }} copyable={{ text: r.ref }}>
              {r.ref}
            </Typography.Text>
          )}
        </div>
      ),
    },
  ];

  const rangeLabel = range ? `${range[0].format('YYYY-MM-DD')} ~ ${range[1].format('YYYY-MM-DD')}` : t('wallet.incomeExpend.rangeAll');
  const today = dayjs();

  return (
    <div data-testid="income-expend-page">
      <Typography.Title level={4} style={{ margin: '4px 0 4px' }}>
        {t('wallet.incomeExpend.title')}
      </Typography.Title>
      <Typography.Paragraph type="secondary">{t('wallet.incomeExpend.subtitle')}</Typography.Paragraph>

      <Card size="small" style={{ marginBottom: 16 }} data-testid="income-expend-filters">
        <Flex gap={16} wrap align="center">
          <Space size={8}>
            <Typography.Text type="secondary" id="income-expend-range-label">
              {t('wallet.incomeExpend.range')}
            </Typography.Text>
            <DatePicker.RangePicker
              value={range}
              allowEmpty={[false, false]}
              placeholder={[t('wallet.incomeExpend.rangeStart'), t('wallet.incomeExpend.rangeEnd')]}
              disabledDate={(d) => d.isAfter(today, 'day')}
              presets={[
                { label: t('wallet.incomeExpend.presets.last7'), value: [today.subtract(6, 'day'), today] },
                { label: t('wallet.incomeExpend.presets.last30'), value: [today.subtract(29, 'day'), today] },
                { label: t('wallet.incomeExpend.presets.thisMonth'), value: [today.startOf('month'), today] },
                { label: t('wallet.incomeExpend.presets.last90'), value: [today.subtract(89, 'day'), today] },
              ]}
              onChange={(v) => {
                setRange(v && v[0] && v[1] ? [v[0], v[1]] : null);
                filtersChanged();
              }}
              data-testid="income-expend-range"
            />
          </Space>
          <Space size={8}>
            <Typography.Text type="secondary" id="income-expend-kind-label">
              {t('wallet.incomeExpend.kind')}
            </Typography.Text>
            <Select<LedgerKind>
              aria-labelledby="income-expend-kind-label"
              allowClear
              value={kind}
              placeholder={t('wallet.incomeExpend.allKinds')}
              style={{ width: 150 }}
              options={ledgerKinds.map((k) => ({ value: k, label: kindLabel(k) }))}
              onChange={(v) => {
                setKind(v);
                filtersChanged();
              }}
              data-testid="income-expend-kind"
            />
          </Space>
          <Segmented<Direction>
            value={direction}
            options={[
              { value: 'all', label: t('wallet.incomeExpend.all') },
              { value: 'income', label: t('wallet.incomeExpend.income') },
              { value: 'expense', label: t('wallet.incomeExpend.expense') },
            ]}
            onChange={(v) => {
              setDirection(v);
              filtersChanged();
            }}
            data-testid="income-expend-direction"
          />
          <Flex gap={8} style={{ marginLeft: 'auto' }}>
            <Button
              onClick={() => {
                setRange(null);
                setKind(undefined);
                setDirection('all');
                filtersChanged();
              }}
              disabled={!range && !kind && direction === 'all'}
            >
              {t('wallet.incomeExpend.reset')}
            </Button>
            <Tooltip title={t('wallet.incomeExpend.refresh')}>
              <Button icon={<ReloadOutlined />} onClick={() => void list.refetch()} loading={list.isFetching && !list.isPending} aria-label={t('wallet.incomeExpend.refresh')} />
            </Tooltip>
            <Button type="primary" icon={<DownloadOutlined />} loading={exporting !== null} disabled={list.isError || data?.total === 0} onClick={() => void exportCsv()} data-testid="income-expend-export">
              {exporting ? t('wallet.incomeExpend.exporting', { done: exporting.done, total: exporting.total }) : t('wallet.incomeExpend.export')}
            </Button>
          </Flex>
        </Flex>
      </Card>

      <Row gutter={[16, 16]} style={{ marginBottom: 16 }} data-testid="income-expend-totals">
        <Col xs={24} md={8}>
          <Card size="small">
            <Statistic
              title={`${t('wallet.incomeExpend.incomeTotal')} · ${rangeLabel}`}
              value={data ? formatMoney(Math.abs(data.totals.income)) : '—'}
              loading={list.isPending}
              styles={{ content: { color: INCOME_COLOR, fontVariantNumeric: 'tabular-nums' } }}
              data-testid="income-expend-income-total"
            />
          </Card>
        </Col>
        <Col xs={24} md={8}>
          <Card size="small">
            <Statistic
              title={`${t('wallet.incomeExpend.expenseTotal')} · ${rangeLabel}`}
              value={data ? formatMoney(Math.abs(data.totals.expense)) : '—'}
              loading={list.isPending}
              styles={{ content: { color: EXPENSE_COLOR, fontVariantNumeric: 'tabular-nums' } }}
              data-testid="income-expend-expense-total"
            />
          </Card>
        </Col>
        <Col xs={24} md={8}>
          <Card size="small">
            <Statistic
              title={t('wallet.incomeExpend.count')}
              value={data ? t('wallet.incomeExpend.countValue', { count: data.total }) : '—'}
              loading={list.isPending}
              data-testid="income-expend-count"
            />
          </Card>
        </Col>
      </Row>

      <Card ref={tableBox}>
        {list.isError ? (
          <Result
            status="warning"
            title={t('wallet.incomeExpend.loadFailed')}
            subTitle={getErrorMessage(list.error)}
            extra={
              <Button type="primary" onClick={() => void list.refetch()} loading={list.isFetching}>
                {t('common.retry')}
              </Button>
            }
            data-testid="income-expend-error"
          />
        ) : (
          <Table<TransactionItem>
            rowKey="id"
            size="middle"
            columns={columns}
            dataSource={data?.list ?? []}
            loading={list.isFetching}
            scroll={{ x: 860 }}
            // #28: no "no records" under the spinner
            locale={{ emptyText: list.isFetching ? <div style={{ height: 96 }} /> : <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('wallet.incomeExpend.empty')} /> }}
            pagination={{
              current: page,
              pageSize,
              total: data?.total ?? 0,
              showSizeChanger: true,
              pageSizeOptions: [10, 20, 50, 100],
              showTotal: (total) => t('wallet.incomeExpend.totalText', { total }),
              onChange: (p, size) => {
                setPage(size !== pageSize ? 1 : p);
                setPageSize(size);
              },
            }}
            data-testid="income-expend-table"
          />
        )}
      </Card>
    </div>
  );
}
