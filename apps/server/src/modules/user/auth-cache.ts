import type { SessionRow, UserRow } from './user.repository.ts';

type Entry = { user: UserRow; session: SessionRow; until: number };

/**
 * Recently authenticated sessions, so a signed-in request costs no database round trip.
 * Local changes (logout, revocation, password or phone change) evict at once; another replica's
 * change is seen within `ttlMs`, the bound on how long a revoked token can live elsewhere.
 */
export function createAuthCache(ttlMs: number, maxEntries = 20_000) {
  const entries = new Map<string, Entry>();
  return {
    get(tokenHash: string, now: number): Entry | undefined {
      const hit = entries.get(tokenHash);
      if (!hit) return undefined;
      if (hit.until <= now || hit.session.expiresAt.getTime() <= now) {
        entries.delete(tokenHash);
        return undefined;
      }
      return hit;
    },
    set(tokenHash: string, user: UserRow, session: SessionRow, now: number): void {
      if (entries.size >= maxEntries) entries.clear(); // bounded: a flood of tokens can't grow memory
      entries.set(tokenHash, { user, session, until: now + ttlMs });
    },
    evictUser(userId: number): void {
      for (const [key, e] of entries) if (e.user.id === userId) entries.delete(key);
    },
  };
}
