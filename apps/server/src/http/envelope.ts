import { Messages } from '@suanli/contract/errors';

export const ok = <T>(data: T) => ({ code: 200 as const, msg: Messages.ok, data });
