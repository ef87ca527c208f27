import { useState } from 'react';
import { Typography } from 'antd';
import { useT } from '../../locales/i18n.ts';
import { CaptchaFrame, isInputDisabled, Piece } from './CaptchaFrame.tsx';
import { CaptchaSlider } from './CaptchaSlider.tsx';
import type { CaptchaViewProps } from './types.ts';

/**
 * 旋转: the round thumb lies over the blank disk of the image, turned by a secret angle; the slider
 * turns it clockwise from 0° to 360° (on top of `data.angle`, which the server sends as 0). Letting
 * go sends the turn the user applied, with the slider's record in degrees.
 */
export function RotateCaptcha(props: CaptchaViewProps) {
  const { data, status, onCheck } = props;
  const { t } = useT();
  const [ratio, setRatio] = useState(0);
  const degrees = (r: number) => Math.round(r * 360);
  const disabled = isInputDisabled(props);

  return (
    <CaptchaFrame
      {...props}
      title={<Typography.Text strong>{t('captcha.rotateTitle')}</Typography.Text>}
      stage={
        <Piece
          data={data}
          x={data.thumbX}
          y={data.thumbY}
          alt={t('captcha.rotateAlt')}
          style={{ borderRadius: '50%', transform: `rotate(${data.angle + degrees(ratio)}deg)`, pointerEvents: 'none', boxShadow: '0 0 6px rgba(0,0,0,0.35)' }}
        />
      }
      footer={
        <CaptchaSlider
          value={ratio}
          onChange={setRatio}
          status={status}
          disabled={disabled}
          valueText={`${degrees(ratio)}°`}
          toSample={(r) => [degrees(r), 0]}
          onRelease={(r, track) => !disabled && onCheck({ angle: degrees(r) % 360 }, track)}
        />
      }
    />
  );
}
