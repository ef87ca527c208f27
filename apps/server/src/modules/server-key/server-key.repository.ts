import { eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { serverKeys } from '../../db/schema/server-key.ts';
import type { SharedKeyRecord, SharedKeyStore } from '../../lib/rsa-keys.ts';

/** The server_keys table as the SharedKeyStore of lib/rsa-keys.ts: first writer wins, everyone reads the winner. */
export function createServerKeyRepository(db: DbOrTx): SharedKeyStore {
  return {
    async claim(name: string, candidate: SharedKeyRecord): Promise<SharedKeyRecord> {
      await db.insert(serverKeys).values({ name, ...candidate }).onConflictDoNothing({ target: serverKeys.name });
      const [row] = await db.select().from(serverKeys).where(eq(serverKeys.name, name));
      if (!row) throw new Error(`server_keys: ${name} vanished right after it was written`);
      return { publicKeyPem: row.publicKeyPem, privateKey: row.privateKey, privateKeyFormat: row.privateKeyFormat };
    },
  };
}
