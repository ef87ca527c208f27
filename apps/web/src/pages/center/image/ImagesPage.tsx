import { useState, type HTMLAttributes } from 'react';
import { Button, Card, Dropdown, Empty, Flex, Result, Table, Tag, Tooltip, Typography, type TableColumnsType } from 'antd';
import { MoreOutlined, PlusOutlined, ReloadOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router';
import { MAX_PRIVATE_IMAGES, type UserImage } from '@suanli/contract/instance-ops';
import { formatDateTime, formatFileSize } from '@suanli/domain/format';
import { privateImagesQuery } from '../../../api/queries/images.ts';
import { getErrorMessage } from '../../../api/errors.ts';
import { useT } from '../../../locales/i18n.ts';
import { pathOf } from '../../../route-table.ts';
import { ServerText } from '../../market/ServerText.tsx';
import { EditImageModal, ImageStatus, SourceInstance, createFromImagePath, useImageActions } from './image-parts.tsx';
import { useScrollRegion } from '../../../modules/useScrollRegion.ts';

const DETAIL_PATH = pathOf('centerImageDetail');
const INSTANCES_PATH = pathOf('centerControl');

/** Issue #10 (images): /center/image/index, the user's private images with their actions. */
export function ImagesPage() {
  const { t } = useT();
  // Keyboard users can scroll the table sideways: its scroll box is a focusable, named region (axe).
  const tableBox = useScrollRegion<HTMLDivElement>(t('images.mine.title'));
  const navigate = useNavigate();
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(20);
  const [editing, setEditing] = useState<UserImage | null>(null);
  const list = useQuery(privateImagesQuery(page, pageSize));
  const { toggleShare, confirmDelete } = useImageActions();
  const building = list.data?.list.some((i) => i.status === 'building');

  const columns: TableColumnsType<UserImage> = [
    {
      title: t('images.fields.name'),
      key: 'name',
      width: 220,
      render: (_v, image) => (
        <Flex vertical gap={2} style={{ minWidth: 0 }}>
          <Link to={`${DETAIL_PATH}?id=${image.id}`} data-testid="image-name">
            <ServerText>{image.name}</ServerText>
          </Link>
          <Typography.Text type="secondary" style={{ fontSize: 12 }} ellipsis={{ tooltip: image.description || undefined }}>
            {image.description ? <ServerText>{image.description}</ServerText> : t('images.noDescription')}
          </Typography.Text>
        </Flex>
      ),
    },
    { title: t('images.fields.status'), key: 'status', width: 150, render: (_v, image) => <ImageStatus image={image} /> },
    { title: t('images.fields.size'), key: 'size', width: 100, render: (_v, image) => (image.status === 'ready' ? formatFileSize(image.sizeBytes) : t('images.none')) },
    { title: t('images.fields.source'), key: 'source', width: 170, render: (_v, image) => <SourceInstance image={image} /> },
    { title: t('images.fields.base'), key: 'base', width: 150, render: (_v, image) => <ServerText>{image.baseImageName || t('images.none')}</ServerText> },
    { title: t('images.fields.createdAt'), key: 'createdAt', width: 160, render: (_v, image) => formatDateTime(image.createdAt) },
    {
      title: t('images.fields.share'),
      key: 'shared',
      width: 110,
      render: (_v, image) => (
        <Flex vertical gap={2}>
          <Tag color={image.shared ? 'blue' : 'default'} style={{ width: 'fit-content' }} data-testid="image-shared" data-shared={image.shared}>
            {image.shared ? t('images.shared') : t('images.notShared')}
          </Tag>
          {image.shared && (
            <Typography.Text type="secondary" style={{ fontSize: 12 }}>
              {t('images.community.uses', { count: image.useCount })}
            </Typography.Text>
          )}
        </Flex>
      ),
    },
    {
      title: t('images.fields.actions'),
      key: 'actions',
      width: 230,
      fixed: 'right',
      render: (_v, image) => {
        const ready = image.status === 'ready';
        return (
          <Flex gap={4} wrap>
            <Button size="small" type="link" onClick={() => navigate(`${DETAIL_PATH}?id=${image.id}`)} data-testid="image-detail">
              {t('images.mine.detail')}
            </Button>
            <Tooltip title={ready ? undefined : t('images.mine.notReady')}>
              <Button size="small" type="link" disabled={!ready} onClick={() => navigate(createFromImagePath(image.id))} data-testid="image-create">
                {t('images.mine.create')}
              </Button>
            </Tooltip>
            <Button size="small" type="link" disabled={!ready && !image.shared} onClick={() => toggleShare(image)} data-testid="image-share">
              {image.shared ? t('images.mine.withdraw') : t('images.mine.share')}
            </Button>
            <Dropdown
              trigger={['click']}
              menu={{
                items: [
                  { key: 'edit', label: <span data-testid="image-edit">{t('images.mine.edit')}</span> },
                  { type: 'divider' },
                  { key: 'delete', danger: true, disabled: image.status === 'building', label: <span data-testid="image-delete">{t('images.mine.delete')}</span> },
                ],
                onClick: ({ key }) => (key === 'edit' ? setEditing(image) : confirmDelete(image)),
              }}
            >
              <Button size="small" type="text" icon={<MoreOutlined />} aria-label={`${t('images.mine.more')} ${image.name}`} data-testid="image-more">
                {t('images.mine.more')}
              </Button>
            </Dropdown>
          </Flex>
        );
      },
    },
  ];

  return (
    <div data-testid="images-page">
      <Flex justify="space-between" align="center" wrap gap={8} style={{ margin: '4px 0 12px' }}>
        <div>
          <Typography.Title level={2} style={{ margin: 0, fontSize: 20 }}>
            {t('images.mine.title')}
          </Typography.Title>
          <Typography.Text type="secondary">{t('images.mine.subtitle')}</Typography.Text>
        </div>
        <Flex gap={8}>
          <Tooltip title={t('images.mine.refresh')}>
            <Button icon={<ReloadOutlined spin={Boolean(building)} />} aria-label={t('images.mine.refresh')} onClick={() => void list.refetch()} loading={list.isFetching && !list.isPending && !building} />
          </Tooltip>
          <Button type="primary" icon={<PlusOutlined />} onClick={() => navigate(INSTANCES_PATH)}>
            {t('images.mine.toInstances')}
          </Button>
        </Flex>
      </Flex>
      <Card ref={tableBox}>
        {list.isError ? (
          <Result
            status="warning"
            title={t('images.mine.loadFailed')}
            subTitle={<ServerText>{getErrorMessage(list.error)}</ServerText>}
            extra={
              <Button type="primary" onClick={() => void list.refetch()} loading={list.isFetching}>
                {t('common.retry')}
              </Button>
            }
            data-testid="images-error"
          />
        ) : (
          <Table<UserImage>
            rowKey="id"
            size="middle"
            columns={columns}
            dataSource={list.data?.list ?? []}
            loading={list.isPending}
            scroll={{ x: 1290 }}
            onRow={(image) => ({ 'data-testid': 'image-row', 'data-image-id': image.id }) as HTMLAttributes<HTMLElement>}
            locale={{
              emptyText: list.isPending ? (
                <div style={{ height: 96 }} />
              ) : (
                <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('images.mine.empty')} data-testid="images-empty">
                  <Typography.Paragraph type="secondary">{t('images.mine.emptyHint')}</Typography.Paragraph>
                  <Button type="primary" onClick={() => navigate(INSTANCES_PATH)}>
                    {t('images.mine.toInstances')}
                  </Button>
                </Empty>
              ),
            }}
            pagination={{
              current: page,
              pageSize,
              total: list.data?.total ?? 0,
              showSizeChanger: true,
              showTotal: (total) => `${t('images.mine.total', { total })} · ${t('images.mine.quota', { max: MAX_PRIVATE_IMAGES })}`,
              onChange: (p, size) => {
                setPage(size !== pageSize ? 1 : p);
                setPageSize(size);
              },
            }}
            data-testid="images-table"
          />
        )}
      </Card>
      {editing && <EditImageModal image={editing} onClose={() => setEditing(null)} />}
    </div>
  );
}
