import { okEnvelope } from '@suanli/contract/envelope';
import { tenantDomainInfo, tenantDomainQuery } from '@suanli/contract/tenant';
import type { App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import type { TenantService } from '../../modules/tenant/tenant.service.ts';
import { presentTenantDomain } from '../../modules/tenant/tenant.presenter.ts';

export function tenantRoutes(app: App, tenants: TenantService, opts: { captchaEnabled: boolean }) {
  app.get(
    '/ucenter/api/v1/tenant/domain',
    { schema: { tags: ['租户'], summary: '按域名读取租户品牌', querystring: tenantDomainQuery, response: { 200: okEnvelope(tenantDomainInfo) } } },
    async (req) => ok(presentTenantDomain(req.query.domain ? await tenants.resolve(req.query.domain) : req.tenant, opts)),
  );
}
