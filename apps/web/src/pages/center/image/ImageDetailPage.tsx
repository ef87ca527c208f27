import { useState } from 'react';
import { Alert, Button, Card, Descriptions, Empty, Flex, Result, Skeleton, Space, Steps, Tag, Tooltip, Typography } from 'antd';
import { ArrowLeftOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import { useNavigate, useSearchParams } from 'react-router';
import type { UserImage } from '@suanli/contract/instance-ops';
import { formatDateTime, formatFileSize } from '@suanli/domain/format';
import { privateImageQuery } from '../../../api/queries/images.ts';
import { ApiError, getErrorMessage } from '../../../api/errors.ts';
import { useT } from '../../../locales/i18n.ts';
import { pathOf } from '../../../route-table.ts';
import { ServerText } from '../../market/ServerText.tsx';
import { EditImageModal, ImageStatus, SourceInstance, createFromImagePath, useImageActions } from './image-parts.tsx';

const LIST_PATH = pathOf('centerImages');

function Detail({ image }: { image: UserImage }) {
  const { t } = useT();
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const { toggleShare, confirmDelete } = useImageActions(() => navigate(LIST_PATH));
  const ready = image.status === 'ready';
  return (
    <Flex vertical gap={16}>
      <Card
        title={
          <Space wrap>
            <ServerText>{image.name}</ServerText>
            <ImageStatus image={image} wide />
          </Space>
        }
        extra={
          <Space wrap>
            <Tooltip title={ready ? undefined : t('images.mine.notReady')}>
              <Button type="primary" disabled={!ready} onClick={() => navigate(createFromImagePath(image.id))} data-testid="image-create">
                {t('images.mine.create')}
              </Button>
            </Tooltip>
            <Button disabled={!ready && !image.shared} onClick={() => toggleShare(image)} data-testid="image-share">
              {image.shared ? t('images.mine.withdraw') : t('images.mine.share')}
            </Button>
            <Button onClick={() => setEditing(true)} data-testid="image-edit">
              {t('images.mine.edit')}
            </Button>
            <Button danger disabled={image.status === 'building'} onClick={() => confirmDelete(image)} data-testid="image-delete">
              {t('images.mine.delete')}
            </Button>
          </Space>
        }
        data-testid="image-detail-card"
      >
        {image.status === 'failed' && image.error && <Alert type="error" showIcon style={{ marginBottom: 16 }} title={t('images.detail.failedReason')} description={<ServerText>{image.error}</ServerText>} data-testid="image-failed" />}
        <Descriptions column={{ xs: 1, sm: 2, lg: 3 }} size="small" bordered>
          <Descriptions.Item label={t('images.fields.id')}>{image.id}</Descriptions.Item>
          <Descriptions.Item label={t('images.fields.size')}>{ready ? formatFileSize(image.sizeBytes) : t('images.none')}</Descriptions.Item>
          <Descriptions.Item label={t('images.fields.os')}>
            <ServerText>{image.os || t('images.none')}</ServerText>
          </Descriptions.Item>
          <Descriptions.Item label={t('images.fields.source')}>
            <SourceInstance image={image} />
          </Descriptions.Item>
          <Descriptions.Item label={t('images.fields.base')}>
            <ServerText>{image.baseImageName || t('images.none')}</ServerText>
          </Descriptions.Item>
          <Descriptions.Item label={t('images.fields.createdAt')}>{formatDateTime(image.createdAt)}</Descriptions.Item>
          <Descriptions.Item label={t('images.fields.share')}>
            <Space wrap>
              <Tag color={image.shared ? 'blue' : 'default'} data-testid="image-shared" data-shared={image.shared}>
                {image.shared ? t('images.shared') : t('images.notShared')}
              </Tag>
              {image.inUse && <Tag color="orange">{t('images.inUse')}</Tag>}
            </Space>
          </Descriptions.Item>
          <Descriptions.Item label={t('images.fields.sharedAt')}>{image.sharedAt ? formatDateTime(image.sharedAt) : t('images.none')}</Descriptions.Item>
          <Descriptions.Item label={t('images.fields.useCount')}>{image.useCount}</Descriptions.Item>
          <Descriptions.Item label={t('images.fields.description')} span={{ xs: 1, sm: 2, lg: 3 }}>
            <Typography.Paragraph style={{ whiteSpace: 'pre-wrap', margin: 0 }} data-testid="image-description">
              {image.description ? <ServerText>{image.description}</ServerText> : t('images.noDescription')}
            </Typography.Paragraph>
          </Descriptions.Item>
        </Descriptions>
      </Card>
      <Card title={t('images.fields.contents')} size="small">
        {image.contents.length === 0 ? (
          <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('images.none')} />
        ) : (
          <Flex wrap gap={6} data-testid="image-contents">
            {image.contents.map((c) => (
              <Tag key={c}>
                <ServerText>{c}</ServerText>
              </Tag>
            ))}
          </Flex>
        )}
      </Card>
      <Card title={t('images.detail.layers')} size="small">
        <Typography.Paragraph type="secondary">{t('images.detail.layersHint', { base: image.baseImageName || t('images.none') })}</Typography.Paragraph>
        <Steps
          orientation="vertical"
          size="small"
          current={2}
          items={[
            { title: <ServerText>{image.baseImageName || t('images.none')}</ServerText>, content: t('images.fields.base') },
            { title: <ServerText>{image.name}</ServerText>, content: image.sourceInstanceId ? `${t('images.fields.source')}: ${image.sourceInstanceId}` : undefined },
          ]}
          data-testid="image-layers"
        />
      </Card>
      {editing && <EditImageModal image={image} onClose={() => setEditing(false)} />}
    </Flex>
  );
}

/** Issue #10 (images): /center/image/detail?id=, everything about one of the user's images. */
export function ImageDetailPage() {
  const { t } = useT();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const id = Number(params.get('id'));
  const valid = Number.isInteger(id) && id > 0;
  const image = useQuery(privateImageQuery(valid ? id : 0));
  const back = (
    <Button type="primary" onClick={() => navigate(LIST_PATH)}>
      {t('images.detail.back')}
    </Button>
  );

  let body;
  if (!valid) body = <Result status="info" title={t('images.detail.missing')} extra={back} data-testid="image-missing" />;
  else if (image.isPending)
    body = (
      <Card>
        <Skeleton active paragraph={{ rows: 6 }} />
      </Card>
    );
  else if (image.isError)
    body =
      image.error instanceof ApiError && image.error.status === 404 ? (
        <Result status="404" title={t('images.detail.notFound')} extra={back} data-testid="image-not-found" />
      ) : (
        <Result
          status="warning"
          title={t('images.detail.loadFailed')}
          subTitle={<ServerText>{getErrorMessage(image.error)}</ServerText>}
          extra={
            <Button type="primary" onClick={() => void image.refetch()} loading={image.isFetching}>
              {t('common.retry')}
            </Button>
          }
          data-testid="image-error"
        />
      );
  else body = <Detail image={image.data} />;

  return (
    <div data-testid="image-detail-page">
      <Flex align="center" gap={8} wrap style={{ margin: '4px 0 12px' }}>
        <Button type="text" icon={<ArrowLeftOutlined />} aria-label={t('images.detail.back')} onClick={() => navigate(LIST_PATH)} />
        <Typography.Title level={2} style={{ margin: 0, fontSize: 20 }}>
          {t('images.detail.title')}
        </Typography.Title>
      </Flex>
      {body}
    </div>
  );
}
