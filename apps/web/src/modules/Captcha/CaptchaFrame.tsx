import type { CSSProperties, MouseEvent, ReactNode, Ref } from 'react';
import { Button, Flex, Spin, Tooltip, Typography, theme } from 'antd';
import { CheckCircleFilled, CloseCircleFilled, ReloadOutlined } from '@ant-design/icons';
import { useT } from '../../locales/i18n.ts';
import type { CaptchaStatus } from './types.ts';

type FrameProps = {
  title: ReactNode;
  /** Width and height of the challenge image, in image pixels. */
  width: number;
  height: number;
  status: CaptchaStatus;
  message?: string;
  loading?: boolean;
  onRefresh(): void;
  /** The image with its pieces; positioned children use percentages of the image. */
  stage: ReactNode;
  stageStyle?: CSSProperties;
  stageRef?: Ref<HTMLDivElement>;
  onStageClick?(e: MouseEvent<HTMLDivElement>): void;
  /** Under the image: the slider of slide and rotate. */
  footer?: ReactNode;
};

/**
 * The common shell of the four captchas: the instruction with a refresh button, the image (at its
 * own size, shrinking on narrow screens), an optional slider, and the outcome line.
 */
export function CaptchaFrame({ title, width, height, status, message, loading, onRefresh, stage, stageStyle, stageRef, onStageClick, footer }: FrameProps) {
  const { t } = useT();
  const { token } = theme.useToken();
  const outcome =
    status === 'success' ? (
      <Typography.Text type="success" data-testid="captcha-result" data-status="success">
        <CheckCircleFilled /> {t('captcha.success')}
      </Typography.Text>
    ) : status === 'fail' ? (
      <Typography.Text type="danger" data-testid="captcha-result" data-status="fail">
        <CloseCircleFilled /> {message || t('captcha.failed')}
      </Typography.Text>
    ) : status === 'checking' ? (
      <Typography.Text type="secondary" data-testid="captcha-result" data-status="checking">
        {t('captcha.checking')}
      </Typography.Text>
    ) : null;

  return (
    // The instruction gets at least the 300 px of the wide types, so rotate's longer title fits on one line.
    <div style={{ width: Math.max(width, 300), maxWidth: '100%', margin: '0 auto' }}>
      <Flex align="center" justify="space-between" gap={8} style={{ minHeight: 40, marginBottom: 8 }}>
        <div style={{ flex: 1, minWidth: 0 }}>{title}</div>
        <Tooltip title={t('captcha.refresh')}>
          <Button type="text" icon={<ReloadOutlined />} aria-label={t('captcha.refresh')} data-testid="captcha-refresh" onClick={onRefresh} disabled={status === 'checking'} />
        </Tooltip>
      </Flex>
      <div style={{ width, maxWidth: '100%', margin: '0 auto' }}>
        <Spin spinning={Boolean(loading)}>
          <div
            ref={stageRef}
            onClick={onStageClick}
            style={{
              position: 'relative',
              width: '100%',
              aspectRatio: `${width} / ${height}`,
              overflow: 'hidden',
              borderRadius: token.borderRadius,
              background: token.colorFillTertiary,
              userSelect: 'none',
              WebkitUserSelect: 'none',
              ...stageStyle,
            }}
          >
            {stage}
          </div>
        </Spin>
        {footer ? <div style={{ marginTop: 12 }}>{footer}</div> : null}
      </div>
      <div style={{ minHeight: 22, marginTop: 8, textAlign: 'center' }} aria-live="polite">
        {outcome}
      </div>
    </div>
  );
}

/** The challenge image filling the stage; not draggable, so the browser's image drag never starts. */
export function StageImage({ src, alt }: { src: string; alt: string }) {
  return <img data-testid="captcha-image" src={src} alt={alt} draggable={false} style={{ display: 'block', width: '100%', height: '100%', pointerEvents: 'none' }} />;
}
