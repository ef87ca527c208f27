import type { PlatformActions } from '../../src/modules/metering/meter-hooks.ts';

/** PlatformActions as the instance service would take them, recorded (tests of metering only). */
export function createFakePlatform(): PlatformActions & { stops: { id: string; reason: string }[]; releases: { id: string; reason: string }[] } {
  const stops: { id: string; reason: string }[] = [];
  const releases: { id: string; reason: string }[] = [];
  return {
    stops,
    releases,
    async platformStop(id, reason) {
      stops.push({ id, reason });
    },
    async platformRelease(id, reason) {
      releases.push({ id, reason });
    },
  };
}
