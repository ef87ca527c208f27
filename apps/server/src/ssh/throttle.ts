/**
 * Password guessing throttle of the SSH gateway, in this process's memory (each replica counts its
 * own; docs/ssh.md). Failures are counted per source IP and per instance id: MAX_FAILURES within
 * WINDOW_MS locks that IP (or that instance's password login) for LOCK_MS, and every failure is
 * answered after a delay that doubles with the count (250 ms, 500 ms, 1 s … up to 4 s), so a single
 * connection can't try passwords quickly either. Key logins are never locked.
 */
export const THROTTLE = { MAX_FAILURES: 5, WINDOW_MS: 15 * 60_000, LOCK_MS: 15 * 60_000, BASE_DELAY_MS: 250, MAX_DELAY_MS: 4_000, MAX_ENTRIES: 100_000 } as const;

type Entry = { failures: number; firstAt: number; lockedUntil: number };

export function createAuthThrottle(opts: { now?: () => number; limits?: Partial<Record<keyof typeof THROTTLE, number>> } = {}) {
  const now = opts.now ?? Date.now;
  const L = { ...THROTTLE, ...opts.limits };
  const entries = new Map<string, Entry>();

  const live = (key: string, t: number): Entry | undefined => {
    const e = entries.get(key);
    if (!e) return undefined;
    if (e.lockedUntil <= t && t - e.firstAt > L.WINDOW_MS) {
      entries.delete(key);
      return undefined;
    }
    return e;
  };
  const bump = (key: string, t: number): Entry => {
    let e = live(key, t);
    if (!e || (e.lockedUntil && e.lockedUntil <= t)) {
      e = { failures: 0, firstAt: t, lockedUntil: 0 };
      // Map keeps insertion order: the oldest entries go first when an attacker sprays addresses or ids.
      if (entries.size >= L.MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
      entries.set(key, e);
    }
    e.failures += 1;
    if (e.failures >= L.MAX_FAILURES) e.lockedUntil = t + L.LOCK_MS;
    return e;
  };

  return {
    /** Milliseconds until password logins from `ip` to `instanceId` may be tried again; 0 when not locked. */
    lockedFor(ip: string, instanceId: string): number {
      const t = now();
      const a = live(`ip:${ip}`, t)?.lockedUntil ?? 0;
      const b = live(`id:${instanceId}`, t)?.lockedUntil ?? 0;
      return Math.max(0, Math.max(a, b) - t);
    },
    /** Records a failed password; the delay (ms) to wait before answering it. */
    fail(ip: string, instanceId: string): number {
      const t = now();
      const n = Math.max(bump(`ip:${ip}`, t).failures, bump(`id:${instanceId}`, t).failures);
      return Math.min(L.BASE_DELAY_MS * 2 ** (n - 1), L.MAX_DELAY_MS);
    },
    /** The owner proved the password: the instance's count starts over (the IP's does not). */
    succeed(instanceId: string): void {
      entries.delete(`id:${instanceId}`);
    },
    size: () => entries.size,
  };
}
export type AuthThrottle = ReturnType<typeof createAuthThrottle>;
