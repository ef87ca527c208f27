import { useRef, useState, type KeyboardEvent } from 'react';
import { theme } from 'antd';
import { ArrowRightOutlined, CheckOutlined, CloseOutlined } from '@ant-design/icons';
import { useT } from '../../locales/i18n.ts';
import { usePointerDrag } from './usePointerDrag.ts';
import { useTrack, type TrackSample } from './useTrack.ts';
import { clamp, type CaptchaStatus } from './types.ts';

const HANDLE = 40;

type SliderProps = {
  /** Position of the handle, 0 (left) to 1 (right). */
  value: number;
  onChange(value: number): void;
  /**
   * The user let go (or pressed Enter) after moving the handle, with the position at that moment
   * and the record of the way there: time to check. A press that moved nothing reports nothing.
   */
  onRelease(value: number, track: TrackSample[]): void;
  /** A position in the answer's units (image px, degrees), as the record keeps it. */
  toSample(value: number): [number, number];
  status: CaptchaStatus;
  disabled: boolean;
  /** aria-valuetext, e.g. the angle for rotate. */
  valueText?: string;
};

/** The track and handle under slide and rotate; the handle follows the finger exactly. */
export function CaptchaSlider({ value, onChange, onRelease, toSample, status, disabled, valueText }: SliderProps) {
  const { t } = useT();
  const { token } = theme.useToken();
  const track = useRef<HTMLDivElement>(null);
  const from = useRef(0);
  // The position as last set, read on release: the render with the last move may not have happened yet.
  const current = useRef(value);
  const record = useTrack();
  const set = (v: number) => {
    current.current = v;
    record.add(...toSample(v));
    onChange(v);
  };
  const release = (v: number) => {
    const samples = record.end(...toSample(v));
    record.reset();
    if (samples.length >= 2) onRelease(v, samples);
  };
  const [active, setActive] = useState(false);

  const drag = usePointerDrag(disabled, {
    onStart() {
      from.current = value;
      current.current = value;
      record.begin(...toSample(value));
      setActive(true);
    },
    onMove(dx) {
      // jsdom and hidden layouts measure 0: fall back to the nominal width rather than divide by it.
      const span = (track.current?.getBoundingClientRect().width || 300) - HANDLE;
      set(clamp(from.current + dx / span, 0, 1));
    },
    onEnd() {
      setActive(false);
      if (current.current !== from.current) release(current.current);
      else record.reset();
    },
  });

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (disabled) return;
    const step = e.shiftKey ? 0.05 : 0.004;
    const move = e.key === 'ArrowRight' || e.key === 'ArrowUp' ? step : e.key === 'ArrowLeft' || e.key === 'ArrowDown' ? -step : 0;
    if (move) {
      record.ensure(...toSample(value));
      set(clamp(value + move, 0, 1));
    } else if (e.key === 'Enter' || e.key === ' ') release(value);
    else return;
    e.preventDefault();
  };

  const color = status === 'success' ? token.colorSuccess : status === 'fail' ? token.colorError : token.colorPrimary;
  const left = `calc((100% - ${HANDLE}px) * ${value})`;
  return (
    <div
      ref={track}
      style={{ position: 'relative', height: HANDLE, borderRadius: HANDLE / 2, background: token.colorFillSecondary, border: `1px solid ${token.colorBorderSecondary}` }}
    >
      <div style={{ position: 'absolute', left: 0, top: 0, bottom: 0, width: `calc(${left} + ${HANDLE}px)`, borderRadius: HANDLE / 2, background: color, opacity: 0.18 }} />
      <div
        {...drag}
        role="slider"
        tabIndex={disabled ? -1 : 0}
        aria-label={t('captcha.sliderLabel')}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.round(value * 100)}
        aria-valuetext={valueText}
        aria-disabled={disabled}
        data-testid="captcha-slider"
        onKeyDown={onKeyDown}
        style={{
          position: 'absolute',
          top: -1,
          left,
          width: HANDLE,
          height: HANDLE,
          borderRadius: '50%',
          display: 'flex',
          alignItems: 'center',
          justifyContent: 'center',
          color: '#fff',
          background: color,
          boxShadow: active ? `0 0 0 4px ${token.colorPrimaryBg}` : token.boxShadowTertiary,
          cursor: disabled ? 'default' : active ? 'grabbing' : 'grab',
          touchAction: 'none',
          outlineOffset: 2,
        }}
      >
        {status === 'success' ? <CheckOutlined /> : status === 'fail' ? <CloseOutlined /> : <ArrowRightOutlined />}
      </div>
    </div>
  );
}
