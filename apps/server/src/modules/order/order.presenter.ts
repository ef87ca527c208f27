import type { Order, OrderStatus } from '@suanli/contract/order';
import type { OrderRow, OrderView } from './order.repository.ts';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** An unpaid order past its TTL is expired, whether or not the expiry task has marked it yet. */
export function effectiveStatus(o: Pick<OrderRow, 'status' | 'expiresAt'>, now: Date): OrderStatus {
  return o.status === 'unpaid' && o.expiresAt <= now ? 'expired' : o.status;
}

export function presentOrder(v: OrderView, now: Date): Order {
  const status = effectiveStatus(v, now);
  return {
    id: v.id,
    kind: v.kind,
    status,
    chargeType: v.chargeType,
    period: v.period,
    quantity: v.quantity,
    machineId: v.machineId,
    hostName: v.hostName,
    datacenterName: v.datacenterName,
    gpuTypeName: v.gpuTypeName,
    gpuCount: v.gpuCount,
    imageId: v.imageId,
    imageName: v.imageName,
    dataDiskGb: v.dataDiskGb,
    instanceName: v.instanceName,
    lines: v.lines,
    amount: v.amount,
    hourly: v.hourly,
    instanceId: v.instanceId,
    sourceInstanceId: typeof v.params?.sourceInstanceId === 'string' ? v.params.sourceInstanceId : null,
    createdAt: v.createdAt.toISOString(),
    expiresAt: v.expiresAt.toISOString(),
    paidAt: iso(v.paidAt),
    closedAt: iso(v.closedAt ?? (status === 'expired' ? v.expiresAt : null)),
  };
}
