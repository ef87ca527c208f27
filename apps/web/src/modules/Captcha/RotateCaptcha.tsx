import { useState } from 'react';
import { Typography } from 'antd';
import { useT } from '../../locales/i18n.ts';
import { CaptchaFrame, StageImage } from './CaptchaFrame.tsx';
import { CaptchaSlider } from './CaptchaSlider.tsx';
import { pct, type CaptchaViewProps } from './types.ts';

/**
 * 旋转: the round thumb lies over the blank disk of the image, turned by a secret angle; the slider
 * turns it clockwise from 0° to 360° (on top of `data.angle`, which the server sends as 0). Letting
 * go sends the turn the user applied.
 */
export function RotateCaptcha({ data, status, message, loading, onCheck, onRefresh }: CaptchaViewProps) {
  const { t } = useT();
  const [ratio, setRatio] = useState(0);
  const angle = Math.round(ratio * 360);
  const disabled = status !== 'idle' || Boolean(loading);

  return (
    <CaptchaFrame
      title={<Typography.Text strong>{t('captcha.rotateTitle')}</Typography.Text>}
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
            alt={t('captcha.rotateAlt')}
            draggable={false}
            style={{
              position: 'absolute',
              left: pct(data.thumbX, data.width),
              top: pct(data.thumbY, data.height),
              width: pct(data.thumbWidth, data.width),
              height: pct(data.thumbHeight, data.height),
              borderRadius: '50%',
              transform: `rotate(${data.angle + angle}deg)`,
              pointerEvents: 'none',
              boxShadow: '0 0 6px rgba(0,0,0,0.35)',
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
          valueText={`${angle}°`}
          onRelease={(r) => {
            if (disabled || r === 0) return;
            onCheck({ angle: Math.round(r * 360) % 360 });
          }}
        />
      }
    />
  );
}
