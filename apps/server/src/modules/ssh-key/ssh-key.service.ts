import { MAX_SSH_KEYS, type PubKeyItem } from '@suanli/contract/ssh-key';
import type { z } from 'zod';
import type { addPubKeyBody } from '@suanli/contract/ssh-key';
import type { Db } from '../../db/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound } from '../../lib/errors.ts';
import { createSshKeyRepository } from './ssh-key.repository.ts';
import { presentSshKey } from './ssh-key.presenter.ts';
import { parsePublicKey, SshKeyFormatError } from './ssh-key.parser.ts';

type Owner = { tenantId: number; userId: number };
export const DUPLICATE_KEY = '该公钥已添加过，请勿重复添加';

/**
 * A user's SSH public keys (/center/ssh/control). Any of them logs in to any of the user's running
 * instances through the SSH gateway (ssh/gateway.ts), which reads them via `linesOf`.
 */
export function createSshKeyService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  const repo = createSshKeyRepository(db);

  return {
    async list(owner: Owner): Promise<PubKeyItem[]> {
      return (await repo.listByUser(owner.tenantId, owner.userId)).map(presentSshKey);
    },

    /** Validates the key line fully before anything is written; duplicates (same fingerprint) are 409. */
    async add(owner: Owner, input: z.infer<typeof addPubKeyBody>): Promise<PubKeyItem> {
      let key;
      try {
        key = parsePublicKey(input.key);
      } catch (err) {
        if (err instanceof SshKeyFormatError) throw badRequest(err.message);
        throw err;
      }
      const name = (input.name?.trim() || key.comment.trim() || key.type).slice(0, 32);
      return db.transaction(async (tx) => {
        const r = createSshKeyRepository(tx);
        await r.lockUser(owner.userId);
        if (await r.findByFingerprint(owner.userId, key.fingerprint)) throw conflict(DUPLICATE_KEY);
        if ((await r.countByUser(owner.userId)) >= MAX_SSH_KEYS) throw conflict(`最多只能添加 ${MAX_SSH_KEYS} 个公钥，请先删除不用的公钥`);
        const row = await r.insert({ tenantId: owner.tenantId, userId: owner.userId, name, type: key.type, publicKey: key.line, fingerprint: key.fingerprint, createdAt: clock() });
        if (!row) throw conflict(DUPLICATE_KEY);
        return presentSshKey(row);
      });
    },

    /** A foreign or missing id answers 404 alike. */
    async remove(owner: Owner, id: number): Promise<void> {
      if (!(await repo.deleteOwn(owner.tenantId, owner.userId, id))) throw notFound('公钥不存在');
    },

    /** The user's keys as OpenSSH lines ("<type> <base64>"): for SshTarget.publicKeys and authorized_keys. */
    async linesOf(owner: Owner): Promise<string[]> {
      return (await repo.listByUser(owner.tenantId, owner.userId)).map((r) => r.publicKey);
    },
  };
}
export type SshKeyService = ReturnType<typeof createSshKeyService>;
