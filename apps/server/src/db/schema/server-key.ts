import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Key pairs every replica must agree on (the request-encryption RSA key, `request-rsa`): the first
 * replica to start inserts its key, the others read it back. `private_key` is null when the key is
 * configured by file (RSA_PRIVATE_KEY_FILE), so only its public half is recorded to compare.
 */
export const serverKeys = pgTable('server_keys', {
  name: text('name').primaryKey(),
  publicKeyPem: text('public_key_pem').notNull(),
  /** PKCS#8 PEM ('plain'), or base64(iv | tag | AES-256-GCM ciphertext) under KEY_ENCRYPTION_SECRET ('aes-256-gcm'). */
  privateKey: text('private_key'),
  privateKeyFormat: text('private_key_format', { enum: ['file', 'plain', 'aes-256-gcm'] }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});
