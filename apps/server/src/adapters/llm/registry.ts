/**
 * Built upstream adapters by upstream id (issue #9): built on first use from the stored settings,
 * rebuilt — the old one closed — when the settings' `version` changes, closed when forgotten.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config.ts';
import { createEmbeddedUpstream, defaultLlmThreads, type EmbeddedLog } from './embedded.ts';
import { bundledModelPath, ensureBundledWeights, type WeightsLog } from './weights.ts';
import { createOpenAiUpstream } from './openai.ts';
import type { LlmUpstream, UpstreamConfig, UpstreamRegistry } from './port.ts';

export type UpstreamRegistryDeps = {
  /** GGUF of embedded upstreams whose modelPath is '' (LLM_MODEL_PATH, else the bundled SmolLM2). */
  defaultModelPath: string;
  /** CPU threads of the embedded runtime (LLM_THREADS; the machine's cores when unset). */
  threads?: number;
  log?: EmbeddedLog;
  /** What openai upstreams call (tests may inject); the global fetch otherwise. */
  fetch?: typeof fetch;
};

export function createUpstreamRegistry(deps: UpstreamRegistryDeps): UpstreamRegistry {
  const built = new Map<number, { version: string; upstream: LlmUpstream }>();

  const closeQuietly = (id: number, upstream: LlmUpstream) =>
    upstream.close().catch((err: unknown) => deps.log?.warn({ upstreamId: id, err: err instanceof Error ? err.message : String(err) }, 'llm upstream: close failed'));

  const build = (config: UpstreamConfig): LlmUpstream => {
    switch (config.kind) {
      case 'openai':
        return createOpenAiUpstream(config, { fetch: deps.fetch });
      case 'embedded':
        return createEmbeddedUpstream(config, { defaultModelPath: deps.defaultModelPath, threads: deps.threads, log: deps.log });
      default:
        throw new Error(`unknown upstream kind: ${String((config as { kind: unknown }).kind)}`);
    }
  };

  return {
    get(config) {
      const current = built.get(config.id);
      if (current && current.version === config.version) return current.upstream;
      const upstream = build(config);
      built.set(config.id, { version: config.version, upstream });
      // calls already streaming from the old adapter keep their own reference; it is freed now
      if (current) void closeQuietly(config.id, current.upstream);
      return upstream;
    },
    async forget(upstreamId) {
      const current = built.get(upstreamId);
      built.delete(upstreamId);
      if (current) await closeQuietly(upstreamId, current.upstream);
    },
    async closeAll() {
      const all = [...built.entries()];
      built.clear();
      await Promise.all(all.map(([id, b]) => closeQuietly(id, b.upstream)));
    },
  };
}

/** The embedded runtime's settings from the configuration: LLM_MODEL_PATH, else the bundled SmolLM2; LLM_THREADS. */
export function embeddedSettings(config: Pick<Config, 'LLM_MODEL_PATH' | 'LLM_THREADS' | 'dataDir'>): { defaultModelPath: string; threads: number } {
  return {
    defaultModelPath: config.LLM_MODEL_PATH ? path.resolve(config.LLM_MODEL_PATH) : bundledModelPath(config.dataDir),
    threads: config.LLM_THREADS ?? defaultLlmThreads(),
  };
}

/**
 * Start-up (LLM_EMBEDDED=on): makes sure the embedded model's weights are there — the bundled
 * SmolLM2 is fetched once (checksummed), an LLM_MODEL_PATH must exist. Never throws: a failure is
 * logged as a warning naming the cause; embedded calls then answer 'unavailable' until it is fixed.
 */
export async function ensureEmbeddedWeights(config: Pick<Config, 'LLM_MODEL_PATH' | 'dataDir'>, log: WeightsLog): Promise<boolean> {
  if (config.LLM_MODEL_PATH) {
    const file = path.resolve(config.LLM_MODEL_PATH);
    if (fs.existsSync(file)) return true;
    log.warn({ file }, `embedded model: LLM_MODEL_PATH ${file} does not exist; the server starts without the embedded model`);
    return false;
  }
  try {
    await ensureBundledWeights({ dataDir: config.dataDir, log });
    return true;
  } catch (err) {
    log.warn(
      { err: err instanceof Error ? err.message : String(err) },
      `embedded model: the bundled weights could not be fetched (${err instanceof Error ? err.message : String(err)}); the server starts without the embedded model — run npm run llm:fetch, set LLM_MODEL_PATH, or LLM_EMBEDDED=off`,
    );
    return false;
  }
}
