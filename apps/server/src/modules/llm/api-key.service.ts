import net from 'node:net';
import type { z } from 'zod';
import { MAX_API_KEYS, type ApiKeyItem, type createApiKeyBody, type CreatedApiKey, type LimitRule, type updateApiKeyBody } from '@suanli/contract/llm';
import type { Db } from '../../db/client.ts';
import { createApiKeyRepository, type ApiKeyInsert, type ApiKeyRow } from './api-key.repository.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound } from '../../lib/errors.ts';
import { apiKeyHint, apiKeySecretHash, newApiKeySecret } from './api-key-secret.ts';
import type { LlmCatalog } from './types.ts';

type Owner = { tenantId: number; userId: number };
type CreateInput = z.infer<typeof createApiKeyBody>;
type UpdateInput = z.infer<typeof updateApiKeyBody>;

export const ApiKeyMessages = {
  missing: '密钥不存在',
  tooMany: `最多只能创建 ${MAX_API_KEYS} 个 API 密钥，请先删除不用的密钥`,
  unknownModel: (model: string) => `模型 ${model} 不存在或未上架`,
  badIp: (entry: string) => `IP 白名单中的 ${entry} 不是有效的 IP 地址或 CIDR 网段`,
  expiresInPast: '过期时间必须晚于当前时间',
  duplicateLimit: (rule: Pick<LimitRule, 'window' | 'unit'>) => `限额规则重复：周期 ${rule.window}、单位 ${rule.unit} 只能设置一条`,
} as const;

/** An address (IPv4 or IPv6) or a CIDR block of one, as the gateway's allow-list matches them. */
export function isIpOrCidr(entry: string): boolean {
  const slash = entry.indexOf('/');
  if (slash < 0) return net.isIP(entry) !== 0;
  const addr = entry.slice(0, slash);
  const prefix = entry.slice(slash + 1);
  const family = net.isIP(addr);
  if (family === 0 || !/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

function statusOf(row: ApiKeyRow, now: Date): ApiKeyItem['status'] {
  if (row.expiresAt && row.expiresAt.getTime() <= now.getTime()) return 'expired';
  return row.enabled ? 'active' : 'disabled';
}

export function presentApiKey(row: ApiKeyRow, now: Date): ApiKeyItem {
  return {
    id: row.id,
    name: row.name,
    maskedKey: row.secretHint,
    status: statusOf(row, now),
    expiresAt: row.expiresAt?.toISOString() ?? null,
    models: row.models ?? null,
    quota: row.quota ?? null,
    used: row.used,
    ipAllow: row.ipAllow,
    limits: row.limits,
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

/**
 * A user's API keys for the /v1 gateway (issue #9, docs/llm.md "Catalog and API keys"). The secret
 * is shown once, by `create`; only its sha256 and a hint are stored. Every change calls
 * `onKeyChanged(keyId)` so the gateway's key cache forgets the key at once (disable, delete).
 */
export function createApiKeyService(deps: { db: Db; clock: Clock; catalog: Pick<LlmCatalog, 'publishedModels'>; onKeyChanged?: (keyId: string) => void }) {
  const { clock, catalog } = deps;
  const repo = createApiKeyRepository(deps.db);
  const changed = (id: string) => deps.onKeyChanged?.(id);

  async function checkFields(owner: Owner, input: Partial<Pick<CreateInput, 'models' | 'ipAllow' | 'expiresAt' | 'limits'>>, now: Date): Promise<void> {
    if (input.models) {
      const published = new Set((await catalog.publishedModels(owner.tenantId)).map((m) => m.modelId));
      const unknown = input.models.find((m) => !published.has(m));
      if (unknown !== undefined) throw badRequest(ApiKeyMessages.unknownModel(unknown));
    }
    const badIp = input.ipAllow?.find((e) => !isIpOrCidr(e));
    if (badIp !== undefined) throw badRequest(ApiKeyMessages.badIp(badIp));
    if (input.expiresAt && Date.parse(input.expiresAt) <= now.getTime()) throw badRequest(ApiKeyMessages.expiresInPast);
    if (input.limits) {
      const seen = new Set<string>();
      for (const rule of input.limits) {
        const k = `${rule.window}/${rule.unit}`;
        if (seen.has(k)) throw badRequest(ApiKeyMessages.duplicateLimit(rule));
        seen.add(k);
      }
    }
  }

  return {
    /** The user's keys (not deleted), newest first. */
    async list(owner: Owner): Promise<{ list: ApiKeyItem[]; total: number }> {
      const rows = await repo.list(owner);
      const now = clock();
      return { list: rows.map((r) => presentApiKey(r, now)), total: rows.length };
    },

    /** A new key and its secret, the only time the secret is shown. */
    async create(owner: Owner, input: CreateInput): Promise<CreatedApiKey> {
      const now = clock();
      await checkFields(owner, input, now);
      const secret = newApiKeySecret();
      const hash = apiKeySecretHash(secret);
      if (!hash) throw new Error('api key: generated secret does not match its format');
      const row = await repo.insertCapped(
        {
          tenantId: owner.tenantId,
          userId: owner.userId,
          name: input.name,
          secretHash: hash,
          secretHint: apiKeyHint(secret),
          expiresAt: input.expiresAt ? new Date(input.expiresAt) : null,
          models: input.models ? [...new Set(input.models)] : null,
          quota: input.quota ?? null,
          ipAllow: [...new Set(input.ipAllow ?? [])],
          limits: input.limits ?? [],
          createdAt: now,
          updatedAt: now,
        },
        MAX_API_KEYS,
      );
      if (!row) throw conflict(ApiKeyMessages.tooMany);
      changed(row.id);
      return { key: presentApiKey(row, now), secret };
    },

    /** Changes the given fields (null clears expiry, models, quota) or enables/disables the key. */
    async update(owner: Owner, input: UpdateInput): Promise<ApiKeyItem> {
      const now = clock();
      await checkFields(owner, input, now);
      const set: Partial<ApiKeyInsert> = { updatedAt: now };
      if (input.name !== undefined) set.name = input.name;
      if (input.enabled !== undefined) set.enabled = input.enabled;
      if (input.expiresAt !== undefined) set.expiresAt = input.expiresAt === null ? null : new Date(input.expiresAt);
      if (input.models !== undefined) set.models = input.models === null ? null : [...new Set(input.models)];
      if (input.quota !== undefined) set.quota = input.quota;
      if (input.ipAllow !== undefined) set.ipAllow = [...new Set(input.ipAllow)];
      if (input.limits !== undefined) set.limits = input.limits;
      const row = await repo.update(owner, input.id, set);
      if (!row) throw notFound(ApiKeyMessages.missing);
      changed(row.id);
      return presentApiKey(row, now);
    },

    /** Soft delete: the secret stops working at once (the key's usage rows keep its id). */
    async remove(owner: Owner, id: string): Promise<void> {
      const now = clock();
      const row = await repo.update(owner, id, { deletedAt: now, enabled: false, updatedAt: now });
      if (!row) throw notFound(ApiKeyMessages.missing);
      changed(row.id);
    },
  };
}
export type ApiKeyService = ReturnType<typeof createApiKeyService>;
