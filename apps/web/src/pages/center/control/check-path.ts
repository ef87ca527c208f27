import type { OrderKind } from '@suanli/contract/order';
import { pathOf } from '../../../route-table.ts';

/**
 * Issue #10: where an unpaid order is checked and paid. A new instance (and a clone, which is one)
 * on the market's check page; a change of an instance on /center/control/changeOrderdetail.
 */
export function checkPathOf(kind: OrderKind, id: string): string {
  const path = kind === 'new' || kind === 'clone' ? pathOf('orderCheck') : pathOf('changeOrderDetail');
  return `${path}?id=${encodeURIComponent(id)}`;
}
