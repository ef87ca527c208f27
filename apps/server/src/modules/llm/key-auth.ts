import { and, eq, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { apiKeys } from '../../db/schema/llm.ts';
import { apiKeySecretHash } from './api-key-secret.ts';
import type { ApiKeyAuth, KeyPrincipal } from './types.ts';

/** A key is looked up at most once per this long per process (a change shows in other replicas within it). */
export const KEY_CACHE_TTL_MS = 5_000;
/** An unknown secret is remembered this long, so a flood of bad keys doesn't query per request. */
export const KEY_NEGATIVE_TTL_MS = 2_000;
/** Most secrets remembered; past it the oldest half is dropped. */
export const KEY_CACHE_MAX = 10_000;

/** `settled`: the lookup's answer once it came (null: no such key), for forget() to see synchronously. */
type Entry = { at: number; principal: Promise<KeyPrincipal | undefined>; settled?: KeyPrincipal | null };

/**
 * API key authentication for the /v1 gateway: the secret's sha256 → the key row, cached by hash
 * (positive results KEY_CACHE_TTL_MS, unknown ones KEY_NEGATIVE_TTL_MS, bounded), so a call
 * normally asks the database nothing. Concurrent lookups of one secret share one query. The caller
 * checks enabled / expiry / IP / models on the principal; api-key.service calls forget() on writes.
 */
export function createApiKeyAuth(deps: { db: Db; now?: () => number }): ApiKeyAuth & { readonly size: number } {
  const now = deps.now ?? Date.now;
  const cache = new Map<string, Entry>();

  async function load(hash: string): Promise<KeyPrincipal | undefined> {
    const [row] = await deps.db
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.secretHash, hash), isNull(apiKeys.deletedAt)))
      .limit(1);
    if (!row) return undefined;
    return {
      keyId: row.id,
      tenantId: row.tenantId,
      userId: row.userId,
      name: row.name,
      enabled: row.enabled,
      expiresAt: row.expiresAt,
      models: row.models ?? null,
      quota: row.quota,
      ipAllow: row.ipAllow,
      limits: row.limits,
    };
  }

  function trim() {
    if (cache.size < KEY_CACHE_MAX) return;
    // Map iterates in insertion order: the first half is the oldest.
    let drop = Math.ceil(cache.size / 2);
    for (const k of cache.keys()) {
      if (drop-- <= 0) break;
      cache.delete(k);
    }
  }

  return {
    async authenticate(secret) {
      const hash = apiKeySecretHash(secret);
      if (!hash) return undefined;
      const t = now();
      const hit = cache.get(hash);
      if (hit) {
        const principal = await hit.principal.catch(() => undefined);
        const ttl = principal ? KEY_CACHE_TTL_MS : KEY_NEGATIVE_TTL_MS;
        if (t - hit.at < ttl && cache.get(hash) === hit) return principal;
        if (cache.get(hash) === hit) cache.delete(hash);
      }
      const entry: Entry = { at: t, principal: load(hash) };
      entry.principal.then(
        (p) => (entry.settled = p ?? null),
        () => undefined,
      );
      trim();
      cache.set(hash, entry);
      try {
        return await entry.principal;
      } catch (err) {
        // A failed lookup is not remembered.
        if (cache.get(hash) === entry) cache.delete(hash);
        throw err;
      }
    },
    forget(keyId) {
      for (const [hash, entry] of cache) {
        // A lookup still under way may read the row as it was: dropped too.
        if (entry.settled === undefined || entry.settled?.keyId === keyId) cache.delete(hash);
      }
    },
    get size() {
      return cache.size;
    },
  };
}
