import { loadPageMessages } from './locales/i18n.ts';

// In the app the router loads these with the page; component tests render pages directly.
await loadPageMessages();
