import { Alert, Button, Card, Descriptions, Empty, Flex, Result, Skeleton, Tag, Typography } from 'antd';
import { ArrowLeftOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import { useNavigate, useSearchParams } from 'react-router';
import type { UserImage } from '@suanli/contract/instance-ops';
import { formatDateTime, formatFileSize } from '@suanli/domain/format';
import { communityImageQuery } from '../../api/queries/images.ts';
import { ApiError, getErrorMessage } from '../../api/errors.ts';
import { useT } from '../../locales/i18n.ts';
import { pathOf } from '../../route-table.ts';
import { ServerText } from '../market/ServerText.tsx';
import { createFromImagePath } from '../center/image/image-parts.tsx';
import marketStyles from '../market/market.module.css';

const LIST_PATH = pathOf('communityImages');

function Detail({ image }: { image: UserImage }) {
  const { t } = useT();
  const navigate = useNavigate();
  return (
    <Flex vertical gap={16}>
      <Card
        title={<ServerText>{image.name}</ServerText>}
        extra={
          <Button type="primary" onClick={() => navigate(createFromImagePath(image.id))} data-testid="community-use">
            {t('images.community.use')}
          </Button>
        }
        data-testid="community-detail"
      >
        <Alert type="info" showIcon title={t('images.community.howTo')} style={{ marginBottom: 16 }} />
        <Descriptions column={{ xs: 1, sm: 2, lg: 3 }} size="small" bordered>
          <Descriptions.Item label={t('images.fields.author')}>
            <span data-testid="community-author">
              <ServerText>{image.authorName}</ServerText>
            </span>
            {image.mine && (
              <Tag color="blue" style={{ marginInlineStart: 8 }}>
                {t('images.community.mine')}
              </Tag>
            )}
          </Descriptions.Item>
          <Descriptions.Item label={t('images.fields.useCount')}>
            <span data-testid="community-uses">{image.useCount}</span>
          </Descriptions.Item>
          <Descriptions.Item label={t('images.fields.size')}>{formatFileSize(image.sizeBytes)}</Descriptions.Item>
          <Descriptions.Item label={t('images.fields.os')}>
            <ServerText>{image.os || t('images.none')}</ServerText>
          </Descriptions.Item>
          <Descriptions.Item label={t('images.fields.base')}>
            <ServerText>{image.baseImageName || t('images.none')}</ServerText>
          </Descriptions.Item>
          <Descriptions.Item label={t('images.fields.sharedAt')}>{image.sharedAt ? formatDateTime(image.sharedAt) : t('images.none')}</Descriptions.Item>
          <Descriptions.Item label={t('images.fields.description')} span={{ xs: 1, sm: 2, lg: 3 }}>
            <Typography.Paragraph style={{ whiteSpace: 'pre-wrap', margin: 0 }} data-testid="community-description">
              {image.description ? <ServerText>{image.description}</ServerText> : t('images.noDescription')}
            </Typography.Paragraph>
          </Descriptions.Item>
        </Descriptions>
      </Card>
      <Card title={t('images.fields.contents')} size="small">
        {image.contents.length === 0 ? (
          <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('images.none')} />
        ) : (
          <Flex wrap gap={6} data-testid="community-contents">
            {image.contents.map((c) => (
              <Tag key={c}>
                <ServerText>{c}</ServerText>
              </Tag>
            ))}
          </Flex>
        )}
      </Card>
    </Flex>
  );
}

/** Issue #10 (images): /images/detail?id=, one shared image and "use this image". */
export function CommunityDetailPage() {
  const { t } = useT();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const id = Number(params.get('id'));
  const valid = Number.isInteger(id) && id > 0;
  const image = useQuery(communityImageQuery(valid ? id : 0));
  const back = (
    <Button type="primary" onClick={() => navigate(LIST_PATH)}>
      {t('images.community.back')}
    </Button>
  );

  let body;
  if (!valid || (image.isError && image.error instanceof ApiError && image.error.status === 404)) body = <Result status="404" title={t('images.community.notFound')} extra={back} data-testid="community-not-found" />;
  else if (image.isPending)
    body = (
      <Card>
        <Skeleton active paragraph={{ rows: 6 }} />
      </Card>
    );
  else if (image.isError)
    body = (
      <Result
        status="warning"
        title={t('images.community.loadFailed')}
        subTitle={<ServerText>{getErrorMessage(image.error)}</ServerText>}
        extra={
          <Button type="primary" onClick={() => void image.refetch()} loading={image.isFetching}>
            {t('common.retry')}
          </Button>
        }
        data-testid="community-error"
      />
    );
  else body = <Detail image={image.data} />;

  return (
    <div className={marketStyles.page} data-testid="community-detail-page">
      <div className={marketStyles.container}>
        <Flex align="center" gap={8} className={marketStyles.head}>
          <Button type="text" icon={<ArrowLeftOutlined />} aria-label={t('images.community.back')} onClick={() => navigate(LIST_PATH)} />
          <h1 style={{ margin: 0 }}>{t('images.community.detailTitle')}</h1>
        </Flex>
        {body}
      </div>
    </div>
  );
}
