import { notFound } from '../../lib/errors.ts';
import type { InstanceAccess } from '../instance/instance-access.ts';

/**
 * The InstanceAccess of a container without an instance service (this branch before the merge, or a
 * test that doesn't need instances): no instance is reachable, every id answers like a missing one.
 * At the merge the container passes the instance service (container.instances) instead.
 */
export const noInstanceAccess: InstanceAccess = {
  async openTerminal() {
    throw notFound('实例不存在');
  },
  async sshTarget() {
    return null;
  },
};
