import { useState } from 'react';
import { Typography } from 'antd';
import { useT } from '../../locales/i18n.ts';
import { CaptchaFrame, isInputDisabled, Piece } from './CaptchaFrame.tsx';
import { CaptchaSlider } from './CaptchaSlider.tsx';
import type { CaptchaViewProps } from './types.ts';

/**
 * 滑动拼图: the piece starts at (thumbX, thumbY) and the slider moves it along that row, left or
 * right; letting go sends the piece's top-left in image pixels, with the slider's record.
 */
export function SlideCaptcha(props: CaptchaViewProps) {
  const { data, status, onCheck } = props;
  const { t } = useT();
  const maxX = data.width - data.thumbWidth;
  const [ratio, setRatio] = useState(maxX > 0 ? data.thumbX / maxX : 0);
  const xAt = (r: number) => Math.round(r * maxX);
  const y = Math.round(data.thumbY);
  const disabled = isInputDisabled(props);

  return (
    <CaptchaFrame
      {...props}
      title={<Typography.Text strong>{t('captcha.slideTitle')}</Typography.Text>}
      stage={<Piece data={data} x={xAt(ratio)} y={data.thumbY} alt={t('captcha.pieceAlt')} style={{ pointerEvents: 'none', filter: 'drop-shadow(0 0 3px rgba(0,0,0,0.45))' }} />}
      footer={
        <CaptchaSlider
          value={ratio}
          onChange={setRatio}
          status={status}
          disabled={disabled}
          toSample={(r) => [xAt(r), y]}
          onRelease={(r, track) => !disabled && onCheck({ x: xAt(r), y }, track)}
        />
      }
    />
  );
}
