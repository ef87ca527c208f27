import type { PubKeyItem } from '@suanli/contract/ssh-key';
import type { SshKeyRow } from './ssh-key.repository.ts';

/** Row -> list item; the key material itself is not sent back (the user has it). */
export function presentSshKey(row: SshKeyRow): PubKeyItem {
  return { id: row.id, name: row.name, type: row.type, fingerprint: row.fingerprint, createdAt: row.createdAt.toISOString() };
}
