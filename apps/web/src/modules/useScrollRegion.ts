import { useEffect, useRef } from 'react';

/**
 * A table wider than a phone scrolls inside its own box (#27); that box must be reachable by
 * keyboard and named (#24, axe scrollable-region-focusable). antd renders the box itself, so it
 * gets tabindex, role and name here.
 */
export function useScrollRegion<T extends HTMLElement>(label: string) {
  const ref = useRef<T>(null);
  useEffect(() => {
    const mark = () =>
      ref.current?.querySelectorAll<HTMLElement>('.ant-table-content, .ant-table-body').forEach((el) => {
        el.tabIndex = 0;
        el.setAttribute('role', 'region');
        el.setAttribute('aria-label', label);
      });
    mark();
    const observer = new MutationObserver(mark);
    if (ref.current) observer.observe(ref.current, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, [label]);
  return ref;
}
