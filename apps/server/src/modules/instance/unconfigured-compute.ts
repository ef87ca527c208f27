import { ComputeError, type ComputeDriver } from '../../adapters/compute/port.ts';

/**
 * The compute driver when none is wired (this branch before the `local` driver is merged in):
 * it says so through availability(), so ordering and starting answer 409 with the reason before
 * any money moves, and every other call fails. Replaced by createLocalDriver in container.ts.
 */
export function createUnconfiguredDriver(): ComputeDriver {
  const fail = async (): Promise<never> => {
    throw new ComputeError('no compute driver is configured');
  };
  return {
    name: 'unconfigured',
    availability: async () => ({ ok: false, reason: '计算驱动未配置，实例暂不可创建或启动' }),
    create: fail,
    start: fail,
    stop: fail,
    destroy: fail,
    resetSystem: fail,
    status: async () => 'missing',
    exec: fail,
    openTerminal: fail,
    usage: fail,
    list: async () => [],
  };
}
