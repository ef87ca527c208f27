import { useMemo, useState } from 'react';
import { Button, Card, Empty, Flex, Input, Result, Skeleton, Tag, Typography } from 'antd';
import { ApiOutlined, MessageOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import type { ModelItem } from '@suanli/contract/llm';
import { formatMoney } from '@suanli/domain/format';
import { modelsQuery } from '../../api/queries/llm.ts';
import { getErrorMessage } from '../../api/errors.ts';
import { useT } from '../../locales/i18n.ts';
import { pathOf } from '../../route-table.ts';
import { ServerText } from '../market/ServerText.tsx';
import { LlmShell } from './LlmShell.tsx';
import { filterModels, formatContext, tagsOf } from './helpers.ts';
import styles from './llm.module.css';

function ModelCard({ m }: { m: ModelItem }) {
  const { t } = useT();
  const navigate = useNavigate();
  const headingId = `model-${m.id.replace(/[^A-Za-z0-9_-]/g, '-')}`;
  return (
    <Card className={styles.modelCard} data-testid="model-card" data-model-id={m.id}>
      <article aria-labelledby={headingId} style={{ display: 'contents' }}>
        <Flex justify="space-between" align="flex-start" gap={8}>
          <div style={{ minWidth: 0 }}>
            <h2 className={styles.modelName} id={headingId}>
              <ServerText>{m.name}</ServerText>
            </h2>
            <div className={styles.modelId}>{m.id}</div>
          </div>
          <Tag style={{ marginInlineEnd: 0, flex: 'none' }}>
            <ServerText>{m.provider}</ServerText>
          </Tag>
        </Flex>
        <p className={styles.desc}>{m.description ? <ServerText>{m.description}</ServerText> : <Typography.Text type="secondary">{t('llm.square.noDescription')}</Typography.Text>}</p>
        {m.tags.length > 0 && (
          <Flex wrap gap={4}>
            {m.tags.map((tag) => (
              <Tag key={tag} color="blue" style={{ marginInlineEnd: 0 }}>
                <ServerText>{tag}</ServerText>
              </Tag>
            ))}
          </Flex>
        )}
        <dl className={styles.specs}>
          <dt>{t('llm.square.context')}</dt>
          <dd data-testid="model-context">{t('llm.square.contextValue', { n: formatContext(m.contextLength) })}</dd>
          <dt>{t('llm.square.inputPrice')}</dt>
          <dd data-testid="model-input-price">
            {formatMoney(m.inputPrice)} {t('llm.square.perMillion')}
          </dd>
          <dt>{t('llm.square.outputPrice')}</dt>
          <dd data-testid="model-output-price">
            {formatMoney(m.outputPrice)} {t('llm.square.perMillion')}
          </dd>
        </dl>
        <Flex gap={8}>
          <Button type="primary" icon={<MessageOutlined />} autoInsertSpace={false} onClick={() => navigate(`${pathOf('textChat')}?model=${encodeURIComponent(m.id)}`)} aria-label={t('llm.square.chatWith', { name: m.name })} data-testid="model-chat">
            {t('llm.square.chat')}
          </Button>
          <Button icon={<ApiOutlined />} onClick={() => navigate(`${pathOf('apiKey')}?model=${encodeURIComponent(m.id)}`)} aria-label={t('llm.square.apiFor', { name: m.name })} data-testid="model-api">
            API
          </Button>
        </Flex>
      </article>
    </Card>
  );
}

/** /largeModel/modelSquare: the tenant's published models, searched and filtered here. */
export function ModelSquarePage() {
  const { t } = useT();
  const models = useQuery(modelsQuery());
  const [keyword, setKeyword] = useState('');
  const [tag, setTag] = useState<string | null>(null);
  const all = useMemo(() => models.data?.list ?? [], [models.data]);
  const tags = useMemo(() => (models.data?.tags.length ? models.data.tags : tagsOf(all)), [models.data, all]);
  const shown = useMemo(() => filterModels(all, keyword, tag), [all, keyword, tag]);

  return (
    <LlmShell title={t('llm.square.title')} subtitle={t('llm.square.subtitle')} testId="model-square">
      <Card size="small" style={{ marginBottom: 16 }}>
        <Flex gap={12} wrap align="center">
          <Input.Search
            allowClear
            value={keyword}
            onChange={(e) => setKeyword(e.target.value)}
            placeholder={t('llm.square.searchPlaceholder')}
            aria-label={t('llm.square.search')}
            style={{ maxWidth: 320 }}
            data-testid="model-search"
          />
          <Flex gap={6} wrap align="center" role="group" aria-labelledby="model-tag-label">
            <span className={styles.filterLabel} id="model-tag-label">
              {t('llm.square.tag')}
            </span>
            <Tag.CheckableTag checked={tag === null} onChange={() => setTag(null)} data-testid="model-tag-all">
              {t('llm.square.allTags')}
            </Tag.CheckableTag>
            {tags.map((x) => (
              <Tag.CheckableTag key={x} checked={tag === x} onChange={(on) => setTag(on ? x : null)} data-testid="model-tag">
                <ServerText>{x}</ServerText>
              </Tag.CheckableTag>
            ))}
          </Flex>
        </Flex>
      </Card>
      {models.isError ? (
        <Card>
          <Result
            status="warning"
            title={t('llm.square.loadFailed')}
            subTitle={<ServerText>{getErrorMessage(models.error)}</ServerText>}
            extra={
              <Button type="primary" onClick={() => void models.refetch()} loading={models.isFetching}>
                {t('common.retry')}
              </Button>
            }
            data-testid="model-square-error"
          />
        </Card>
      ) : models.isPending ? (
        <div className={styles.models} aria-busy="true">
          {[0, 1, 2].map((i) => (
            <Card key={i}>
              <Skeleton active />
            </Card>
          ))}
        </div>
      ) : shown.length === 0 ? (
        <Card>
          <Empty description={all.length === 0 ? t('llm.square.none') : t('llm.square.noMatch')} data-testid="model-square-empty" />
        </Card>
      ) : (
        <>
          <p className="sr-only" aria-live="polite">
            {t('llm.square.count', { n: shown.length })}
          </p>
          <div className={styles.models}>
            {shown.map((m) => (
              <ModelCard key={m.id} m={m} />
            ))}
          </div>
        </>
      )}
    </LlmShell>
  );
}
