import { useSyncExternalStore } from 'react';
import type { MessageInstance } from 'antd/es/message/interface';
import type { HookAPI as ModalHookAPI } from 'antd/es/modal/useModal';

/**
 * antd's message and modal bound to the app's theme and locale, for components and for code
 * outside them (the API client). antd's own holders (FeedbackHost.tsx) load with the first
 * message or dialog, not with the first page: most visits to /login never show one. Calls made
 * before they are ready wait for them.
 */
type Holder = { message: MessageInstance; modal: ModalHookAPI };
type Content = Parameters<MessageInstance['error']>[0];
export type ConfirmProps = Parameters<ModalHookAPI['confirm']>[0];

let holder: Holder | null = null;
let requested = false;
const waiting: ((h: Holder) => void)[] = [];
const listeners = new Set<() => void>();

function withHolder(fn: (h: Holder) => void): void {
  if (holder) return fn(holder);
  waiting.push(fn);
  if (!requested) {
    requested = true;
    listeners.forEach((l) => l());
  }
}

/** FeedbackHost calls this once antd's holders are mounted (and null when unmounted). */
export function registerFeedbackHolder(next: Holder | null): void {
  holder = next;
  if (next) waiting.splice(0).forEach((fn) => fn(next));
}

const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};
/** True once something asked for a message or dialog: the app then mounts the holders. */
export function useFeedbackRequested(): boolean {
  return useSyncExternalStore(subscribe, () => requested, () => requested);
}

export type Feedback = {
  message: Record<'success' | 'error' | 'info' | 'warning', (content: Content) => void>;
  modal: { confirm: (props: ConfirmProps) => void };
};

export const feedback: Feedback = {
  message: {
    success: (content) => withHolder((h) => void h.message.success(content)),
    error: (content) => withHolder((h) => void h.message.error(content)),
    info: (content) => withHolder((h) => void h.message.info(content)),
    warning: (content) => withHolder((h) => void h.message.warning(content)),
  },
  modal: { confirm: (props) => withHolder((h) => void h.modal.confirm(props)) },
};

/** The app's message and modal in a component (in place of antd's App.useApp). */
export function useFeedback(): Feedback {
  return feedback;
}

/** SPEC §8: every error shows as an error toast for 5 seconds. */
export const ERROR_TOAST_SECONDS = 5;

export function toastError(text: string): void {
  feedback.message.error({ content: text, duration: ERROR_TOAST_SECONDS });
}
