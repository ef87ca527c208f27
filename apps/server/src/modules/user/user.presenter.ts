import type { UserDetail } from '@suanli/contract/user';
import { maskPhone } from '@suanli/domain/account-rules';
import type { UserRow } from './user.repository.ts';

export function presentUserDetail(user: UserRow, extra: { balance: number; instanceNum: number }): UserDetail {
  return {
    userName: user.userName,
    realNameAuth: user.realNameAuth,
    uuid: user.uuid,
    phone: maskPhone(user.phone),
    role: user.role,
    accountType: user.accountType,
    balance: extra.balance,
    frozenBalance: 0,
    instanceNum: extra.instanceNum,
    createdAt: user.createdAt.toISOString(),
  };
}
