import type { ReactNode } from 'react';
import type { Feedback } from '../../../modules/feedback.ts';
import { t } from '../../../locales/i18n.ts';

/** A confirm dialog as a promise: true once the user confirms, false if they back out. */
export function confirmAsync(modal: Feedback['modal'], opts: { title: ReactNode; content: ReactNode; danger?: boolean }): Promise<boolean> {
  return new Promise((resolve) => {
    modal.confirm({
      title: opts.title,
      content: opts.content,
      okText: t('common.confirm'),
      cancelText: t('common.cancel'),
      okButtonProps: { danger: opts.danger },
      onOk: () => resolve(true),
      onCancel: () => resolve(false),
    });
  });
}
