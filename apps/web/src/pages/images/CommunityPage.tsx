import { useState } from 'react';
import { Button, Card, Empty, Flex, Input, Pagination, Result, Segmented, Skeleton, Space, Tag, Typography } from 'antd';
import { FireOutlined, UserOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router';
import type { UserImage } from '@suanli/contract/instance-ops';
import { formatDateTime, formatFileSize } from '@suanli/domain/format';
import { communityImagesQuery } from '../../api/queries/images.ts';
import { getErrorMessage } from '../../api/errors.ts';
import { useT } from '../../locales/i18n.ts';
import { pathOf } from '../../route-table.ts';
import { ServerText } from '../market/ServerText.tsx';
import { createFromImagePath } from '../center/image/image-parts.tsx';
import marketStyles from '../market/market.module.css';
import styles from './community.module.css';

const DETAIL_PATH = pathOf('communityImageDetail');
const PAGE_SIZE = 12;

function CommunityCard({ image }: { image: UserImage }) {
  const { t } = useT();
  const navigate = useNavigate();
  return (
    <Card className={styles.card} data-testid="community-card" data-image-id={image.id}>
      <Flex justify="space-between" align="start" gap={8}>
        <h2 className={styles.name}>
          <Link to={`${DETAIL_PATH}?id=${image.id}`} data-testid="community-name">
            <ServerText>{image.name}</ServerText>
          </Link>
        </h2>
        {image.mine && (
          <Tag color="blue" style={{ marginInlineEnd: 0, flex: 'none' }}>
            {t('images.community.mine')}
          </Tag>
        )}
      </Flex>
      <Typography.Paragraph type="secondary" ellipsis={{ rows: 2 }} style={{ margin: 0 }}>
        {image.description ? <ServerText>{image.description}</ServerText> : t('images.noDescription')}
      </Typography.Paragraph>
      <div className={styles.meta}>
        <Space size={12} wrap>
          <span>
            <UserOutlined aria-hidden /> <span className="sr-only">{t('images.fields.author')}: </span>
            <ServerText>{image.authorName}</ServerText>
          </span>
          <span data-testid="community-uses">
            <FireOutlined aria-hidden /> {t('images.community.uses', { count: image.useCount })}
          </span>
          <span>{formatFileSize(image.sizeBytes)}</span>
        </Space>
        <div>
          {t('images.fields.sharedAt')}: {image.sharedAt ? formatDateTime(image.sharedAt) : t('images.none')}
        </div>
      </div>
      <div className={styles.foot}>
        <Button size="small" onClick={() => navigate(`${DETAIL_PATH}?id=${image.id}`)}>
          {t('images.community.details')}
        </Button>
        <Button type="primary" size="small" onClick={() => navigate(createFromImagePath(image.id))} aria-label={`${t('images.community.use')} ${image.name}`} data-testid="community-use">
          {t('images.community.use')}
        </Button>
      </div>
    </Card>
  );
}

/** Issue #10 (images): /images/index, the images the tenant's users shared. */
export function CommunityPage() {
  const { t } = useT();
  const [keyword, setKeyword] = useState('');
  const [sort, setSort] = useState<'hot' | 'new'>('hot');
  const [page, setPage] = useState(1);
  const list = useQuery(communityImagesQuery({ page, pageSize: PAGE_SIZE, sort, keyword: keyword || undefined }));

  return (
    <div className={marketStyles.page} data-testid="community-page">
      <div className={marketStyles.container}>
        <div className={marketStyles.head}>
          <h1>{t('images.community.title')}</h1>
          <p>{t('images.community.subtitle')}</p>
        </div>
        <Card size="small" style={{ marginBottom: 16 }}>
          <Flex gap={16} wrap align="center">
            <Input.Search
              allowClear
              placeholder={t('images.community.searchPlaceholder')}
              aria-label={t('images.community.search')}
              style={{ width: 280, maxWidth: '100%' }}
              maxLength={64}
              onSearch={(v) => {
                setKeyword(v.trim());
                setPage(1);
              }}
              data-testid="community-search"
            />
            <Space size={8}>
              <Typography.Text type="secondary" id="community-sort-label">
                {t('images.community.sort')}
              </Typography.Text>
              <Segmented<'hot' | 'new'>
                aria-labelledby="community-sort-label"
                value={sort}
                onChange={(v) => {
                  setSort(v);
                  setPage(1);
                }}
                options={[
                  { value: 'hot', label: t('images.community.hot') },
                  { value: 'new', label: t('images.community.latest') },
                ]}
                data-testid="community-sort"
              />
            </Space>
          </Flex>
        </Card>
        {list.isPending ? (
          <div className={styles.cards} data-testid="community-loading">
            {[0, 1, 2].map((i) => (
              <Card key={i}>
                <Skeleton active paragraph={{ rows: 3 }} />
              </Card>
            ))}
          </div>
        ) : list.isError ? (
          <Card>
            <Result
              status="warning"
              title={t('images.community.loadFailed')}
              subTitle={<ServerText>{getErrorMessage(list.error)}</ServerText>}
              extra={
                <Button type="primary" onClick={() => void list.refetch()} loading={list.isFetching}>
                  {t('common.retry')}
                </Button>
              }
              data-testid="community-error"
            />
          </Card>
        ) : list.data.list.length === 0 ? (
          <Card>
            <Empty description={keyword ? t('images.community.noMatch') : t('images.community.empty')} data-testid="community-empty" />
          </Card>
        ) : (
          <>
            <div className={styles.cards} aria-busy={list.isFetching} data-testid="community-list">
              {list.data.list.map((image) => (
                <CommunityCard key={image.id} image={image} />
              ))}
            </div>
            <Flex justify="end" style={{ marginTop: 16 }}>
              <Pagination current={page} pageSize={PAGE_SIZE} total={list.data.total} showSizeChanger={false} showTotal={(total) => t('images.community.total', { total })} onChange={setPage} />
            </Flex>
          </>
        )}
      </div>
    </div>
  );
}
