import { useEffect, useRef, type ReactNode } from 'react';

/**
 * Wraps content (an antd Table with `scroll`) whose inner box scrolls sideways on a narrow screen:
 * keyboard users must be able to reach and scroll it (WCAG 2.1.1; axe scrollable-region-focusable),
 * so each scrolling box inside gets tabIndex 0 and the given accessible name.
 */
export function FocusableScroll({ label, children }: { label: string; children: ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const root = ref.current;
    if (!root) return;
    const mark = () => {
      for (const el of root.querySelectorAll<HTMLElement>('.ant-table-content, .ant-table-body')) {
        if (el.getAttribute('tabindex') === null) el.setAttribute('tabindex', '0');
        el.setAttribute('role', 'region');
        el.setAttribute('aria-label', label);
      }
    };
    mark();
    const observer = new MutationObserver(mark);
    observer.observe(root, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, [label]);
  return <div ref={ref}>{children}</div>;
}
