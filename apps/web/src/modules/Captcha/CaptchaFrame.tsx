import type { CSSProperties, ImgHTMLAttributes, MouseEvent, ReactNode, Ref } from 'react';
import type { CaptchaChallenge } from '@suanli/contract/captcha';
import { Button, Flex, Spin, Tooltip, Typography, theme } from 'antd';
import { CheckCircleFilled, CloseCircleFilled, ReloadOutlined } from '@ant-design/icons';
import { useT } from '../../locales/i18n.ts';
import { pct, type CaptchaViewProps } from './types.ts';

/** A view's own props pass straight through: `<CaptchaFrame {...props} title=… stage=… />`. */
type FrameProps = Pick<CaptchaViewProps, 'data' | 'status' | 'message' | 'loading' | 'onRefresh'> & {
  title: ReactNode;
  /** What lies over the challenge image (pieces, markers), placed in image pixels (see Piece). */
  stage: ReactNode;
  stageStyle?: CSSProperties;
  stageRef?: Ref<HTMLDivElement>;
  onStageClick?(e: MouseEvent<HTMLDivElement>): void;
  /** Under the image: the slider of slide and rotate. */
  footer?: ReactNode;
};

/**
 * The common shell of the four captchas: the instruction with a refresh button, the image (at its
 * own size, shrinking on narrow screens) with what lies over it, an optional slider, and the
 * outcome line.
 */
export function CaptchaFrame({ data, title, status, message, loading, onRefresh, stage, stageStyle, stageRef, onStageClick, footer }: FrameProps) {
  const { t } = useT();
  const { width, height } = data;
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
            {/* Not draggable, so the browser's own image drag never starts. */}
            <img data-testid="captcha-image" src={data.image} alt={t('captcha.imageAlt')} draggable={false} style={{ display: 'block', width: '100%', height: '100%', pointerEvents: 'none' }} />
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

/** A view can't take input while it waits for a verdict or a new challenge. */
export const isInputDisabled = ({ status, loading }: Pick<CaptchaViewProps, 'status' | 'loading'>) => status !== 'idle' || Boolean(loading);

type PieceProps = Omit<ImgHTMLAttributes<HTMLImageElement>, 'src'> & { data: CaptchaChallenge; x: number; y: number };

/** The challenge's thumb laid over the image with its top-left at (x, y) image pixels, scaling with it. */
export function Piece({ data, x, y, style, ...img }: PieceProps) {
  return (
    <img
      data-testid="captcha-piece"
      src={data.thumb}
      draggable={false}
      {...img}
      style={{
        position: 'absolute',
        left: pct(x, data.width),
        top: pct(y, data.height),
        width: pct(data.thumbWidth, data.width),
        height: pct(data.thumbHeight, data.height),
        ...style,
      }}
    />
  );
}
