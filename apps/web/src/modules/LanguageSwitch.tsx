import { Button } from 'antd';
import { GlobalOutlined } from '@ant-design/icons';
import { setLanguage, useT } from '../locales/i18n.ts';

/**
 * Switches between the two interface languages. A plain button, not a dropdown menu: with two
 * languages it is one click, and the sign-in page doesn't load antd's menu for it. Its name is
 * its visible text (the other language's name), so speech control finds it by what it shows.
 */
export function LanguageSwitch() {
  const { t, lang } = useT();
  const next = lang === 'en-US' ? 'zh-CN' : 'en-US';
  return (
    <Button type="text" icon={<GlobalOutlined aria-hidden />} onClick={() => void setLanguage(next)} title={t('common.language')} data-testid="language-switch">
      <span lang={next}>{t('nav.languageSwitch')}</span>
    </Button>
  );
}
