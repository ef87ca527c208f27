import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { fetchTenantDomain } from './api/queries/tenant.ts';
import { applyBranding } from './modules/tenant.tsx';
import { getLanguage, loadLanguage } from './locales/i18n.ts';
import { App } from './app.tsx';
import './styles.css';

document.documentElement.lang = getLanguage();

/** SPEC §2: branding loads before the first navigation, behind the loading mask of index.html. */
async function boot() {
  const mask = document.getElementById('boot-mask');
  try {
    const [tenant] = await Promise.all([fetchTenantDomain(), loadLanguage(getLanguage())]);
    applyBranding(tenant);
    const root = document.getElementById('root');
    if (!root) throw new Error('#root missing');
    createRoot(root).render(
      <StrictMode>
        <App tenant={tenant} />
      </StrictMode>,
    );
  } catch {
    const text = mask?.lastElementChild;
    if (text) text.textContent = '加载失败，请检查网络后刷新页面';
  }
}

void boot();
