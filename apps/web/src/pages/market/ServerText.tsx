import type { ReactNode } from 'react';

/**
 * Text the server wrote in Chinese (order lines, status reasons, error messages): marked as
 * Chinese, so screen readers read it as such and English mode knows it is not the console's own.
 */
export function ServerText({ children }: { children: ReactNode }) {
  return <span lang="zh-CN">{children}</span>;
}
