/** Routes the recharge pages link to. */
export const RECHARGE_PATH = '/recharge/index';
export const INCOME_EXPEND_PATH = '/center/expense/incomeExpend';
