import crypto from 'node:crypto';
import { SSH_KEY_TYPES } from '@suanli/contract/ssh-key';

export type SshKeyType = (typeof SSH_KEY_TYPES)[number];

export type ParsedPublicKey = {
  type: SshKeyType;
  /** The wire-format key blob (RFC 4253 §6.6). */
  blob: Buffer;
  /** "<type> <base64>": the key as stored and written to authorized_keys (no comment). */
  line: string;
  comment: string;
  /** "SHA256:<base64 without padding>", as `ssh-keygen -lf` prints it. */
  fingerprint: string;
  /** Key size in bits as ssh-keygen reports it (RSA modulus, curve size, 256 for ed25519). */
  bits: number;
};

/** Why a key line was refused; the message is shown to the user as is. */
export class SshKeyFormatError extends Error {}

const MIN_RSA_BITS = 2048;
const MAX_RSA_BITS = 16_384;
const CURVES: Record<string, { curve: string; nodeCurve: string; pointBytes: number; bits: number }> = {
  'ecdsa-sha2-nistp256': { curve: 'nistp256', nodeCurve: 'P-256', pointBytes: 32, bits: 256 },
  'ecdsa-sha2-nistp384': { curve: 'nistp384', nodeCurve: 'P-384', pointBytes: 48, bits: 384 },
  'ecdsa-sha2-nistp521': { curve: 'nistp521', nodeCurve: 'P-521', pointBytes: 66, bits: 521 },
};

/** Reads SSH wire-format strings (uint32 length + bytes) off a blob, refusing anything short. */
class BlobReader {
  private off = 0;
  constructor(private readonly buf: Buffer) {}
  string(): Buffer {
    if (this.off + 4 > this.buf.length) throw new SshKeyFormatError('公钥数据不完整');
    const len = this.buf.readUInt32BE(this.off);
    this.off += 4;
    if (len > this.buf.length - this.off) throw new SshKeyFormatError('公钥数据不完整');
    const out = this.buf.subarray(this.off, this.off + len);
    this.off += len;
    return out;
  }
  done(): boolean {
    return this.off === this.buf.length;
  }
}

/** An unsigned mpint (RFC 4251 §5) without its sign byte; refuses negative numbers. */
function unsignedMpint(b: Buffer): Buffer {
  if (b.length === 0) return b;
  if (b[0]! & 0x80) throw new SshKeyFormatError('公钥数据无效');
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  return b.subarray(i);
}

const b64url = (b: Buffer) => b.toString('base64url');

/** The SHA256 fingerprint of a key blob, in ssh-keygen's format. */
export function fingerprintOf(blob: Buffer): string {
  return `SHA256:${crypto.createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/**
 * Checks the blob's inner structure and that it is a real key of its type: Node's crypto must
 * accept it (the ECDSA point must lie on the curve), the RSA modulus must be 2048 bits or more.
 */
function verifyBlob(type: SshKeyType, blob: Buffer): number {
  const r = new BlobReader(blob);
  const inner = r.string().toString('latin1');
  if (inner !== type) throw new SshKeyFormatError(`公钥类型与内容不符：声明为 ${type}，内容是 ${inner.slice(0, 40) || '空'}`);
  let bits: number;
  try {
    if (type === 'ssh-ed25519') {
      const pk = r.string();
      if (pk.length !== 32) throw new SshKeyFormatError('ed25519 公钥长度不正确');
      crypto.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64url(pk) }, format: 'jwk' });
      bits = 256;
    } else if (type === 'ssh-rsa') {
      const e = unsignedMpint(r.string());
      const n = unsignedMpint(r.string());
      bits = n.length ? (n.length - 1) * 8 + (32 - Math.clz32(n[0]!)) : 0;
      if (bits < MIN_RSA_BITS) throw new SshKeyFormatError(`RSA 公钥长度为 ${bits} 位，至少需要 ${MIN_RSA_BITS} 位`);
      if (bits > MAX_RSA_BITS) throw new SshKeyFormatError(`RSA 公钥长度为 ${bits} 位，最多支持 ${MAX_RSA_BITS} 位`);
      if (e.length === 0 || e.length > 8 || !(e[e.length - 1]! & 1)) throw new SshKeyFormatError('RSA 公钥指数无效');
      crypto.createPublicKey({ key: { kty: 'RSA', n: b64url(n), e: b64url(e) }, format: 'jwk' });
    } else {
      const c = CURVES[type]!;
      const curve = r.string().toString('latin1');
      if (curve !== c.curve) throw new SshKeyFormatError(`ECDSA 公钥曲线与类型不符：${curve.slice(0, 40)}`);
      const q = r.string();
      if (q.length !== 1 + 2 * c.pointBytes || q[0] !== 0x04) throw new SshKeyFormatError('ECDSA 公钥数据无效');
      const x = q.subarray(1, 1 + c.pointBytes);
      const y = q.subarray(1 + c.pointBytes);
      crypto.createPublicKey({ key: { kty: 'EC', crv: c.nodeCurve, x: b64url(x), y: b64url(y) }, format: 'jwk' });
      bits = c.bits;
    }
  } catch (err) {
    if (err instanceof SshKeyFormatError) throw err;
    throw new SshKeyFormatError('公钥数据无效，不是有效的密钥');
  }
  if (!r.done()) throw new SshKeyFormatError('公钥数据末尾有多余内容');
  return bits;
}

/**
 * Parses one OpenSSH public key line ("<type> <base64> [comment]", as in id_ed25519.pub).
 * Refuses several lines, private keys, DSA and other types, bad base64 and blobs that are not
 * really a key of the declared type, each with a Chinese message naming the problem.
 */
export function parsePublicKey(input: string): ParsedPublicKey {
  const text = input.trim();
  if (!text) throw new SshKeyFormatError('请输入公钥');
  if (/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(text) || text.startsWith('PuTTY-User-Key-File')) {
    throw new SshKeyFormatError('这是私钥，请勿上传私钥；请粘贴公钥（.pub 文件的内容）');
  }
  if (text.startsWith('---- BEGIN SSH2 PUBLIC KEY') || text.startsWith('-----BEGIN')) {
    throw new SshKeyFormatError('请使用 OpenSSH 格式的公钥（以 ssh-ed25519、ssh-rsa 或 ecdsa-sha2- 开头的一行）');
  }
  if (/[\r\n]/.test(text)) throw new SshKeyFormatError('一次只能添加一个公钥（只能有一行）');
  const parts = text.split(/[ \t]+/);
  const [type = '', data = '', ...rest] = parts;
  if (type === 'ssh-dss') throw new SshKeyFormatError('不支持 DSA 公钥，请使用 ed25519、RSA（至少 2048 位）或 ECDSA 公钥');
  if (!(SSH_KEY_TYPES as readonly string[]).includes(type)) {
    throw new SshKeyFormatError('公钥格式不正确：应以 ssh-ed25519、ssh-rsa 或 ecdsa-sha2-nistp256/384/521 开头');
  }
  if (!data) throw new SshKeyFormatError('公钥内容缺失');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(data) || data.length % 4 !== 0) throw new SshKeyFormatError('公钥内容不是有效的 Base64 编码');
  const blob = Buffer.from(data, 'base64');
  const bits = verifyBlob(type as SshKeyType, blob);
  const comment = rest.join(' ').slice(0, 256);
  return { type: type as SshKeyType, blob, line: `${type} ${blob.toString('base64')}`, comment, fingerprint: fingerprintOf(blob), bits };
}
