import type { UserDetail } from '@suanli/contract/user';
import { t } from '../locales/i18n.ts';

/**
 * The name to show for a user: the one they chose, else a default in the console's language
 * ("用户 1234" / "User 1234" from the phone's last four digits). The server stores no default
 * name, so English mode shows no Chinese the console wrote (#26).
 */
export function displayName(user: Pick<UserDetail, 'userName' | 'phone' | 'role'>): string {
  if (user.userName.trim()) return user.userName;
  const tail = user.phone.replace(/\D/g, '').slice(-4);
  return t(user.role === 'operator' ? 'nav.defaultOperatorName' : 'nav.defaultUserName', { tail });
}
