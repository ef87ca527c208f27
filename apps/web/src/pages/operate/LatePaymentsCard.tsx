import { useState } from 'react';
import { Alert, Empty, Table, Typography } from 'antd';
import type { TableProps } from 'antd';
import { useQuery } from '@tanstack/react-query';
import type { FlaggedPayment } from '@suanli/contract/payment';
import { formatDateTime, formatMoney } from '@suanli/domain/format';
import { useT } from '../../locales/i18n.ts';
import { operateLatePaymentsQuery } from '../../api/queries/operate.ts';
import { getErrorMessage } from '../../api/errors.ts';
import { OperateListCard } from './OperateListCard.tsx';
import { useScrollRegion } from '../../modules/useScrollRegion.ts';

/** The operator's list of payments credited after their expiry (money that arrived late), to reconcile by hand. */
export function LatePaymentsCard() {
  const { t } = useT();
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(10);
  const query = useQuery(operateLatePaymentsQuery(page, pageSize));
  const tableBox = useScrollRegion<HTMLDivElement>(t('wallet.latePayments.title'));

  const columns: TableProps<FlaggedPayment>['columns'] = [
    { key: 'paidAt', title: t('wallet.latePayments.colPaidAt'), dataIndex: 'paidAt', width: 176, render: (v: string | null) => formatDateTime(v) },
    { key: 'expiresAt', title: t('wallet.latePayments.colExpiresAt'), dataIndex: 'expiresAt', width: 176, render: (v: string) => formatDateTime(v) },
    { key: 'user', title: t('wallet.latePayments.colUser'), dataIndex: 'userPhone', width: 128 },
    { key: 'amount', title: t('wallet.latePayments.colAmount'), dataIndex: 'amount', width: 120, align: 'right', render: (v: number) => formatMoney(v) },
    { key: 'method', title: t('wallet.latePayments.colMethod'), dataIndex: 'method', width: 104, render: (v: FlaggedPayment['method']) => t(`wallet.methods.${v}`) },
    { key: 'tradeNo', title: t('wallet.latePayments.colTradeNo'), dataIndex: 'gatewayTradeNo', ellipsis: true, render: (v: string | null) => v ?? '—' },
    { key: 'id', title: t('wallet.latePayments.colId'), dataIndex: 'id', ellipsis: true },
  ];

  return (
    <OperateListCard
      cardRef={tableBox}
      title={t('wallet.latePayments.title')}
      totalText={query.data && t('wallet.latePayments.total', { total: query.data.total })}
      refreshing={query.isFetching}
      onRefresh={() => void query.refetch()}
      testId="operate-late-payments"
      refreshTestId="operate-late-refresh"
    >
      <Typography.Paragraph type="secondary">{t('wallet.latePayments.hint')}</Typography.Paragraph>
      {query.isError && <Alert type="error" showIcon title={`${t('wallet.latePayments.loadFailed')}: ${getErrorMessage(query.error)}`} style={{ marginBottom: 16 }} />}
      <Table<FlaggedPayment>
        rowKey="id"
        size="middle"
        columns={columns}
        dataSource={query.data?.list ?? []}
        loading={query.isPending || (query.isFetching && query.isPlaceholderData)}
        scroll={{ x: 'max-content' }}
        locale={{ emptyText: query.isPending ? ' ' : <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('wallet.latePayments.empty')} /> }}
        pagination={{
          current: page,
          pageSize,
          total: query.data?.total ?? 0,
          showSizeChanger: true,
          pageSizeOptions: [10, 20, 50, 100],
          onChange: (p, size) => {
            setPage(size === pageSize ? p : 1);
            setPageSize(size);
          },
        }}
      />
    </OperateListCard>
  );
}
