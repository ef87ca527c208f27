import type { TenantRepository, TenantRow } from './tenant.repository.ts';

const CACHE_MS = 30_000;

/** Host name without port, lower-cased; IPv6 literals keep their brackets. */
export function normalizeHost(raw: string | undefined): string {
  if (!raw) return '';
  const host = raw.trim().toLowerCase();
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  return host.split(':')[0] ?? '';
}

/**
 * Resolves the tenant of a request by host name. An unknown host gets the default tenant
 * (PRODUCT.md), never an error page.
 */
export function createTenantService(deps: { tenants: TenantRepository; defaultTenantCode?: string }) {
  const cache = new Map<string, { tenant: TenantRow; at: number }>();

  async function fallback(): Promise<TenantRow> {
    const byCode = deps.defaultTenantCode ? await deps.tenants.findByCode(deps.defaultTenantCode) : undefined;
    const tenant = byCode ?? (await deps.tenants.findDefault());
    if (!tenant) throw new Error('No default tenant: seed one or set DEFAULT_TENANT');
    return tenant;
  }

  return {
    async resolve(rawHost: string | undefined): Promise<TenantRow> {
      const host = normalizeHost(rawHost);
      const hit = cache.get(host);
      if (hit && Date.now() - hit.at < CACHE_MS) return hit.tenant;
      const tenant = (host ? await deps.tenants.findByHost(host) : undefined) ?? (await fallback());
      if (cache.size > 1000) cache.clear(); // unbounded host headers must not grow memory
      cache.set(host, { tenant, at: Date.now() });
      return tenant;
    },
    invalidate(): void {
      cache.clear();
    },
  };
}
export type TenantService = ReturnType<typeof createTenantService>;
