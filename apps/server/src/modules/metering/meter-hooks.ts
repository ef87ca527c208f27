import type { Tx } from '../../db/client.ts';

/**
 * How the instance module tells metering that a pay-as-you-go instance began or ceased to run.
 * Both are called inside the instance module's own transaction (the one that changes the
 * instance's status), so the meter and the status can't disagree after a crash.
 * Implemented by the metering service; prepaid instances are ignored by both.
 */
export interface MeterHooks {
  /** The instance is running from `at`: accrue per second from then on. */
  started(tx: Tx, instance: MeteredInstance, at: Date): Promise<void>;
  /** The instance stopped (or is being released) at `at`: accrue up to `at`, no further; the next tick settles the remainder. */
  stopped(tx: Tx, instanceId: string, at: Date): Promise<void>;
  /**
   * A prepaid order (new, renewal…) was paid in `tx` (its ledger entry posted there too): write
   * its one bill row for the period it buys.
   */
  prepaidPaid(tx: Tx, bill: { instanceId: string; tenantId: number; userId: number; orderId: string; amount: number; periodStart: Date; periodEnd: Date }): Promise<void>;
}

export type MeteredInstance = {
  id: string;
  tenantId: number;
  userId: number;
  chargeType: 'payg' | 'prepaid';
  /** Units of 0.0001 yuan per hour. */
  hourly: number;
};

/**
 * What metering asks of the instance module when money says so: arrears stop a user's running
 * pay-as-you-go instances, expiry stops prepaid ones, and long-stopped or long-expired instances
 * are released. Implemented by the instance service; each is a persisted job, idempotent.
 */
export interface PlatformActions {
  /** Stop an instance for a platform reason (Chinese, shown in the console): arrears, expiry. */
  platformStop(instanceId: string, reason: string): Promise<void>;
  /** Release it (disks deleted) for a platform reason. */
  platformRelease(instanceId: string, reason: string): Promise<void>;
}
