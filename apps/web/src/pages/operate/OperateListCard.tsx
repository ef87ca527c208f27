import type { ReactNode, Ref } from 'react';
import { Button, Card, Flex, Typography } from 'antd';
import { ReloadOutlined } from '@ant-design/icons';
import { useT } from '../../locales/i18n.ts';

/** The frame of an operator list: its title with the total beside it, and a refresh button. */
export function OperateListCard(props: {
  title: ReactNode;
  /** "共 n 条", shown once the first page has loaded. */
  totalText?: ReactNode;
  refreshing: boolean;
  onRefresh: () => void;
  testId: string;
  refreshTestId: string;
  cardRef?: Ref<HTMLDivElement>;
  children: ReactNode;
}) {
  const { t } = useT();
  return (
    <Card
      ref={props.cardRef}
      title={
        <Flex gap={8} align="baseline">
          {props.title}
          {props.totalText !== undefined && <Typography.Text type="secondary" style={{ fontSize: 13, fontWeight: 400 }}>{props.totalText}</Typography.Text>}
        </Flex>
      }
      extra={
        <Button icon={<ReloadOutlined />} onClick={props.onRefresh} loading={props.refreshing} data-testid={props.refreshTestId}>
          {t('site.operate.refresh')}
        </Button>
      }
      data-testid={props.testId}
    >
      {props.children}
    </Card>
  );
}
