import { afterEach, describe, expect, it } from 'vitest';
import { setLanguage } from '../locales/i18n.ts';
import { displayName } from './user-name.ts';

describe('displayName', () => {
  afterEach(() => setLanguage('zh-CN'));

  it('shows the chosen name as it is, in either language', async () => {
    expect(displayName({ userName: '张三', phone: '138****1234', role: 'user' })).toBe('张三');
    await setLanguage('en-US');
    expect(displayName({ userName: '张三', phone: '138****1234', role: 'user' })).toBe('张三');
  });

  it('gives a user without a name a default in the console language, from the last four digits', async () => {
    const user = { userName: '', phone: '138****1234', role: 'user' as const };
    expect(displayName(user)).toBe('用户1234');
    await setLanguage('en-US');
    expect(displayName(user)).toBe('User 1234');
    expect(displayName({ ...user, role: 'operator' })).toBe('Operator 1234');
  });
});
