import crypto from 'node:crypto';
import { z } from 'zod';
import type { FastifyRequest } from 'fastify';
import { okEnvelope } from '@suanli/contract/envelope';
import { ErrorReason } from '@suanli/contract/errors';
import { AppError, badRequest } from '../../lib/errors.ts';
import type { RsaKeys } from '../../lib/rsa-keys.ts';
import type { App } from '../route-types.ts';
import { ok } from '../envelope.ts';

/**
 * SPEC §5/§9 encrypted calls. For a route with `config: { encrypted: true }`:
 *
 *   request   Content-Type text/plain; body = base64(AES-256-ECB/PKCS7(JSON, K));
 *             header `encrypt-key` = base64(RSA-OAEP-SHA256(K, server public key));
 *             K = 32 random ASCII letters/digits, used as the 32 key bytes.
 *   answer    the envelope (success or error) encrypted the same way with the same K, as
 *             text/plain, with the request's `encrypt-key` header echoed so the client knows to
 *             decrypt with the K it kept.
 *
 * The body is decrypted by the text/plain content-type parser, so the route's zod schema validates
 * the plain JSON like on any other route. Other routes refuse text/plain bodies (415).
 */
export const ENCRYPT_HEADER = 'encrypt-key';
export const PUBLIC_KEY_PATH = '/api/v1/crypto/public-key';

const AES_KEY = /^[A-Za-z0-9]{32}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const EncryptionMessages = {
  missingKey: '该接口要求加密传输：请求缺少加密密钥（encrypt-key）',
  plainBody: '该接口要求加密传输：请求体须为加密文本（Content-Type: text/plain）',
  invalidKey: '加密密钥无效，请刷新页面后重试',
  malformedKey: '加密密钥格式不正确：应为 32 位字母或数字',
  emptyBody: '加密请求体不能为空',
  notBase64: '加密请求体不是合法的 Base64 文本',
  decryptFailed: '请求体解密失败，请确认使用了与加密密钥相同的密钥加密',
  notJson: '解密后的请求体不是合法的 JSON',
  unsupportedType: '不支持的请求内容类型，请使用 application/json',
} as const;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once a flagged route's `encrypt-key` gave a valid AES key: the answer leaves encrypted with it. */
    encryption: { aesKey: Buffer; header: string } | null;
  }
}

const encryptionRequired = (msg: string) => badRequest(msg, ErrorReason.EncryptionRequired);

const isFlagged = (req: FastifyRequest) => req.routeOptions.config.encrypted === true;

const mediaType = (req: FastifyRequest) => (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

export function aesEncrypt(plain: string, key: Buffer): string {
  const cipher = crypto.createCipheriv('aes-256-ecb', key, null);
  return Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]).toString('base64');
}

/** Throws the 400 naming the first stage that failed: base64, AES/PKCS7, UTF-8 or JSON. */
function decryptBody(body: string, key: Buffer): unknown {
  const text = body.trim();
  if (!text) throw badRequest(EncryptionMessages.emptyBody);
  if (!BASE64.test(text)) throw badRequest(EncryptionMessages.notBase64);
  let plain: string;
  try {
    const decipher = crypto.createDecipheriv('aes-256-ecb', key, null);
    const bytes = Buffer.concat([decipher.update(Buffer.from(text, 'base64')), decipher.final()]);
    plain = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw badRequest(EncryptionMessages.decryptFailed);
  }
  try {
    // Same refusal of prototype-poisoning keys as Fastify's own JSON parser.
    return JSON.parse(plain, (k, v: unknown) => {
      if (k === '__proto__' || (k === 'constructor' && typeof v === 'object' && v !== null && 'prototype' in v)) throw new SyntaxError('forbidden key');
      return v;
    });
  } catch {
    throw badRequest(EncryptionMessages.notJson);
  }
}

export function registerEncryption(app: App, keys: RsaKeys): void {
  if (keys.source === 'memory') {
    app.log.warn('RSA key pair generated in memory only: set RSA_PRIVATE_KEY_FILE or DATA_DIR so it survives restarts and is shared by replicas');
  }

  /** The AES key carried by `encrypt-key`, or a 400 that says what is wrong with it. */
  const recoverAesKey = (header: string | string[] | undefined): Buffer => {
    if (typeof header !== 'string' || !BASE64.test(header.trim())) throw badRequest(EncryptionMessages.invalidKey);
    const sealed = Buffer.from(header.trim(), 'base64');
    if (sealed.length !== keys.modulusBytes) throw badRequest(EncryptionMessages.invalidKey);
    let opened: Buffer;
    try {
      opened = keys.decrypt(sealed);
    } catch {
      throw badRequest(EncryptionMessages.invalidKey);
    }
    const text = opened.toString('latin1');
    if (!AES_KEY.test(text)) throw badRequest(EncryptionMessages.malformedKey);
    return Buffer.from(text, 'latin1');
  };

  app.decorateRequest('encryption', null);

  // Before any parsing: a flagged route told plainly what it needs, whatever the body holds.
  app.addHook('preParsing', async (req, _reply, payload) => {
    if (!isFlagged(req)) return payload;
    if (req.headers[ENCRYPT_HEADER] === undefined) throw encryptionRequired(EncryptionMessages.missingKey);
    if (mediaType(req) !== 'text/plain') throw encryptionRequired(EncryptionMessages.plainBody);
    return payload;
  });

  // Fastify's built-in text/plain parser would hand any route a string body; only flagged routes
  // take text/plain, and theirs is decrypted into the JSON value the schema then validates.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, async (req: FastifyRequest, body: string) => {
    if (req.is404) return body; // let the not-found handler answer 404, not 415
    if (!isFlagged(req)) throw new AppError(415, EncryptionMessages.unsupportedType);
    const header = req.headers[ENCRYPT_HEADER];
    const aesKey = recoverAesKey(header);
    // From here on the client can read an encrypted answer, so even the body's errors leave encrypted.
    req.encryption = { aesKey, header: String(header).trim() };
    return decryptBody(body, aesKey);
  });

  // A flagged route reached without a decrypted body (no body at all) is refused too.
  app.addHook('preValidation', async (req) => {
    if (isFlagged(req) && !req.encryption) throw encryptionRequired(EncryptionMessages.plainBody);
  });

  // Added before @fastify/compress's route-level onSend, so the ciphertext is what gets compressed.
  app.addHook('onSend', async (req, reply, payload) => {
    const enc = req.encryption;
    if (!enc || payload === null || payload === undefined) return payload;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) {
      // Envelopes are serialized strings; a stream here is a programming error, never sent in clear.
      throw new Error('encrypted route answered with a stream');
    }
    reply.header(ENCRYPT_HEADER, enc.header);
    reply.header('content-type', 'text/plain; charset=utf-8');
    return aesEncrypt(payload.toString(), enc.aesKey);
  });

  app.get(
    PUBLIC_KEY_PATH,
    {
      schema: {
        tags: ['加密'],
        summary: '获取请求加密公钥',
        description:
          'RSA-2048 公钥（SPKI PEM）。加密接口：随机 32 位字母数字作为 AES-256 密钥，AES-ECB/PKCS7 加密 JSON 请求体并 Base64，Content-Type 为 text/plain；' +
          '用本公钥以 RSA-OAEP（SHA-256）加密该密钥并 Base64，放在请求头 encrypt-key。应答以同一 AES 密钥加密，并带回 encrypt-key 响应头。',
        response: { 200: okEnvelope(z.object({ publicKey: z.string() })) },
      },
    },
    async () => ok({ publicKey: keys.publicKeyPem }),
  );
}
