import { useRef, useState, type KeyboardEvent } from 'react';
import { Typography } from 'antd';
import { useT } from '../../locales/i18n.ts';
import { CaptchaFrame, StageImage } from './CaptchaFrame.tsx';
import { usePointerDrag } from './usePointerDrag.ts';
import { clamp, pct, type CaptchaViewProps } from './types.ts';

/**
 * 拖动拼图: the piece starts at (thumbX, thumbY) and moves freely over the image; dropping it sends
 * its top-left in image pixels. Arrow keys move it too (Shift: 10 px), Enter drops it.
 */
export function DragCaptcha({ data, status, message, loading, onCheck, onRefresh }: CaptchaViewProps) {
  const { t } = useT();
  const stage = useRef<HTMLDivElement>(null);
  const [pos, setPos] = useState({ x: data.thumbX, y: data.thumbY });
  // The position as last set, read on drop: the render with the last move may not have happened yet.
  const current = useRef(pos);
  const from = useRef(pos);
  const [active, setActive] = useState(false);
  const disabled = status !== 'idle' || Boolean(loading);
  const place = (x: number, y: number) => {
    current.current = { x: clamp(x, 0, data.width - data.thumbWidth), y: clamp(y, 0, data.height - data.thumbHeight) };
    setPos(current.current);
  };
  const drop = () => {
    const at = current.current;
    // A press without a move is not an answer: it would burn the challenge for nothing.
    if (disabled || (at.x === data.thumbX && at.y === data.thumbY)) return;
    onCheck({ x: Math.round(at.x), y: Math.round(at.y) });
  };

  const drag = usePointerDrag(disabled, {
    onStart() {
      from.current = current.current;
      setActive(true);
    },
    onMove(dx, dy) {
      // Pointer moves are CSS pixels; the image may be shown smaller than its real size.
      const shown = stage.current?.getBoundingClientRect().width || data.width;
      const scale = data.width / shown;
      place(from.current.x + dx * scale, from.current.y + dy * scale);
    },
    onEnd() {
      setActive(false);
      drop();
    },
  });

  const onKeyDown = (e: KeyboardEvent<HTMLImageElement>) => {
    if (disabled) return;
    const step = e.shiftKey ? 10 : 1;
    const moves: Record<string, [number, number]> = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
    const move = moves[e.key];
    if (move) place(pos.x + move[0], pos.y + move[1]);
    else if (e.key === 'Enter' || e.key === ' ') drop();
    else return;
    e.preventDefault();
  };

  return (
    <CaptchaFrame
      title={<Typography.Text strong>{t('captcha.dragTitle')}</Typography.Text>}
      width={data.width}
      height={data.height}
      status={status}
      message={message}
      loading={loading}
      onRefresh={onRefresh}
      stageRef={stage}
      stage={
        <>
          <StageImage src={data.image} alt={t('captcha.imageAlt')} />
          <img
            {...drag}
            data-testid="captcha-piece"
            src={data.thumb}
            alt={t('captcha.pieceAlt')}
            draggable={false}
            tabIndex={disabled ? -1 : 0}
            onKeyDown={onKeyDown}
            style={{
              position: 'absolute',
              left: pct(pos.x, data.width),
              top: pct(pos.y, data.height),
              width: pct(data.thumbWidth, data.width),
              height: pct(data.thumbHeight, data.height),
              cursor: disabled ? 'default' : active ? 'grabbing' : 'grab',
              touchAction: 'none',
              filter: active ? 'drop-shadow(0 4px 8px rgba(0,0,0,0.55))' : 'drop-shadow(0 0 3px rgba(0,0,0,0.45))',
            }}
          />
        </>
      }
    />
  );
}
