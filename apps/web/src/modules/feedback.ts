import type { MessageInstance } from 'antd/es/message/interface';
import type { HookAPI as ModalHookAPI } from 'antd/es/modal/useModal';

/**
 * antd's message and modal bound to the app's theme and locale, for code outside components
 * (the API client). FeedbackBridge fills it once the antd <App> has mounted.
 */
export const feedback: { message: MessageInstance | null; modal: ModalHookAPI | null } = { message: null, modal: null };

/** SPEC §8: every error shows as an error toast for 5 seconds. */
export const ERROR_TOAST_SECONDS = 5;

export function toastError(text: string): void {
  feedback.message?.error({ content: text, duration: ERROR_TOAST_SECONDS });
}
