import { z } from 'zod';

export const SSH_KEY_TYPES = ['ssh-ed25519', 'ssh-rsa', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521'] as const;
/** Most public keys one user may keep. */
export const MAX_SSH_KEYS = 20;

export const pubKeyItem = z.object({
  id: z.number().int(),
  name: z.string(),
  type: z.string(),
  /** OpenSSH style: "SHA256:…" */
  fingerprint: z.string(),
  createdAt: z.string(),
});
export type PubKeyItem = z.infer<typeof pubKeyItem>;

/** POST /api/v1/pub_key/add: one OpenSSH public key line (ed25519, RSA ≥ 2048, ECDSA). */
export const addPubKeyBody = z.strictObject({
  name: z.string({ error: '名称格式不正确' }).trim().max(32, { error: '名称不能超过 32 个字符' }).optional(),
  key: z.string({ error: '请输入公钥' }).trim().min(1, { error: '请输入公钥' }).max(16_384, { error: '公钥过长' }),
});
export const deletePubKeyBody = z.strictObject({ id: z.number({ error: '公钥 ID 必须是数字' }).int().min(1, { error: '公钥不存在' }).max(Number.MAX_SAFE_INTEGER, { error: '公钥不存在' }) });
/** GET /api/v1/pub_key/list: all of the user's keys, oldest first. */
export const pubKeyList = z.object({ list: z.array(pubKeyItem), total: z.number().int() });
