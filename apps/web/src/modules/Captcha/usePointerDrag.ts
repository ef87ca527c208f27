import { useLayoutEffect, useRef, type PointerEvent as ReactPointerEvent } from 'react';

type Handlers = {
  /** Movement since the press, in CSS pixels. */
  onMove(dx: number, dy: number): void;
  onEnd(): void;
  onStart?(): void;
};

/**
 * Pointer events cover mouse, touch and pen alike. The element captures the pointer, so a drag
 * that leaves it (or the window) keeps moving it and always ends; put `touch-action: none` on the
 * element so a finger drags instead of scrolling the page.
 */
export function usePointerDrag(disabled: boolean, handlers: Handlers) {
  const start = useRef<{ id: number; x: number; y: number } | null>(null);
  // The newest handlers, so a drag in progress sees the latest state without re-binding.
  const latest = useRef(handlers);
  useLayoutEffect(() => {
    latest.current = handlers;
  });

  const finish = (e: ReactPointerEvent<HTMLElement>) => {
    if (!start.current || start.current.id !== e.pointerId) return;
    start.current = null;
    latest.current.onEnd();
  };

  return {
    onPointerDown(e: ReactPointerEvent<HTMLElement>) {
      if (disabled || start.current || (e.pointerType === 'mouse' && e.button !== 0)) return;
      e.preventDefault();
      const el = e.currentTarget;
      // jsdom and very old browsers have no pointer capture; the drag still works inside the element.
      if (typeof el.setPointerCapture === 'function') {
        try {
          el.setPointerCapture(e.pointerId);
        } catch {
          /* the pointer is already gone */
        }
      }
      start.current = { id: e.pointerId, x: e.clientX, y: e.clientY };
      latest.current.onStart?.();
    },
    onPointerMove(e: ReactPointerEvent<HTMLElement>) {
      const s = start.current;
      if (!s || s.id !== e.pointerId) return;
      latest.current.onMove(e.clientX - s.x, e.clientY - s.y);
    },
    onPointerUp: finish,
    onPointerCancel: finish,
  };
}
