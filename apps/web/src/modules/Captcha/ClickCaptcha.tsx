import { useEffect, useRef, useState, type MouseEvent } from 'react';
import { Flex, Typography, theme } from 'antd';
import { useT } from '../../locales/i18n.ts';
import { CaptchaFrame, isInputDisabled } from './CaptchaFrame.tsx';
import type { TrackSample } from './useTrack.ts';
import { pct, type CaptchaViewProps } from './types.ts';

/** A click in image pixels, and when it came (ms since the challenge was shown). */
type Point = { x: number; y: number; t: number };

/**
 * 点选: the title names the characters (the 150×40 thumb shows them as drawn); each click on the
 * image drops a numbered marker, clicking a marker takes it and the later ones back, and the
 * answer is sent as soon as there is one click per character. Clicks come from mouse and touch alike.
 */
export function ClickCaptcha(props: CaptchaViewProps) {
  const { data, status, onCheck } = props;
  const { t } = useT();
  const { token } = theme.useToken();
  const [points, setPoints] = useState<Point[]>([]);
  const shownAt = useRef(0);
  useEffect(() => {
    shownAt.current = performance.now();
  }, []);
  const words = data.words ?? [];
  const needed = words.length || 1;
  const disabled = isInputDisabled(props);

  const onStageClick = (e: MouseEvent<HTMLDivElement>) => {
    if (disabled || points.length >= needed) return;
    const rect = e.currentTarget.getBoundingClientRect();
    // The image may be shown smaller than its real size; answers are in image pixels.
    const scaleX = rect.width ? data.width / rect.width : 1;
    const scaleY = rect.height ? data.height / rect.height : 1;
    const p = { x: Math.round((e.clientX - rect.left) * scaleX), y: Math.round((e.clientY - rect.top) * scaleY), t: Math.round(performance.now() - shownAt.current) };
    const next = [...points, p];
    setPoints(next);
    if (next.length === needed) {
      const track = next.map((q): TrackSample => [q.t, q.x, q.y]);
      onCheck({ points: next.map((q, index) => ({ index, x: q.x, y: q.y })) }, track);
    }
  };

  const undoFrom = (i: number) => (e: MouseEvent) => {
    e.stopPropagation();
    if (!disabled) setPoints((ps) => ps.slice(0, i));
  };

  const wordsText = words.join(' ');
  return (
    <CaptchaFrame
      title={
        <Flex align="center" gap={8} wrap>
          <Typography.Text strong>{t('captcha.clickTitle')}</Typography.Text>
          <img
            src={data.thumb}
            alt={t('captcha.wordsAlt', { words: wordsText })}
            title={wordsText}
            data-testid="captcha-words"
            data-words={wordsText}
            draggable={false}
            style={{ height: 32, width: (data.thumbWidth / data.thumbHeight) * 32, borderRadius: 4 }}
          />
        </Flex>
      }
      {...props}
      onStageClick={onStageClick}
      stageStyle={{ cursor: disabled ? 'default' : 'crosshair', touchAction: 'manipulation' }}
      stage={
        <>
          {points.map((p, i) => (
            <button
              key={i}
              type="button"
              data-testid="captcha-marker"
              aria-label={t('captcha.clickMarker', { n: i + 1 })}
              title={t('captcha.clickUndo')}
              onClick={undoFrom(i)}
              style={{
                position: 'absolute',
                left: pct(p.x, data.width),
                top: pct(p.y, data.height),
                transform: 'translate(-50%, -50%)',
                width: 24,
                height: 24,
                padding: 0,
                borderRadius: '50%',
                border: '2px solid #fff',
                background: status === 'fail' ? token.colorError : status === 'success' ? token.colorSuccess : token.colorPrimary,
                color: '#fff',
                fontSize: 12,
                fontWeight: 600,
                lineHeight: '20px',
                cursor: 'pointer',
                boxShadow: '0 1px 4px rgba(0,0,0,0.4)',
              }}
            >
              {i + 1}
            </button>
          ))}
        </>
      }
    />
  );
}
