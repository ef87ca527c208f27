import { z } from 'zod';
import { okEnvelope } from '@suanli/contract/envelope';
import { addPubKeyBody, deletePubKeyBody, pubKeyItem, pubKeyList } from '@suanli/contract/ssh-key';
import type { App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import { ownerOf } from '../plugins/auth.ts';
import type { SshKeyService } from '../../modules/ssh-key/ssh-key.service.ts';

/** SPEC §7 "Public keys": the user's SSH public keys for the SSH gateway. */
export function sshKeyRoutes(app: App, keys: SshKeyService) {
  app.get(
    '/api/v1/pub_key/list',
    { onRequest: app.requireUser, schema: { tags: ['SSH 公钥'], summary: '我的 SSH 公钥列表', security: [{ bearer: [] }], response: { 200: okEnvelope(pubKeyList) } } },
    async (req) => {
      const list = await keys.list(ownerOf(req));
      return ok({ list, total: list.length });
    },
  );

  app.post(
    '/api/v1/pub_key/add',
    {
      onRequest: app.requireUser,
      schema: {
        tags: ['SSH 公钥'],
        summary: '添加 SSH 公钥（OpenSSH 格式一行：ed25519、RSA ≥ 2048 位或 ECDSA）',
        security: [{ bearer: [] }],
        body: addPubKeyBody,
        response: { 200: okEnvelope(pubKeyItem) },
      },
    },
    async (req) => ok(await keys.add(ownerOf(req), req.body)),
  );

  app.post(
    '/api/v1/pub_key/delete',
    { onRequest: app.requireUser, schema: { tags: ['SSH 公钥'], summary: '删除 SSH 公钥', security: [{ bearer: [] }], body: deletePubKeyBody, response: { 200: okEnvelope(z.null()) } } },
    async (req) => {
      await keys.remove(ownerOf(req), req.body.id);
      return ok(null);
    },
  );
}
