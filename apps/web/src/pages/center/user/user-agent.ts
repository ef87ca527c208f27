/** A User-Agent header boiled down to what a person recognises in a device list. */
export type DeviceSummary = { browser: string | null; os: string | null; mobile: boolean };

const major = (ua: string, re: RegExp) => re.exec(ua)?.[1]?.split('.')[0];
const withVersion = (name: string, version: string | undefined) => (version ? `${name} ${version}` : name);

function browserOf(ua: string): string | null {
  if (/\bEdg(e|A|iOS)?\//.test(ua)) return withVersion('Edge', major(ua, /Edg(?:e|A|iOS)?\/([\d.]+)/));
  if (/\b(OPR|Opera)\//.test(ua)) return withVersion('Opera', major(ua, /(?:OPR|Opera)\/([\d.]+)/));
  if (/MicroMessenger\//.test(ua)) return withVersion('WeChat', major(ua, /MicroMessenger\/([\d.]+)/));
  if (/\b(Firefox|FxiOS)\//.test(ua)) return withVersion('Firefox', major(ua, /(?:Firefox|FxiOS)\/([\d.]+)/));
  if (/HeadlessChrome\//.test(ua)) return withVersion('Headless Chrome', major(ua, /HeadlessChrome\/([\d.]+)/));
  if (/\b(Chrome|CriOS|Chromium)\//.test(ua)) return withVersion('Chrome', major(ua, /(?:Chrome|CriOS|Chromium)\/([\d.]+)/));
  if (/Safari\//.test(ua) && /Version\//.test(ua)) return withVersion('Safari', major(ua, /Version\/([\d.]+)/));
  if (/^curl\//.test(ua)) return 'curl';
  if (/^python-requests\//i.test(ua)) return 'Python requests';
  if (/^(node|undici|axios)/i.test(ua)) return 'Node.js';
  return null;
}

function osOf(ua: string): string | null {
  if (/iPad/.test(ua)) return 'iPadOS';
  if (/iPhone|iPod/.test(ua)) return withVersion('iOS', major(ua, /OS (\d+)[_.]/));
  if (/Android/.test(ua)) return withVersion('Android', major(ua, /Android ([\d.]+)/));
  if (/HarmonyOS/.test(ua)) return 'HarmonyOS';
  if (/Windows NT 10\.0/.test(ua)) return 'Windows 10/11';
  if (/Windows/.test(ua)) return 'Windows';
  if (/CrOS/.test(ua)) return 'ChromeOS';
  if (/Mac OS X|Macintosh/.test(ua)) return 'macOS';
  if (/Linux|X11/.test(ua)) return 'Linux';
  return null;
}

export function summariseUserAgent(ua: string): DeviceSummary {
  return { browser: browserOf(ua), os: osOf(ua), mobile: /Mobi|iPhone|iPad|Android/.test(ua) };
}
