/** A clock tests move by hand: expiry, lockouts and sliding sessions without waiting. */
export function createTestClock(start = new Date('2026-11-01T08:00:00+08:00')) {
  let now = start.getTime();
  const clock = () => new Date(now);
  return Object.assign(clock, {
    advance(ms: number) {
      now += ms;
    },
    advanceMinutes(m: number) {
      now += m * 60_000;
    },
  });
}
