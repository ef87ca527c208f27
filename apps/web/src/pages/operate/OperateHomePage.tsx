import { useState } from 'react';
import { Alert, Button, Card, Descriptions, Empty, Flex, Layout, Result, Skeleton, Table, Tag, Typography } from 'antd';
import type { TableProps } from 'antd';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import type { QuestionItem } from '@suanli/contract/question';
import { formatDateTime } from '@suanli/domain/format';
import { NavBar } from '../../modules/NavBar/NavBar.tsx';
import { useTenant } from '../../modules/tenant.tsx';
import { useT } from '../../locales/i18n.ts';
import { userDetailQuery } from '../../api/queries/user.ts';
import { operateQuestionsQuery } from '../../api/queries/operate.ts';
import { getErrorMessage } from '../../api/errors.ts';
import { LatePaymentsCard } from './LatePaymentsCard.tsx';
import { OperateListCard } from './OperateListCard.tsx';
import { useScrollRegion } from '../../modules/useScrollRegion.ts';

const STYLE_KEYS = ['classic', 'showcase', 'minimal'] as const;

function BrandingCard() {
  const { t } = useT();
  const tenant = useTenant();
  const { config } = tenant;
  const style = STYLE_KEYS[tenant.html_style] ?? 'minimal'; // SPEC §2: anything but 0 and 1 is the minimal page
  return (
    <Card title={t('site.operate.branding')} data-testid="operate-branding">
      <Flex gap={24} align="flex-start" wrap>
        {tenant.hash_rate_logo && <img src={tenant.hash_rate_logo} alt="" style={{ width: 72, height: 72, borderRadius: 16, flex: 'none' }} />}
        <Descriptions
          column={{ xs: 1, md: 2 }}
          size="small"
          styles={{ label: { width: 120, whiteSpace: 'nowrap' } }}
          style={{ flex: 1, minWidth: 0 }}
          items={[
            { key: 'title', label: t('site.operate.siteTitle'), children: tenant.title },
            { key: 'style', label: t('site.operate.homeStyle'), children: t(`site.operate.styles.${style}`) },
            { key: 'sloganTitle', label: t('site.operate.sloganTitle'), children: tenant.hash_rate_slogan_title },
            {
              key: 'color',
              label: t('site.operate.primaryColor'),
              children: (
                <Flex gap={8} align="center">
                  <span style={{ width: 16, height: 16, borderRadius: 4, background: config.primaryColor, display: 'inline-block' }} />
                  <code>{config.primaryColor}</code>
                </Flex>
              ),
            },
            { key: 'slogan', label: t('site.operate.slogan'), children: tenant.hash_rate_slogan, span: 2 },
            { key: 'company', label: t('site.operate.company'), children: config.companyName },
            { key: 'restricted', label: t('site.operate.restricted'), children: config.restricted ? <Tag color="orange">{t('site.operate.restrictedYes')}</Tag> : t('site.operate.restrictedNo') },
            { key: 'phone', label: t('site.operate.contactPhone'), children: config.contactPhone },
            { key: 'captcha', label: t('site.operate.captchaType'), children: t(`site.operate.captcha.${config.captchaType}`) },
            { key: 'email', label: t('site.operate.contactEmail'), children: config.contactEmail },
            { key: 'icp', label: t('site.operate.icp'), children: config.icp || '—' },
          ]}
        />
      </Flex>
    </Card>
  );
}

