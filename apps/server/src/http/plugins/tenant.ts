import type { FastifyInstance } from 'fastify';
import type { TenantService } from '../../modules/tenant/tenant.service.ts';
import type { TenantRow } from '../../modules/tenant/tenant.repository.ts';

declare module 'fastify' {
  interface FastifyRequest {
    tenant: TenantRow;
  }
}

/** Every request belongs to the tenant of its Host (PRODUCT.md "Tenants"). */
export function registerTenant(app: FastifyInstance, tenants: TenantService): void {
  app.decorateRequest('tenant', null as unknown as TenantRow);
  app.addHook('onRequest', async (req) => {
    req.tenant = await tenants.resolve(req.headers.host);
  });
}
