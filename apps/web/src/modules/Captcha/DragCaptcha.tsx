import { useRef, useState, type KeyboardEvent } from 'react';
import { Typography } from 'antd';
import { useT } from '../../locales/i18n.ts';
import { CaptchaFrame, isInputDisabled, Piece } from './CaptchaFrame.tsx';
import { usePointerDrag } from './usePointerDrag.ts';
import { useTrack } from './useTrack.ts';
import { clamp, type CaptchaViewProps } from './types.ts';

type Pos = { x: number; y: number };

/**
 * 拖动拼图: the piece starts at (thumbX, thumbY) and moves freely over the image; dropping it sends
 * its top-left in image pixels with the record of the way there. Arrow keys move it too (Shift:
 * 10 px), Enter drops it.
 */
export function DragCaptcha(props: CaptchaViewProps) {
  const { data, onCheck } = props;
  const { t } = useT();
  const stage = useRef<HTMLDivElement>(null);
  const [pos, setPos] = useState<Pos>({ x: data.thumbX, y: data.thumbY });
  // The position as last set, read on drop: the render with the last move may not have happened yet.
  const current = useRef(pos);
  const from = useRef(pos);
  const track = useTrack();
  const [active, setActive] = useState(false);
  const disabled = isInputDisabled(props);
  const place = (x: number, y: number) => {
    current.current = { x: Math.round(clamp(x, 0, data.width - data.thumbWidth)), y: Math.round(clamp(y, 0, data.height - data.thumbHeight)) };
    track.add(current.current.x, current.current.y);
    setPos(current.current);
  };
  const drop = () => {
    const at = current.current;
    // A press without a move is not an answer: it would burn the challenge for nothing.
    if (disabled || (at.x === from.current.x && at.y === from.current.y)) return track.reset();
    onCheck({ x: at.x, y: at.y }, track.end(at.x, at.y));
    track.reset();
  };

  const drag = usePointerDrag(disabled, {
    onStart() {
      from.current = current.current;
      track.begin(current.current.x, current.current.y);
      setActive(true);
    },
    onMove(dx, dy) {
      // Pointer moves are CSS pixels; the image may be shown smaller than its real size.
      const scale = data.width / (stage.current?.getBoundingClientRect().width || data.width);
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
    if (move) {
      track.ensure(pos.x, pos.y);
      place(pos.x + move[0], pos.y + move[1]);
    } else if (e.key === 'Enter' || e.key === ' ') drop();
    else return;
    e.preventDefault();
  };

  return (
    <CaptchaFrame
      {...props}
      title={<Typography.Text strong>{t('captcha.dragTitle')}</Typography.Text>}
      stageRef={stage}
      stage={
        <Piece
          {...drag}
          data={data}
          x={pos.x}
          y={pos.y}
          alt={t('captcha.pieceAlt')}
          tabIndex={disabled ? -1 : 0}
          onKeyDown={onKeyDown}
          style={{
            cursor: disabled ? 'default' : active ? 'grabbing' : 'grab',
            touchAction: 'none',
            filter: active ? 'drop-shadow(0 4px 8px rgba(0,0,0,0.55))' : 'drop-shadow(0 0 3px rgba(0,0,0,0.45))',
          }}
        />
      }
    />
  );
}
