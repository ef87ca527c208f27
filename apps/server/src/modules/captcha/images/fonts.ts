import fs from 'node:fs';
import { GlobalFonts } from '@napi-rs/canvas';

/** CJK families the canvas may already see through the system's font directories. */
const CJK_FAMILIES = [
  'WenQuanYi Micro Hei',
  'WenQuanYi Zen Hei',
  'Noto Sans CJK SC',
  'Noto Sans SC',
  'Source Han Sans SC',
  'Source Han Sans CN',
  'Droid Sans Fallback',
  'PingFang SC',
  'Microsoft YaHei',
  'SimHei',
];

/** Usual install paths (Debian/Ubuntu, Fedora, Alpine, macOS, Windows), registered when not seen. */
const CJK_PATHS = [
  '/usr/share/fonts/truetype/wqy/wqy-microhei.ttc',
  '/usr/share/fonts/wqy-microhei/wqy-microhei.ttc',
  '/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc',
  '/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc',
  '/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc',
  '/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc',
  '/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf',
  '/System/Library/Fonts/PingFang.ttc',
  '/System/Library/Fonts/STHeiti Medium.ttc',
  'C:\\Windows\\Fonts\\msyh.ttc',
  'C:\\Windows\\Fonts\\simhei.ttf',
];

const ALIAS = 'SuanliCaptchaCJK';

/** Latin families for the letters fallback and for digits; the canvas picks the first it has. */
export const LATIN_FONT_STACK = '"DejaVu Sans", "Liberation Sans", Arial, Helvetica, sans-serif';

let resolved: string | null | undefined;

/**
 * The CJK font family to draw click-captcha characters with, or null when the machine has none.
 * Resolved once per process; a missing font is reported once as a process warning, and the click
 * captcha then draws letters and digits instead of failing.
 */
export function cjkFontFamily(): string | null {
  if (resolved !== undefined) return resolved;
  resolved = findCjkFont();
  if (resolved === null) {
    process.emitWarning(
      'No CJK font found (install fonts-wqy-microhei or a Noto CJK font); the click captcha draws letters and digits instead of Chinese characters.',
      { code: 'SUANLI_CAPTCHA_NO_CJK_FONT' },
    );
  }
  return resolved;
}

function findCjkFont(): string | null {
  try {
    const known = new Set(GlobalFonts.families.map((f) => f.family));
    const present = CJK_FAMILIES.find((f) => known.has(f));
    if (present) return present;
    for (const file of CJK_PATHS) {
      if (!fs.existsSync(file)) continue;
      if (GlobalFonts.registerFromPath(file, ALIAS)) return ALIAS;
    }
  } catch {
    // A broken font directory must not take the captcha down: fall back to letters.
  }
  return null;
}
