import { loadPageMessages } from './locales/i18n.ts';

// antd reads these; jsdom lacks them.
window.matchMedia ??= ((query: string) =>
  ({ matches: false, media: query, onchange: null, addListener: () => {}, removeListener: () => {}, addEventListener: () => {}, removeEventListener: () => {}, dispatchEvent: () => false }) as MediaQueryList);
globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
} as unknown as typeof ResizeObserver;

// In the app the router loads these with the page; component tests render pages directly.
await loadPageMessages();