function QuestionsCard() {
  const { t } = useT();
  const tableBox = useScrollRegion<HTMLDivElement>(t('site.operate.questions'));
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(10);
  const query = useQuery(operateQuestionsQuery(page, pageSize));

  const columns: TableProps<QuestionItem>['columns'] = [
    { key: 'time', title: t('site.operate.colTime'), dataIndex: 'createdAt', width: 176, render: (v: string) => formatDateTime(v) },
    { key: 'name', title: t('site.operate.colName'), dataIndex: 'name', width: 104, ellipsis: true },
    { key: 'phone', title: t('site.operate.colPhone'), dataIndex: 'phone', width: 128 },
    { key: 'company', title: t('site.operate.colCompany'), dataIndex: 'company', width: 160, ellipsis: true, render: (v: string | null) => v ?? '—' },
    { key: 'email', title: t('site.operate.colEmail'), dataIndex: 'email', width: 180, ellipsis: true, render: (v: string | null) => v ?? '—' },
    {
      key: 'gpu',
      title: t('site.operate.colGpu'),
      width: 128,
      ellipsis: true,
      render: (_: unknown, q: QuestionItem) =>
        q.gpuType || q.gpuCount ? [q.gpuType, q.gpuCount ? t('site.operate.gpuCount', { count: q.gpuCount }) : null].filter(Boolean).join(' × ') : '—',
    },
    { key: 'content', title: t('site.operate.colContent'), dataIndex: 'content', ellipsis: true },
    {
      key: 'source',
      title: t('site.operate.colSource'),
      dataIndex: 'fromUser',
      width: 96,
      render: (v: boolean) => (v ? <Tag color="blue">{t('site.operate.sourceUser')}</Tag> : <Tag>{t('site.operate.sourceGuest')}</Tag>),
    },
  ];

  return (
    <OperateListCard
      cardRef={tableBox}
      title={t('site.operate.questions')}
      totalText={query.data && t('site.operate.questionsTotal', { total: query.data.total })}
      refreshing={query.isFetching}
      onRefresh={() => void query.refetch()}
      testId="operate-questions"
      refreshTestId="operate-refresh"
    >
      {query.isError && !query.data ? (
        <Result
          status="error"
          title={t('site.operate.loadFailed')}
          subTitle={getErrorMessage(query.error)}
          extra={<Button onClick={() => void query.refetch()}>{t('common.retry')}</Button>}
          data-testid="operate-questions-error"
        />
      ) : (
        <>
          {query.isError && <Alert type="error" showIcon title={getErrorMessage(query.error)} style={{ marginBottom: 16 }} />}
          <Table<QuestionItem>
            rowKey="id"
            size="middle"
            columns={columns}
            dataSource={query.data?.list ?? []}
            loading={query.isPending || (query.isFetching && query.isPlaceholderData)}
            scroll={{ x: 720 }}
            locale={{ emptyText: query.isFetching ? <div style={{ height: 96 }} /> : <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('site.operate.emptyQuestions')} /> }}
            expandable={{
              expandedRowRender: (q) => <Typography.Paragraph style={{ margin: 0, whiteSpace: 'pre-wrap' }}>{q.content}</Typography.Paragraph>,
            }}
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
        </>
      )}
    </OperateListCard>
  );
}

/** /operate/home: the operator's dashboard; other accounts get a 403. */
export function OperateHomePage() {
  const { t } = useT();
  const tenant = useTenant();
  const navigate = useNavigate();
  const user = useQuery(userDetailQuery());

  let body;
  if (user.isPending) body = <Skeleton active paragraph={{ rows: 8 }} style={{ padding: 24 }} />;
  else if (user.isError)
    body = <Result status="error" title={t('site.operate.loadUserFailed')} subTitle={getErrorMessage(user.error)} extra={<Button onClick={() => void user.refetch()}>{t('common.retry')}</Button>} />;
  else if (user.data.role !== 'operator')
    body = (
      <Result
        status="403"
        title={t('site.operate.forbiddenTitle')}
        subTitle={t('site.operate.forbiddenDesc')}
        extra={
          <Button type="primary" onClick={() => navigate('/')}>
            {t('site.operate.backHome')}
          </Button>
        }
        data-testid="operate-forbidden"
      />
    );
  else
    body = (
      <Flex vertical gap={24}>
        <div>
          <h1 style={{ fontSize: 24, margin: 0, color: '#0f172a' }}>{t('site.operate.title')}</h1>
          <Typography.Text type="secondary">{t('site.operate.subtitle', { title: tenant.title })}</Typography.Text>
        </div>
        <BrandingCard />
        <QuestionsCard />
        <LatePaymentsCard />
      </Flex>
    );

  return (
    <Layout style={{ minHeight: '100vh' }}>
      <NavBar />
      <Layout.Content style={{ padding: '24px clamp(12px, 3vw, 32px) 48px', maxWidth: 1440, width: '100%', minWidth: 0, margin: '0 auto', boxSizing: 'border-box', overflowWrap: 'anywhere' }} data-testid="operate-home">
        {body}
      </Layout.Content>
    </Layout>
  );
}
