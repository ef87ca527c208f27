import { describe, expect, it } from 'vitest';
import { summariseUserAgent } from './user-agent.ts';

describe('summariseUserAgent', () => {
  it('names the browser and system people know', () => {
    expect(
      summariseUserAgent('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.2592.87'),
    ).toEqual({ browser: 'Edge 126', os: 'Windows 10/11', mobile: false });
    expect(summariseUserAgent('Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15')).toEqual({
      browser: 'Safari 17',
      os: 'macOS',
      mobile: false,
    });
    expect(
      summariseUserAgent('Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 MicroMessenger/8.0.49(0x18003131) NetType/WIFI'),
    ).toEqual({ browser: 'WeChat 8', os: 'iOS 17', mobile: true });
    expect(summariseUserAgent('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/130.0.0.0 Safari/537.36').browser).toBe('Headless Chrome 130');
  });

  it('admits what it cannot tell', () => {
    expect(summariseUserAgent('')).toEqual({ browser: null, os: null, mobile: false });
    expect(summariseUserAgent('curl/8.5.0')).toEqual({ browser: 'curl', os: null, mobile: false });
  });
});
