import { pathOf } from '../../route-table.ts';

/** Routes the recharge pages link to, from the route table. */
export const RECHARGE_PATH = pathOf('recharge');
export const INCOME_EXPEND_PATH = pathOf('incomeExpend');
