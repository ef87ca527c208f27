import { useState } from 'react';
import { Typography } from 'antd';
import { useT } from '../../locales/i18n.ts';
import { CaptchaFrame, StageImage } from './CaptchaFrame.tsx';
import { CaptchaSlider } from './CaptchaSlider.tsx';
import { pct, type CaptchaViewProps } from './types.ts';

/**
 * 滑动拼图: the piece sits on the hole's row (thumbY) and follows the slider horizontally; letting
 * go sends the piece's top-left in image pixels.
 */
export function SlideCaptcha({ data, status, message, loading, onCheck, onRefresh }: CaptchaViewProps) {
  const { t } = useT();
  const [ratio, setRatio] = useState(0);
  const maxX = data.width - data.thumbWidth;
  const xAt = (r: number) => data.thumbX + r * (maxX - data.thumbX);
  const x = xAt(ratio);
  const disabled = status !== 'idle' || Boolean(loading);

  return (
    <CaptchaFrame
      title={<Typography.Text strong>{t('captcha.slideTitle')}</Typography.Text>}
      width={data.width}
      height={data.height}
      status={status}
      message={message}
      loading={loading}
      onRefresh={onRefresh}
      stage={
        <>
          <StageImage src={data.image} alt={t('captcha.imageAlt')} />
          <img
            data-testid="captcha-piece"
            src={data.thumb}
            alt={t('captcha.pieceAlt')}
            draggable={false}
            style={{
              position: 'absolute',
              left: pct(x, data.width),
              top: pct(data.thumbY, data.height),
              width: pct(data.thumbWidth, data.width),
              height: pct(data.thumbHeight, data.height),
              pointerEvents: 'none',
              filter: 'drop-shadow(0 0 3px rgba(0,0,0,0.45))',
            }}
          />
        </>
      }
      footer={
        <CaptchaSlider
          value={ratio}
          onChange={setRatio}
          status={status}
          disabled={disabled}
          onRelease={(r) => {
            // A press without a move is not an answer: it would burn the challenge for nothing.
            if (disabled || r === 0) return;
            onCheck({ x: Math.round(xAt(r)), y: Math.round(data.thumbY) });
          }}
        />
      }
    />
  );
}
