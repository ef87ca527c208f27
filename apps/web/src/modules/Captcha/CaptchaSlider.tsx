import { useRef, useState, type KeyboardEvent } from 'react';
import { theme } from 'antd';
import { ArrowRightOutlined, CheckOutlined, CloseOutlined } from '@ant-design/icons';
import { useT } from '../../locales/i18n.ts';
import { usePointerDrag } from './usePointerDrag.ts';
import { clamp, type CaptchaStatus } from './types.ts';

const HANDLE = 40;

type SliderProps = {
  /** Position of the handle, 0 (left) to 1 (right). */
  value: number;
  onChange(value: number): void;
  /** The user let go (or pressed Enter), with the position at that moment: time to check. */
  onRelease(value: number): void;
  status: CaptchaStatus;
  disabled: boolean;
  /** aria-valuetext, e.g. the angle for rotate. */
  valueText?: string;
};

/** The track and handle under slide and rotate; the handle follows the finger exactly. */
export function CaptchaSlider({ value, onChange, onRelease, status, disabled, valueText }: SliderProps) {
  const { t } = useT();
  const { token } = theme.useToken();
  const track = useRef<HTMLDivElement>(null);
  const from = useRef(0);
  // The position as last set, read on release: the render with the last move may not have happened yet.
  const current = useRef(value);
  const set = (v: number) => {
    current.current = v;
    onChange(v);
  };
  const [active, setActive] = useState(false);

  const drag = usePointerDrag(disabled, {
    onStart() {
      from.current = value;
      current.current = value;
      setActive(true);
    },
    onMove(dx) {
      // jsdom and hidden layouts measure 0: fall back to the nominal width rather than divide by it.
      const span = (track.current?.getBoundingClientRect().width || 300) - HANDLE;
      set(clamp(from.current + dx / span, 0, 1));
    },
    onEnd() {
      setActive(false);
      onRelease(current.current);
    },
  });

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (disabled) return;
    const step = e.shiftKey ? 0.1 : 0.01;
    if (e.key === 'ArrowRight' || e.key === 'ArrowUp') set(clamp(value + step, 0, 1));
    else if (e.key === 'ArrowLeft' || e.key === 'ArrowDown') set(clamp(value - step, 0, 1));
    else if (e.key === 'Enter' || e.key === ' ') onRelease(value);
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
