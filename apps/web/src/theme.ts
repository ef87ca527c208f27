import type { ThemeConfig } from 'antd';
import { brandColor, readableOn } from '@suanli/domain/contrast';

/**
 * #23: antd's theme with every text colour at WCAG AA (4.5:1). The tenant's brand is used as
 * given where it passes on white and darkened where it does not (it is also the background of
 * white button text, the same ratio); antd's status colours are darkened against the light tints
 * tags and alerts put behind them; grey hints are darker than antd's 45 % black.
 */
export function brandTheme(primaryColor: string): ThemeConfig {
  const brand = brandColor(primaryColor);
  // A touch above 4.5: the tint antd derives from the darker seed is itself a little darker.
  const status = (seed: string, tint: string) => readableOn(seed, tint, 4.8);
  return {
    token: {
      colorPrimary: brand,
      colorInfo: brand,
      colorLink: brand,
      colorSuccess: status('#52c41a', '#f6ffed'),
      colorWarning: status('#faad14', '#fffbe6'),
      colorError: status('#ff4d4f', '#fff2f0'),
      // The tints stay antd's: derived from the darker seeds they would turn grey-brown.
      colorSuccessBg: '#f6ffed',
      colorSuccessBorder: '#b7eb8f',
      colorWarningBg: '#fffbe6',
      colorWarningBorder: '#ffe58f',
      colorErrorBg: '#fff2f0',
      colorErrorBorder: '#ffccc7',
      // Preset tag colours (color="green" …) print their 7th shade on their 1st: darker seeds.
      green: '#237804',
      blue: '#0958d9',
      orange: '#ad4e00',
      gold: '#ad6800',
      red: '#a8071a',
      colorTextTertiary: 'rgba(0, 0, 0, 0.62)',
      colorTextDescription: 'rgba(0, 0, 0, 0.62)',
      colorTextPlaceholder: 'rgba(0, 0, 0, 0.56)',
      borderRadius: 6,
    },
  };
}
